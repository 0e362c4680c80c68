// A hostile-request fuzzer over every surface: the curl surface, MCP, the REST API and the public
// pages. Seeded (the same seed sends the same requests), bounded by a request count and by time.
//
//   npx node bench/fuzz.ts                              10,000 requests (or 300 s), embedded PGlite
//   npx node bench/fuzz.ts --requests=20000 --seconds=600 --seed=7 --concurrency=8
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx node bench/fuzz.ts   on a fresh database there
//   npm run bench -- --only=fuzz                        the same, through the bench runner
//
// It starts its own Folio as `npm start` does (core/main.ts in a child process, the real logger,
// LOG_LEVEL=info) on a temp data dir, or on a fresh database of the DATABASE_URL server, and keeps
// every line the process writes to stdout and stderr. It makes its own users and tokens (an API
// token, a read-only one, a minted one, an expired one, another user's, garbage ones), MCP sessions
// and notes, then sends malformed JSON, wrong types, huge and deeply nested bodies, unknown names,
// path tricks, bad and foreign tokens, bad headers and media types, and over raw sockets bad chunked
// encoding, bodies shorter than their Content-Length and broken request lines and headers.
//
// It reports the answers by status, every 5xx (with the request that got it), the requests that
// got no answer, and the log lines that are not JSON. A clean run has 0 5xx and 0 non-JSON lines
// (the exit code is 1 otherwise). test/integration/fuzz.test.ts runs a few hundred of the same
// requests in-process on every `npm test`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { assertNode24, progress, removeDir, tempDir } from './util.ts';

// --- PRNG ------------------------------------------------------------------------------------------

/** mulberry32: small, seeded, the same on every machine. */
export class Prng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

// --- what is fuzzed ----------------------------------------------------------------------------------

export interface FuzzTokens {
  admin: string;
  user: string;
  readOnly: string;
  minted: string;
  expired: string;
  other: string;
  /** A note of `user`, and one of `other` (which `user` must never reach). */
  noteId: string;
  foreignNoteId: string;
  /** MCP session ids made at setup (user's and admin's). */
  sessions: string[];
  /** Every tool function, as [namespace, function]. */
  functions: Array<[string, string]>;
  /** REST operations from the OpenAPI document: [method, path template]. */
  operations: Array<[string, string]>;
}

export interface FuzzCase {
  surface: 'curl' | 'mcp' | 'rest' | 'pages' | 'raw';
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent as is over a socket (then method/path/headers only describe it). */
  raw?: Buffer;
  /** Raw only: end our side after writing (a client that gave up sending). */
  halfClose?: boolean;
}

const ARG_NAMES = [
  'id', 'q', 'title', 'body', 'tags', 'tag', 'limit', 'cursor', 'version', 'expected_version', 'heading', 'text', 'format', 'group_by',
  'from', 'to', 'ttl_seconds', 'scopes', 'email', 'name', 'roles', 'namespace', 'enabled', 'user_id', 'max_bytes_llm', 'offset',
  'save_as_note', 'source', 'position', 'line', 'note_id', 'item', 'days', 'trashed', 'path', '__proto__', 'constructor',
] as const; // prettier-ignore

const STRINGS = [
  '', ' ', 'a', 'ok', '0', '-1', 'null', 'true', '[]', '{}', '../../etc/passwd', '%00', '\u0000', '\ud800', '\udfff', '😀', '会议记录',
  '<script>alert(1)</script>', "' or 1=1 --", '"; drop table notes; --', '$(rm -rf /)', '\r\nX-Injected: 1', 'a\nb', '#', '# heading',
  '- [ ] item', '2026-13-45', '2026-02-30', '1970-01-01', 'not-a-date', '00000000-0000-0000-0000-000000000000', 'zzzz',
  'markdown', 'pdf', 'html', 'docx', 'day', 'week', 'tag', 'month', 'notes:read', 'notes:*', '*', 'admin', 'folio_api_x', 'é'.repeat(300),
] as const; // prettier-ignore

function value(r: Prng, depth = 0): unknown {
  const k = r.int(0, depth > 2 ? 6 : 9);
  if (k === 0) return r.pick(STRINGS);
  if (k === 1) return r.pick([0, -1, 1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1.5, 1e308, -0, 3600, 3601, 100, 101, 1e6]);
  if (k === 2) return r.chance(0.5);
  if (k === 3) return null;
  if (k === 4) return 'x'.repeat(r.pick([200, 501, 1025, 10_000, 70_000]));
  if (k === 5) return randomText(r, r.int(1, 40));
  if (k === 6) return r.pick(STRINGS) + String(r.int(0, 99));
  if (k === 7) return Array.from({ length: r.int(0, 5) }, () => value(r, depth + 1));
  if (k === 8) return object(r, depth + 1);
  return Array.from({ length: r.int(30, 200) }, (_, i) => `t${i}`);
}

