// The host process of one isolated plugin (core/kernel/isolation/host.ts starts it; sandbox.ts
// says how). It evaluates the plugin's bundle, sends Folio what it exported (as data, for Folio to
// validate), then answers Folio's messages on fd 3: calls, visible() checks, prompt renders,
// aborts, pings. ctx is rebuilt here with the shape a plugin gets in-process: ctx.services,
// ctx.progress and ctx.log send messages to Folio; ctx.signal fires when Folio says the call is
// over; ctx.fetch reaches only the hosts the operator granted.
import { Socket } from 'node:net';
import { TooLarge } from '../../contract/errors.ts';
import { callRef } from '../describe.ts';
import { isBytes, type Caller, type Context, type PromptContext, type Services } from '../../sdk/index.ts';
import { evaluateBundle } from '../plugin-eval.ts';
import { Channel } from './channel.ts';
import { hostAllowed } from './capabilities.ts';
import { shapeOf, UNCAUGHT_LINE, type CallId, type FromWorker, type ToWorker, type WireResult } from './protocol.ts';
import { fromWire, toWire } from './wire-error.ts';

// Taken before the plugin's code runs: a plugin that replaces globalThis.fetch or JSON does not
// change what Folio's side of this process does.
const realFetch = globalThis.fetch;
const stringify = JSON.stringify;

interface Running {
  controller: AbortController;
  services: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  seq: number;
  /** Log lines and progress reports not sent (BACKLOG_BYTES). */
  dropped: number;
}

/**
 * Output Folio has not read yet past which a call's log lines and progress reports are dropped. A
 * flood of them would queue here without bound, taking the process's memory, and hold up the pong
 * behind it, so that the heartbeat would kill the process as if it computed without a pause.
 * Results, service requests and pongs are never dropped; the dropped are counted, and said when
 * the call ends.
 */
const BACKLOG_BYTES = 1024 * 1024;

const running = new Map<CallId, Running>();

type Plugin = {
  namespace: string;
  visible?: (caller: Caller) => unknown;
  functions: Record<string, { handler: (args: Record<string, unknown>, ctx: Context) => unknown }>;
  prompts?: Record<string, { render: (args: Record<string, string>, ctx: PromptContext) => unknown }>;
};

let plugin: Plugin | undefined;
let allowedHosts: string[] = [];
let maxResult = 8 * 1024 * 1024;

// Until 'load' says Folio's limit, frames are bounded by a generous one (the bundle comes first).
const channel = open(256 * 1024 * 1024);
function open(maxFrame: number): Channel {
  return new Channel(new Socket({ fd: 3, readable: true, writable: true }), maxFrame, {
    message: (m) => onMessage(m as ToWorker),
    broken: () => process.exit(70),
    // Folio went away (or closed the channel): nothing is left to serve.
    closed: () => process.exit(0),
  });
}
/** What is JSON data through and through goes as JSON text (channel.ts): most of a call's messages. */
const asJson = (m: FromWorker): boolean =>
  m.type === 'pong' ||
  m.type === 'progress' ||
  (m.type === 'result' && m.ok && m.value.kind !== 'bytes') ||
  (m.type === 'visible-result' && m.ok) ||
  (m.type === 'prompt-result' && m.ok);
const send = (m: FromWorker): void => channel.send(m, asJson(m));

/** A thrown value on one short line, whatever it is (its getters may throw). */
function describeThrown(v: unknown): string {
  let text: string;
  try {
    text = v instanceof Error ? `${v.name}: ${v.message}` : typeof v === 'string' ? v : String(v);
  } catch {
    text = 'a value that cannot be described';
  }
  return text.replace(/\s+/g, ' ').slice(0, 500);
}

// An error nobody caught ends this process, as Node ends any (what the plugin holds can no longer be
// trusted); first it is said on stderr, for Folio to give as the reason. Not when the plugin
// handles such errors itself: then the process goes on.
process.on('uncaughtExceptionMonitor', (err, origin) => {
  if (process.listenerCount('uncaughtException') > 0) return;
  const what = origin === 'unhandledRejection' ? 'a promise rejection nobody handled' : 'an uncaught exception';
  process.stderr.write(`\n${UNCAUGHT_LINE}${what}: ${describeThrown(err)}\n`);
});

