// `folio api METHOD PATH`: any REST operation, for what has no command of its own. Paths are
// relative to /api/v1 (the OpenAPI document lists them: folio api GET /openapi.json).
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { raw, failure } from '../lib/client.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, printJson, readStdin, withOutput, type OutputOptions } from '../lib/output.ts';

const collect = (value: string, previous: string[]) => [...previous, value];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'];

function parseField(spec: string, typed: boolean): [string, unknown] {
  const eq = spec.indexOf('=');
  if (eq < 1) throw new CliError(`${spec}: a field is key=value`, EXIT.usage);
  const key = spec.slice(0, eq);
  const value = spec.slice(eq + 1);
  if (!typed) return [key, value];
  try {
    return [key, JSON.parse(value)];
  } catch {
    return [key, value];
  }
}

export const apiCommand: CommandGroup = {
  register(program: Command, cli: Cli) {
    const cmd = withOutput(
      program
        .command('api')
        .description('call any REST operation: the path is relative to /api/v1')
        .argument('<method>', METHODS.join(', '))
        .argument('<path>', 'e.g. /notetaker/tags')
        .option('-f, --field <key=value>', 'a string field (query parameter for GET, JSON body member otherwise); repeatable', collect, [])
        .option(
          '-F, --typed-field <key=value>',
          'like -f, but the value is read as JSON when it parses (numbers, true, ["a"])',
          collect,
          [],
        )
        .option('--input <file>', 'send this file as the JSON body (- for stdin)')
        .option('-H, --header <name: value>', 'an extra request header; repeatable', collect, [])
        .option('-i, --include', 'print the status line and the response headers first'),
    ).action(
      async (
        method: string,
        path: string,
        o: OutputOptions & { field: string[]; typedField: string[]; input?: string; header: string[]; include?: boolean },
      ) => {
        const verb = method.toUpperCase();
        if (!METHODS.includes(verb)) throw new CliError(`${method} is not an HTTP method (${METHODS.join(', ')})`, EXIT.usage);
        const target = cli.target();
        const headers: Record<string, string> = {};
        for (const h of o.header) {
          const colon = h.indexOf(':');
          if (colon < 1) throw new CliError(`${h}: a header is "Name: value"`, EXIT.usage);
          headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
        }
        const fields = [...o.field.map((f) => parseField(f, false)), ...o.typedField.map((f) => parseField(f, true))];
        let url = path;
        let body: string | undefined;
        if (o.input !== undefined) {
          body = o.input === '-' ? await readStdin() : readFileSync(o.input, 'utf8');
        } else if (fields.length && (verb === 'GET' || verb === 'HEAD' || verb === 'DELETE')) {
          const q = new URLSearchParams();
          for (const [k, v] of fields) for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
          url += (url.includes('?') ? '&' : '?') + q.toString();
        } else if (fields.length) body = JSON.stringify(Object.fromEntries(fields));
        if (body !== undefined) headers['content-type'] ??= 'application/json';
        const res = await raw(target, verb, url, { headers, ...(body !== undefined ? { body } : {}) });
        if (o.include) {
          process.stdout.write(`HTTP ${res.status} ${res.statusText}\n`);
          for (const [k, v] of res.headers) process.stdout.write(`${k}: ${v}\n`);
          process.stdout.write('\n');
        }
        if (!res.ok) throw await failure(target, res);
        const type = res.headers.get('content-type') ?? '';
        if (/[/+]json\b/.test(type)) {
          const text = await res.text();
          const data: unknown = text ? JSON.parse(text) : null;
          return await emit(data, o, () => printJson(data));
        }
        // Anything else (Markdown, a diff, a PDF) goes out byte for byte.
        const bytes = Buffer.from(await res.arrayBuffer());
        process.stdout.write(bytes);
      },
    );
    examples(
      cmd,
      'folio api GET /notetaker/tags',
      'folio api GET /notetaker/search -f q=budget -F limit=5 --json items',
      'folio api PATCH /notetaker/notes/$ID -H \'If-Match: "3"\' -f title="New title"',
      'echo \'{"title": "From JSON", "tags": ["x"]}\' | folio api POST /notetaker/notes --input -',
      'folio api GET /openapi.json --template "{info.title} {info.version}"',
    );
  },
};