function object(r: Prng, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = r.int(0, 5); i > 0; i--) {
    const key = r.chance(0.85) ? r.pick(ARG_NAMES) : randomText(r, r.int(0, 12));
    Object.defineProperty(o, key, { value: value(r, depth), enumerable: true, configurable: true, writable: true });
  }
  return o;
}

function randomText(r: Prng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(r.chance(0.8) ? r.int(0x20, 0x7e) : r.int(0, 0xffff));
  return s;
}

/** Percent-encodes any text (a lone surrogate becomes U+FFFD, as a browser would send it). */
function encode(s: string): string {
  return encodeURIComponent(s.toWellFormed());
}

function nested(depth: number, open: string, close: string, leaf = '1'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

/** A body: mostly JSON objects of (wrong) arguments, often malformed, now and then huge or deep. */
function body(r: Prng, known?: { id?: string }): Buffer {
  const k = r.int(0, 19);
  if (k <= 8) {
    const o = object(r);
    if (known?.id && r.chance(0.5)) o['id'] = known.id;
    return Buffer.from(JSON.stringify(o));
  }
  if (k === 9)
    return Buffer.from(
      r.pick(['{', '{"a":}', "{'a':1}", '{"a":1,}', '[1,2', 'NaN', 'undefined', '{"a":1}{"b":2}', '\u0000{}', ')]}', '{"a":"\\u12"}']),
    );
  if (k === 10) return Buffer.from(r.pick(['[]', '""', 'null', '1', 'true', '"text"', '[{}]', '{}']));
  if (k === 11) return Buffer.from(nested(r.pick([33, 40, 200, 5000]), '{"a":', '}'));
  if (k === 12) return Buffer.from(nested(r.pick([33, 100, 20_000]), '[', ']'));
  if (k === 13)
    return Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
  if (k === 14) return Buffer.from(`\ufeff${JSON.stringify(object(r))}`);
  if (k === 15 && r.chance(0.15)) return Buffer.from(JSON.stringify({ body: 'x'.repeat(r.pick([1_048_000, 1_100_000, 2_000_000])) }));
  if (k === 16) return Buffer.from(JSON.stringify({ title: 'T', body: '- [ ] a\n'.repeat(r.int(1, 3000)), tags: ['a'] }));
  if (k === 17) return Buffer.from('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"id":"' + (known?.id ?? '') + '"}');
  if (k === 18) return Buffer.from(JSON.stringify(value(r)));
  return Buffer.from('');
}

function bearer(r: Prng, t: FuzzTokens): Record<string, string> {
  const k = r.int(0, 19);
  const token =
    k <= 7
      ? t.user
      : k === 8
        ? t.admin
        : k === 9
          ? t.readOnly
          : k === 10
            ? t.minted
            : k === 11
              ? t.expired
              : k === 12
                ? t.other
                : k === 13
                  ? `${t.user.slice(0, -1)}${t.user.endsWith('a') ? 'b' : 'a'}` // checksum broken
                  : k === 14
                    ? r.pick(['folio_api_', 'folio_mnt_abc', 'x', 'folio_api_' + 'A'.repeat(500), 'Bearer', 'null'])
                    : undefined;
  if (k === 15) return { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` };
  if (k === 16)
    return { authorization: r.pick(['Bearer', 'Bearer ', 'bearer  x', `Bearer ${t.user} ${t.user}`, 'Token abc', 'x'.repeat(8000)]) };
  if (k >= 17) return {};
  return { authorization: `${r.chance(0.9) ? 'Bearer' : 'bearer'} ${token}` };
}

function contentType(r: Prng): Record<string, string> {
  const k = r.int(0, 11);
  if (k <= 5) return { 'content-type': 'application/json' };
  if (k === 6) return {};
  return {
    'content-type': r.pick([
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'multipart/form-data; boundary=x',
      'application/json;;;',
      'Application/JSON',
      '*/*',
      'application/merge-patch+json',
    ]),
    ...(r.chance(0.2) ? { 'content-encoding': r.pick(['gzip', 'br', 'identity', 'x-unknown']) } : {}),
  };
}

function extraHeaders(r: Prng): Record<string, string> {
  const h: Record<string, string> = {};
  if (r.chance(0.1)) h['host'] = r.pick(['evil.example', 'localhost', '127.0.0.1:1', '[::1]', 'a'.repeat(300), '']);
  if (r.chance(0.1)) h['origin'] = r.pick(['http://evil.example', 'null', 'file://', 'http://localhost:3000']);
  if (r.chance(0.1)) h['accept'] = r.pick(['text/html', 'application/json', 'text/event-stream', '*/*', 'x/y', 'text/html;q=0, */*;q=0']);
  if (r.chance(0.1)) h['x-request-id'] = r.pick(['abc', 'x'.repeat(500), '../../', '\u00ff', 'id with spaces']);
  if (r.chance(0.05)) h['if-match'] = r.pick(['"1"', '"abc"', '*', 'W/"1"', '"-1"', '"99999999999999999999"', '1']);
  if (r.chance(0.05)) h['mcp-protocol-version'] = r.pick(['2025-06-18', '1999-01-01', 'x', '']);
  if (r.chance(0.03)) h['range'] = 'bytes=0-10';
  if (r.chance(0.03)) h['expect'] = '100-continue';
  return h;
}

function idValue(r: Prng, t: FuzzTokens): string {
  return r.pick([
    t.noteId,
    t.foreignNoteId,
    '00000000-0000-4000-8000-000000000000',
    'not-a-uuid',
    '..',
    '%2e%2e',
    '1',
    '-1',
    'a'.repeat(300),
    "'; select 1; --",
    '%00',
    '%ff',
    encodeURIComponent('会议'),
  ]);
}

const PAGE_PATHS = [
  '/health', '/curl/docs', '/curl/openapi.json', '/api/v1/docs', '/api/v1/redoc', '/api/v1/openapi.json', '/api/v1/problems',
  '/api/v1/problems/not_found', '/api/v1/problems/nope', '/api/v1/problems/..%2f..%2fpackage.json', '/api/v1/assets/redoc.standalone.js',
  '/assets/swagger-ui/swagger-ui.css', '/assets/swagger-ui/..%2f..%2f..%2fpackage.json', '/assets/swagger-ui/%2e%2e%2fconfig%2fdefault.json',
  '/assets/swagger-ui/../../etc/passwd', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server', '/', '/favicon.ico', '//curl//whoami', '/CURL/WHOAMI', '/curl/whoami/', '/curl/whoami;x=1',
  '/curl/whoami?x=%ff%fe', '/curl/whoami?token=folio_api_x', '/%2e%2e/%2e%2e/etc/passwd', '/api/v1/', '/api/v2/notetaker/notes',
  '/api/v1/notetaker', '/api/v1/notetaker/notes/', '/mcp/', '/mcp/x', '/curl/help/%00', '/curl/skill/notetaker/%2e%2e%2f%2e%2e%2fREADME',
  '/curl/help/notetaker/search?examples=maybe', '/curl/help?examples=true&examples=false', '/curl/call', '/curl/call/', '/curl/call/x',
] as const; // prettier-ignore

function curlCase(r: Prng, t: FuzzTokens): FuzzCase {
  const [ns, fn] = r.chance(0.85)
    ? r.pick(t.functions)
    : [
        r.pick(['nope', 'notetaker', 'admin', 'NOTETAKER', '..', 'a'.repeat(40)]),
        r.pick(['x', '__proto__', 'constructor', 'toString', '..%2f', 'search ']),
      ];
  const k = r.int(0, 9);
  if (k <= 6) {
    return {
      surface: 'curl',
      what: `call ${ns}.${fn}`,
      method: r.chance(0.93) ? 'POST' : r.pick(['GET', 'PUT', 'DELETE', 'QUERY', 'PATCH', 'OPTIONS', 'HEAD']),
      path: `/curl/call/${encode(ns)}/${encode(fn)}${r.chance(0.05) ? '?max_bytes_llm=1' : ''}`,
      headers: { ...bearer(r, t), ...contentType(r), ...extraHeaders(r) },
      body: body(r, { id: idValue(r, t) }),
    };
  }
  const p = r.pick([
    '/curl',
    '/curl/whoami',
    '/curl/help',
    `/curl/help/${ns}`,
    `/curl/help/${ns}/${fn}?examples=true`,
    '/curl/skill',
    `/curl/skill/${ns}`,
    `/curl/skill/${ns}/how_it_works`,
    `/curl/skill/${ns}/${encodeURIComponent('../../../package.json')}`,
  ]);
  const method = r.pick(['GET', 'GET', 'GET', 'QUERY', 'HEAD', 'POST', 'OPTIONS']);
  return {
    surface: 'curl',
    what: `${method} ${p}`,
    method,
    path: p,
    headers: { ...bearer(r, t), ...(method === 'QUERY' ? contentType(r) : {}), ...extraHeaders(r) },
    ...(method === 'QUERY' || method === 'POST' ? { body: body(r) } : {}),
  };
}

function restCase(r: Prng, t: FuzzTokens): FuzzCase {
  const [opMethod, template] = r.pick(t.operations);
  const p = template.replace(/\{[^}]+\}/g, (m) =>
    m === '{version}' ? r.pick(['1', '0', '-1', 'x', '99999999999', '1.5']) : idValue(r, t),
  );
  const query = r.chance(0.4)
    ? '?' + Array.from({ length: r.int(1, 4) }, () => `${r.pick(ARG_NAMES)}=${encode(String(value(r, 3)).slice(0, 2000))}`).join('&')
    : '';
  const method = r.chance(0.85) ? opMethod : r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'QUERY']);
  const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH' || r.chance(0.1);
  return {
    surface: 'rest',
    what: `${method} ${template}`,
    method,
    path: `/api/v1${p}${query}`,
    headers: { ...bearer(r, t), ...(hasBody ? contentType(r) : {}), ...extraHeaders(r) },
    ...(hasBody ? { body: body(r) } : {}),
  };
}

function mcpCase(r: Prng, t: FuzzTokens): FuzzCase {
  const id = r.pick<unknown>([r.int(1, 1e6), `s${r.int(1, 1e6)}`, null, {}, [], 1.5, -1, 'x'.repeat(2000), true]);
  const [ns, fn] = r.pick(t.functions);
  const k = r.int(0, 13);
  let msg: unknown;
  if (k <= 5)
    msg = {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: r.chance(0.9) ? `${ns}__${fn}` : r.pick(['nope__x', 'x', '', '__', `${ns}__`]),
        arguments: r.chance(0.9) ? object(r) : value(r),
      },
    };
  else if (k === 6)
    msg = {
      jsonrpc: '2.0',
      id,
      method: r.pick(['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list', 'ping', 'completion/complete']),
      params: r.chance(0.7) ? {} : value(r),
    };
  else if (k === 7)
    msg = {
      jsonrpc: '2.0',
      id,
      method: 'resources/read',
      params: {
        uri: r.pick<unknown>([
          'skill://notetaker/how_it_works',
          'skill://../../etc/passwd',
          'file:///etc/passwd',
          1,
          null,
          'skill://',
          'x'.repeat(5000),
        ]),
      },
    };
  else if (k === 8)
    msg = { jsonrpc: '2.0', id, method: 'logging/setLevel', params: { level: r.pick<unknown>(['debug', 'loud', 1, null]) } };
  else if (k === 9)
    msg = {
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: r.chance(0.5) ? { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } : value(r),
    };
  else if (k === 10)
    msg = r.pick<unknown>([
      { jsonrpc: '1.0', id, method: 'ping' },
      { id, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id, method: 42 },
      { jsonrpc: '2.0', id, result: {} },
      { jsonrpc: '2.0', id, error: { code: 1 } },
    ]);
  else if (k === 11) msg = Array.from({ length: r.int(0, 5) }, () => ({ jsonrpc: '2.0', id: r.int(1, 1e6), method: 'ping' }));
  else msg = undefined;
  const payload = msg === undefined ? body(r) : Buffer.from(JSON.stringify(msg));
  const session = r.int(0, 9);
  const headers: Record<string, string> = {
    ...bearer(r, t),
    ...contentType(r),
    accept: r.chance(0.85) ? 'application/json, text/event-stream' : r.pick(['application/json', 'text/event-stream', '*/*', 'text/html']),
    ...(session <= 5
      ? { 'mcp-session-id': r.pick(t.sessions) }
      : session === 6
        ? { 'mcp-session-id': r.pick(['x', randomBytes(16).toString('hex'), '', '../']) }
        : {}),
    ...extraHeaders(r),
  };
  const method = r.chance(0.92) ? 'POST' : r.pick(['DELETE', 'PUT', 'PATCH', 'OPTIONS', 'GET']);
  // A GET with a live session would open the session's standing event stream: not a request that ends.
  if (method === 'GET') delete headers['mcp-session-id'];
  return {
    surface: 'mcp',
    what: `${method} /mcp ${describeMessage(msg)}`,
    method,
    path: '/mcp',
    headers,
    ...(method === 'GET' ? {} : { body: payload }),
  };
}

function describeMessage(msg: unknown): string {
  if (msg === undefined) return 'malformed';
  if (Array.isArray(msg)) return 'batch';
  const m = (msg as { method?: unknown }).method;
  return typeof m === 'string' ? m : JSON.stringify(m ?? null);
}

function pagesCase(r: Prng, t: FuzzTokens): FuzzCase {
  const p = r.pick(PAGE_PATHS);
  const method = r.pick(['GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE']);
  return {
    surface: 'pages',
    what: `${method} ${p}`,
    method,
    path: p,
    headers: { ...(r.chance(0.3) ? bearer(r, t) : {}), ...extraHeaders(r) },
    ...(method === 'POST' ? { body: body(r) } : {}),
  };
}

function rawCase(r: Prng, t: FuzzTokens): FuzzCase {
  const p = r.pick([
    '/api/v1/notetaker/notes',
    '/curl/call/notetaker/create',
    '/mcp',
    '/curl/whoami',
    '/health',
    '/api/v1/notetaker/reports',
  ]);
  const auth = `Authorization: Bearer ${t.user}\r\n`;
  const json = '{"title":"raw","body":"x"}';
  const k = r.int(0, 13);
  const crlf = (s: string) => Buffer.from(s, 'latin1');
  let raw: Buffer;
  let halfClose = false;
  let what: string;
  if (k === 0) {
    what = 'bad chunk size';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${r.pick(['ZZ', '-1', '0x1a', 'ffffffffffffffffff', ' 5'])}\r\n${json}\r\n0\r\n\r\n`,
    );
  } else if (k === 1) {
    what = 'short body';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${json.length + r.int(1, 5000)}\r\n\r\n${json}`,
    );
    halfClose = true;
  } else if (k === 2) {
    what = 'chunked, cut short';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\n{"title":`,
    );
    halfClose = true;
  } else if (k === 3) {
    what = 'broken request line';
    raw = crlf(
      r.pick([
        'GET\r\n\r\n',
        `GET ${p} HTTP/9.9\r\n\r\n`,
        `G@T ${p} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET ${p}\r\n\r\n`,
        '\r\n\r\n\r\n',
        `GET  ${p}  HTTP/1.1\r\n\r\n`,
        'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      ]),
    );
  } else if (k === 4) {
    what = 'broken header';
    raw = crlf(
      `GET ${p} HTTP/1.1\r\nHost: x\r\n${r.pick(['NoColonHere\r\n', 'Bad Header: x\r\n', 'X-A : b\r\n', ' folded: y\r\n', 'X-Nul: a\u0000b\r\n', `X-Big: ${'a'.repeat(20_000)}\r\n`, ':empty\r\n'])}${auth}\r\n`,
    );
  } else if (k === 5) {
    what = 'Content-Length and Transfer-Encoding';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    );
  } else if (k === 6) {
    what = 'two Content-Lengths';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${json.length}\r\nContent-Length: 3\r\n\r\n${json}`,
    );
  } else if (k === 7) {
    what = 'LF line endings';
    raw = crlf(`GET ${p} HTTP/1.1\nHost: x\n${auth.replace('\r\n', '\n')}\n`);
  } else if (k === 8) {
    what = 'headers never finished';
    raw = crlf(`GET ${p} HTTP/1.1\r\nHost: x\r\n${auth}`);
    halfClose = true;
  } else if (k === 9) {
    what = 'pipelined, second malformed';
    raw = crlf(`GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\nQQ\r\n`);
  } else if (k === 10) {
    what = 'bad Content-Length';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${r.pick(['-1', 'abc', '1e3', '99999999999999999999', ''])}\r\n\r\n${json}`,
    );
  } else if (k === 11) {
    what = 'invalid UTF-8 body';
    const b = Buffer.from([0x7b, 0x22, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d]);
    raw = Buffer.concat([
      crlf(`POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`),
      b,
    ]);
  } else if (k === 12) {
    what = 'HTTP/1.0 without Host';
    raw = crlf(`POST ${p} HTTP/1.0\r\n${auth}Content-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
  } else {
    what = 'chunked with a bad trailer';
    raw = crlf(
      `POST ${p} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${json.length.toString(16)}\r\n${json}\r\n0\r\nBad Trailer\r\n\r\n`,
    );
  }
  return { surface: 'raw', what, method: '-', path: p, headers: {}, raw, halfClose };
}

/** The request number `i` of a run seeded with `seed` (the same pair gives the same request). */
export function fuzzCase(seed: number, i: number, t: FuzzTokens): FuzzCase {
  const r = new Prng((seed * 0x9e3779b1) ^ (i * 0x85ebca6b));
  const k = r.int(0, 99);
  if (k < 30) return curlCase(r, t);
  if (k < 52) return mcpCase(r, t);
  if (k < 80) return restCase(r, t);
  if (k < 90) return pagesCase(r, t);
  return rawCase(r, t);
}

// --- sending -----------------------------------------------------------------------------------------

export interface Answer {
  /** 0: no answer (the connection closed, or nothing came in time). */
  status: number;
  error?: string;
}

const TIMEOUT_MS = 20_000;

/** Sends a case: over node:http when it can carry it, as raw bytes otherwise. */
export function send(port: number, c: FuzzCase): Promise<Answer> {
  if (c.raw) return sendRaw(port, c.raw, c.halfClose ?? false);
  return new Promise((resolve) => {
    let req: http.ClientRequest;
    try {
      req = http.request(
        { host: '127.0.0.1', port, method: c.method, path: c.path, headers: c.headers, agent: false, timeout: TIMEOUT_MS },
        (res) => {
          // An event stream opened by a GET stays open: its status is the answer.
          if (c.method === 'GET' && String(res.headers['content-type']).startsWith('text/event-stream')) {
            resolve({ status: res.statusCode ?? 0 });
            res.destroy();
            return;
          }
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
          res.on('error', () => resolve({ status: res.statusCode ?? 0 }));
        },
      );
    } catch (err) {
      // node:http refuses to send it (a header value it deems invalid): send the same bytes raw.
      const head = `${c.method} ${c.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(c.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}Content-Length: ${c.body?.length ?? 0}\r\nConnection: close\r\n\r\n`;
      void sendRaw(port, Buffer.concat([Buffer.from(head, 'latin1'), c.body ?? Buffer.alloc(0)]), false).then((a) =>
        resolve({ ...a, error: a.error ?? `sent raw (${(err as Error).message.slice(0, 60)})` }),
      );
      return;
    }
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: 0, error: err.message }));
    req.end(c.body);
  });
}

function sendRaw(port: number, data: Buffer, halfClose: boolean): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), halfClose ? TIMEOUT_MS : 5000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      const head = Buffer.concat(chunks).subarray(0, 200).toString('latin1');
      // Pipelined: the worst status of the answers.
      const statuses = [...head.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
      const all = [
        ...Buffer.concat(chunks)
          .toString('latin1')
          .matchAll(/HTTP\/1\.[01] (\d{3}) /g),
      ].map((m) => Number(m[1]));
      resolve({ status: Math.max(0, ...(all.length ? all : statuses)) });
    });
    sock.write(data, () => {
      if (halfClose) sock.end();
      else setTimeout(() => sock.end(), 1500).unref(); // whatever the server does not answer by then, it never will
    });
  });
}

// --- setup ------------------------------------------------------------------------------------------

async function json(url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

const callAs = (url: string, token: string, ns: string, fn: string, args: unknown) =>
  json(`${url}/curl/call/${ns}/${fn}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });

async function mcpSession(url: string, token: string): Promise<{ id: string; tools: string[] }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
    }),
  });
  const id = init.headers.get('mcp-session-id');
  await init.text();
  if (!id) throw new Error(`MCP initialize gave no session (${init.status})`);
  const h2 = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  await (
    await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: h2,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  const list = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: h2,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  const text = await list.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  const tools = ((JSON.parse(data) as { result?: { tools?: Array<{ name: string }> } }).result?.tools ?? []).map((x) => x.name);
  return { id, tools };
}