function freezeCaller(c: Caller): Caller {
  return Object.freeze({
    notes: Object.freeze({ count: c.notes.count, tags: Object.freeze({ ...c.notes.tags }) }),
    user: Object.freeze({ ...c.user, roles: Object.freeze([...c.user.roles]) as string[] }),
    scopes: Object.freeze([...c.scopes]) as string[],
    tokenKind: c.tokenKind,
  });
}

/** ctx.services: any path (ctx.services.notes.get, ctx.services.pluginStatus) becomes one message to Folio. */
function servicesFor(id: CallId, run: Running): Services {
  const at = (path: string[]): unknown =>
    new Proxy(function () {}, {
      get: (_t, key) => (typeof key === 'string' && key !== 'then' ? at([...path, key]) : undefined),
      apply: (_t, _this, args: unknown[]) =>
        new Promise((resolve, reject) => {
          const seq = ++run.seq;
          run.services.set(seq, { resolve, reject });
          try {
            send({ type: 'service', id, seq, path, args });
          } catch (err) {
            run.services.delete(seq);
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        }),
    });
  return at([]) as Services;
}

function logFor(id: CallId, run: Running): Context['log'] {
  const at =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (obj: object | string, msg?: string): void => {
      if (channel.backlog > BACKLOG_BYTES) {
        run.dropped++;
        return;
      }
      let data: unknown;
      try {
        data = structuredClone(obj);
      } catch {
        data = typeof obj === 'string' ? obj : Object.prototype.toString.call(obj);
      }
      try {
        send({ type: 'log', id, level, obj: data, msg });
      } catch {
        send({
          type: 'log',
          id,
          level,
          obj: '(a log entry too large to send)',
          msg: typeof msg === 'string' ? msg.slice(0, 1024) : undefined,
        });
      }
    };
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/** fetch for the hosts the operator granted (package.json folio.capabilities.network, isolation.grants). */
const guardedFetch: typeof fetch = (input, init) => {
  let url: URL;
  try {
    url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  } catch {
    return Promise.reject(new TypeError('ctx.fetch: not a URL'));
  }
  if (!hostAllowed(allowedHosts, url.hostname))
    return Promise.reject(
      new Error(
        `ctx.fetch: ${url.hostname} is not among the hosts this plugin was granted (${allowedHosts.join(', ') || 'none'}); ask for it in package.json folio.capabilities.network and have the operator grant it`,
      ),
    );
  return realFetch(input, { ...init, redirect: 'manual' });
};

function wireResult(v: unknown): WireResult {
  if (v === undefined) return { kind: 'undefined' };
  if (typeof v === 'string') return { kind: 'text', text: v };
  if (isBytes(v)) return { kind: 'bytes', data: v.data, contentType: v.contentType, filename: v.filename };
  return { kind: 'json', json: stringify(v) };
}

function sizeOf(w: WireResult): number {
  if (w.kind === 'text') return w.text.length;
  if (w.kind === 'json') return w.json.length;
  if (w.kind === 'bytes') return w.data.byteLength;
  return 0;
}

/** Says, in the call's log, how many of its log lines and progress reports were dropped. */
function reportDropped(id: CallId, run: Running): void {
  if (run.dropped === 0) return;
  send({
    type: 'log',
    id,
    level: 'warn',
    obj: { dropped: run.dropped },
    msg: `${run.dropped} log lines and progress reports of this call were dropped: it sent them faster than Folio read them`,
  });
  run.dropped = 0;
}

async function call(p: Plugin, m: Extract<ToWorker, { type: 'call' }>): Promise<void> {
  const run: Running = { controller: new AbortController(), services: new Map(), seq: 0, dropped: 0 };
  running.set(m.id, run);
  try {
    const fn = Object.hasOwn(p.functions, m.fn) ? p.functions[m.fn] : undefined;
    if (!fn) throw new Error(`no function '${m.fn}' in this version`);
    const ctx: Context = {
      caller: freezeCaller(m.caller),
      signal: run.controller.signal,
      log: logFor(m.id, run),
      services: servicesFor(m.id, run),
      progress: (progress, total, message) => {
        if (run.controller.signal.aborted || typeof progress !== 'number' || !Number.isFinite(progress)) return;
        if (channel.backlog > BACKLOG_BYTES) {
          run.dropped++;
          return;
        }
        send({
          type: 'progress',
          id: m.id,
          progress,
          ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
          ...(typeof message === 'string' ? { message: message.slice(0, 16 * 1024) } : {}),
        });
      },
      budget: m.budget,
      ref: (name, refArgs) => callRef(m.surface, name, refArgs),
      fetch: guardedFetch,
    };
    const value = wireResult(await fn.handler(m.args, ctx));
    const size = sizeOf(value);
    // Refused as in-process answers over a ceiling are (413, with the sizes), not as a failure of the plugin.
    if (size > maxResult)
      throw new TooLarge(
        `${callRef(m.surface, `${p.namespace}.${m.fn}`)} returned ${size} bytes, over the ${maxResult} bytes any answer may have (limits.responseHardCapBytes)`,
        size,
        maxResult,
      );
    reportDropped(m.id, run);
    send({ type: 'result', id: m.id, ok: true, value });
  } catch (err) {
    reportDropped(m.id, run);
    send({ type: 'result', id: m.id, ok: false, error: toWire(err) });
  } finally {
    running.delete(m.id);
  }
}

async function visible(p: Plugin, m: Extract<ToWorker, { type: 'visible' }>): Promise<void> {
  try {
    const value: unknown = await p.visible!(freezeCaller(m.caller));
    // Anything but a boolean hides the namespace; it is sent as it is where it can be, for the log.
    send({ type: 'visible-result', id: m.id, ok: true, value: typeof value === 'boolean' ? value : String(value).slice(0, 256) });
  } catch (err) {
    send({ type: 'visible-result', id: m.id, ok: false, error: toWire(err) });
  }
}

/** A prompt's render, here where the plugin lives; the text (or whatever it returned, for Folio to refuse) goes back. */
async function prompt(p: Plugin, m: Extract<ToWorker, { type: 'prompt' }>): Promise<void> {
  try {
    const def = p.prompts && Object.hasOwn(p.prompts, m.name) ? p.prompts[m.name] : undefined;
    if (!def) throw new Error(`no prompt '${m.name}' in this version`);
    const value: unknown = await def.render(
      { ...m.args },
      { caller: freezeCaller(m.caller), ref: (name, refArgs) => callRef(m.surface, name, refArgs) },
    );
    send({ type: 'prompt-result', id: m.id, ok: true, value: typeof value === 'string' ? { text: value } : { not: typeof value } });
  } catch (err) {
    send({ type: 'prompt-result', id: m.id, ok: false, error: toWire(err) });
  }
}

function load(m: Extract<ToWorker, { type: 'load' }>): void {
  allowedHosts = m.allowedHosts;
  maxResult = m.maxResultBytes;
  // A log entry or a service request Folio would not read fails alone here (a log entry is replaced
  // by a note), rather than ending the process with every call it runs.
  channel.limit(m.maxFrame);
  try {
    const exported = evaluateBundle(m.bundle);
    plugin = exported as Plugin;
    send({ type: 'ready', shape: shapeOf(exported) });
  } catch (err) {
    send({ type: 'load-failed', error: toWire(err) });
  }
}

function onMessage(m: ToWorker): void {
  if (m.type === 'load') return load(m);
  if (!plugin) return;
  switch (m.type) {
    case 'ping':
      send({ type: 'pong', seq: m.seq });
      break;
    case 'call':
      void call(plugin, m);
      break;
    case 'visible':
      void visible(plugin, m);
      break;
    case 'prompt':
      void prompt(plugin, m);
      break;
    case 'abort':
      running.get(m.id)?.controller.abort(new Error(m.reason));
      break;
    case 'service-result': {
      const run = running.get(m.id);
      const pending = run?.services.get(m.seq);
      if (!run || !pending) break;
      run.services.delete(m.seq);
      if (m.ok) pending.resolve(m.value);
      else pending.reject(fromWire(m.error));
      break;
    }
  }
}