/** Users, tokens, notes and MCP sessions for the run, made through the public surfaces. */
export async function setupFuzz(url: string, adminToken: string): Promise<FuzzTokens> {
  const tag = randomBytes(3).toString('hex');
  const user = (await callAs(url, adminToken, 'admin', 'create_user', { email: `fuzz-${tag}@example.com` })) as { token: string };
  const other = (await callAs(url, adminToken, 'admin', 'create_user', { email: `fuzz-other-${tag}@example.com` })) as { token: string };
  const readOnly = (await callAs(url, user.token, 'admin', 'mint_curl_token', { ttl_seconds: 3600, scopes: ['notes:read'] })) as {
    token: string;
  };
  const minted = (await callAs(url, user.token, 'admin', 'mint_curl_token', { ttl_seconds: 3600 })) as { token: string };
  const expired = (await callAs(url, user.token, 'admin', 'mint_curl_token', { ttl_seconds: 1 })) as { token: string };
  const note = async (token: string, title: string) =>
    (
      (await json(`${url}/api/v1/notetaker/notes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title, body: `# ${title}\n\n## Tasks\n- [ ] one\n- [ ] two\n`, tags: ['meeting', 'fuzz'] }),
      })) as { id: string }
    ).id;
  const noteId = await note(user.token, 'Fuzz target');
  const foreignNoteId = await note(other.token, 'Not yours');
  for (let i = 0; i < 5; i++) await note(user.token, `Filler ${i}`);
  const mine = await mcpSession(url, user.token);
  const admins = await mcpSession(url, adminToken);
  const functions = [...new Set([...mine.tools, ...admins.tools])].map((n) => n.split('__') as [string, string]);
  const doc = (await json(`${url}/api/v1/openapi.json`, {})) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops)
      .filter((m) => /^(get|post|put|patch|delete)$/.test(m))
      .map((m) => [m.toUpperCase(), p] as [string, string]),
  );
  await new Promise((r) => setTimeout(r, 1100)); // the 1 s token has expired
  return {
    admin: adminToken,
    user: user.token,
    readOnly: readOnly.token,
    minted: minted.token,
    expired: expired.token,
    other: other.token,
    noteId,
    foreignNoteId,
    sessions: [mine.id, admins.id],
    functions,
    operations,
  };
}

// --- a run ------------------------------------------------------------------------------------------

export interface FuzzResult {
  seed: number;
  sent: number;
  seconds: number;
  bySurface: Record<string, number>;
  byStatus: Record<string, number>;
  /** Every answer >= 500, with what was sent. */
  serverErrors: Array<{ status: number; surface: string; what: string; method: string; path: string; i: number }>;
  /** Requests with no answer at all (not counted as failures; listed by kind). */
  noAnswer: Record<string, number>;
  /** The first of them (at most 20), with why the client got nothing, to look into. */
  noAnswerCases: Array<{ surface: string; what: string; method: string; path: string; i: number; error: string }>;
}

export async function fuzz(
  port: number,
  t: FuzzTokens,
  opts: { requests: number; seconds: number; seed: number; concurrency: number; onProgress?: (n: number) => void },
): Promise<FuzzResult> {
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const result: FuzzResult = {
    seed: opts.seed,
    sent: 0,
    seconds: 0,
    bySurface: {},
    byStatus: {},
    serverErrors: [],
    noAnswer: {},
    noAnswerCases: [],
  };
  let next = 0;
  const worker = async () => {
    while (next < opts.requests && performance.now() < deadline) {
      const i = next++;
      const c = fuzzCase(opts.seed, i, t);
      const a = await send(port, c);
      result.sent++;
      result.bySurface[c.surface] = (result.bySurface[c.surface] ?? 0) + 1;
      result.byStatus[String(a.status)] = (result.byStatus[String(a.status)] ?? 0) + 1;
      if (a.status >= 500)
        result.serverErrors.push({ status: a.status, surface: c.surface, what: c.what, method: c.method, path: c.path.slice(0, 200), i });
      if (a.status === 0) {
        result.noAnswer[`${c.surface}: ${c.what}`] = (result.noAnswer[`${c.surface}: ${c.what}`] ?? 0) + 1;
        if (result.noAnswerCases.length < 20)
          result.noAnswerCases.push({
            surface: c.surface,
            what: c.what,
            method: c.method,
            path: c.path.slice(0, 200),
            i,
            error: a.error ?? '',
          });
      }
      if (result.sent % 1000 === 0) opts.onProgress?.(result.sent);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  result.seconds = Math.round((performance.now() - started) / 100) / 10;
  return result;
}

/** The lines of a log that are not one JSON object each. */
export function nonJsonLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .filter((l) => {
      try {
        const v: unknown = JSON.parse(l);
        return typeof v !== 'object' || v === null || Array.isArray(v);
      } catch {
        return true;
      }
    });
}

// --- the command ------------------------------------------------------------------------------------

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = 'fuzz-bootstrap-admin-token-0123456789abcdef';

export interface FuzzRun extends FuzzResult {
  engine: string;
  logLines: number;
  nonJson: string[];
  errorLines: number;
  healthyAfter: boolean;
}

export async function runFuzz(opts: { requests?: number; seconds?: number; seed?: number; concurrency?: number } = {}): Promise<FuzzRun> {
  const dataDir = await tempDir('fuzz');
  const serverUrl = process.env['DATABASE_URL'];
  let dropDb: (() => Promise<void>) | undefined;
  let databaseUrl = '';
  if (serverUrl) {
    const name = `folio_fuzz_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const u = new URL(serverUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  // As `npm start` runs it: the real logger, every line it writes kept.
  const child = spawn(process.execPath, [path.join(ROOT, 'core/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'info',
      RELOAD_WATCH: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Folio did not start:\n${out}${err}`)), 120_000);
      const look = () => {
        const m = /"url":"(http:\/\/[^"]+)"[^\n]*"folio listening"|"msg":"folio listening"[^\n]*"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve((m[1] ?? m[2])!);
        }
      };
      child.stdout.on('data', look);
      void exited.then((code) => reject(new Error(`Folio exited (${code}):\n${out}${err}`)));
    });
    const port = Number(new URL(url).port);
    progress(`fuzz: Folio at ${url} (${serverUrl ? 'PostgreSQL' : 'embedded PGlite'}); setting up users, tokens, sessions`);
    const tokens = await setupFuzz(url, ADMIN);
    const requests = opts.requests ?? 10_000;
    progress(`fuzz: ${requests} requests, seed ${opts.seed ?? 1}, at most ${opts.seconds ?? 300} s`);
    const result = await fuzz(port, tokens, {
      requests,
      seconds: opts.seconds ?? 300,
      seed: opts.seed ?? 1,
      concurrency: opts.concurrency ?? 8,
      onProgress: (n) => progress(`fuzz: ${n} sent`),
    });
    const health = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    await new Promise((r) => setTimeout(r, 500)); // the last log lines
    const text = out + err;
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    return {
      ...result,
      engine: serverUrl ? 'postgres' : 'pglite',
      logLines: lines.length,
      nonJson: nonJsonLines(text),
      errorLines: lines.filter((l) => /"level":(50|60)/.test(l)).length,
      healthyAfter: health,
    };
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    await removeDir(dataDir);
    await dropDb?.();
  }
}

export function formatFuzz(r: FuzzRun): string {
  const lines = [
    `fuzz: ${r.sent} requests in ${r.seconds} s on ${r.engine} (seed ${r.seed}), by surface: ${JSON.stringify(r.bySurface)}`,
    `  answers by status: ${JSON.stringify(r.byStatus)}`,
    `  5xx answers: ${r.serverErrors.length}`,
    ...r.serverErrors.slice(0, 30).map((e) => `    ${e.status} #${e.i} ${e.surface} ${e.what}: ${e.method} ${e.path}`),
    `  no answer at all: ${Object.values(r.noAnswer).reduce((a, b) => a + b, 0)} ${JSON.stringify(r.noAnswer)}`,
    ...r.noAnswerCases.filter((c) => c.error !== '').map((c) => `    #${c.i} ${c.surface} ${c.what}: ${c.method} ${c.path}: ${c.error}`),
    `  log: ${r.logLines} lines, ${r.nonJson.length} not JSON, ${r.errorLines} at level error or fatal`,
    ...r.nonJson.slice(0, 10).map((l) => `    ${l.slice(0, 200)}`),
    `  /health after the run: ${r.healthyAfter ? '200' : 'NOT 200'}`,
    `  verdict: ${r.serverErrors.length === 0 && r.nonJson.length === 0 && r.healthyAfter ? 'PASS (0 5xx, 0 non-JSON log lines)' : 'FAIL'}`,
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  assertNode24();
  const args = process.argv.slice(2);
  const num = (name: string) => {
    const v = args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    return v === undefined ? undefined : Number(v);
  };
  const opts = { requests: num('requests'), seconds: num('seconds'), seed: num('seed'), concurrency: num('concurrency') };
  const r = await runFuzz(Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)));
  console.log(formatFuzz(r));
  console.log(JSON.stringify({ ...r, nonJson: r.nonJson.slice(0, 50) }));
  if (r.serverErrors.length > 0 || r.nonJson.length > 0 || !r.healthyAfter) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
