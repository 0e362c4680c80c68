// How results are printed: a table or text for a person at a terminal; tab-separated lines with
// no header when stdout is a pipe; JSON (all fields, or the ones named after --json), a jq filter
// over that JSON (--jq, with the jq installed here), or a --template line per item for scripts.
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { CliError, EXIT } from './errors.ts';

export interface OutputOptions {
  /** true: every field; a string: the comma-separated fields to keep. */
  json?: boolean | string;
  /** A jq program run over the JSON (with --json fields, over those only). */
  jq?: string;
  template?: string;
}

export const isTerminal = (): boolean => process.stdout.isTTY === true;

/** Adds --json [fields] and --template to a command that prints data. */
export function withOutput(cmd: Command): Command {
  return cmd
    .option('--json [fields]', 'print JSON; optionally only these comma-separated fields (e.g. id,title)')
    .option('--jq <expression>', "filter the JSON with a jq expression (strings print without quotes), e.g. '.[].title'")
    .option('--template <text>', 'print each item through a template: {field}, {field.sub}, \\t and \\n');
}

function pick(value: unknown, fields: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, fields));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(fields.map((f) => [f, lookup(value, f) ?? null]));
}

function lookup(value: unknown, dotted: string): unknown {
  let v: unknown = value;
  for (const k of dotted.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function render(template: string, item: unknown): string {
  const text = template.replace(/\\t/g, '\t').replace(/\\n/g, '\n');
  return text.replace(/\{([\w.]+)\}/g, (_, f: string) => {
    const v = lookup(item, f);
    if (v === undefined || v === null) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** The fields the data has (the union over a list's items), or undefined when there is nothing to look at. */
function fieldsOf(value: unknown): string[] | undefined {
  const objects = (Array.isArray(value) ? value : [value]).filter((v): v is object => !!v && typeof v === 'object' && !Array.isArray(v));
  if (objects.length === 0) return undefined;
  return [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();
}

/** The fields named after --json, each checked against the data's (as gh does: a typo is an error, not a null). */
function askedFields(value: unknown, json: string): string[] {
  const asked = json
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const known = fieldsOf(value);
  const unknown = known ? asked.filter((f) => !known.includes(f.split('.')[0]!)) : [];
  if (unknown.length)
    throw new CliError(
      `unknown JSON field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => JSON.stringify(f)).join(', ')}; available fields: ${known!.join(', ')}`,
      EXIT.usage,
    );
  return asked;
}

/**
 * Runs a jq program over the JSON with the jq installed on this machine (as `gh --jq` runs its
 * embedded one): its output untouched, its errors and exit status passed on.
 */
async function printJq(value: unknown, program: string): Promise<void> {
  const jq = spawn(process.env['FOLIO_JQ'] || 'jq', ['-r', program], { stdio: ['pipe', 'inherit', 'pipe'] });
  let stderr = '';
  jq.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    jq.on('error', reject);
    jq.on('close', resolve);
  });
  jq.stdin.on('error', () => {}); // jq may exit before reading everything (a compile error)
  jq.stdin.end(JSON.stringify(value ?? null));
  const code = await exited.catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT')
      throw new CliError('--jq needs jq installed (e.g. apt install jq, brew install jq); --json prints the JSON itself', EXIT.usage);
    throw err;
  });
  if (code !== 0) {
    const why =
      stderr
        .trim()
        .replace(/^jq: (error: )?/, '')
        .split('\n')[0] || `jq exited with ${code}`;
    // jq's exit 3 is a program that does not compile: a usage error; others fail at run time.
    throw new CliError(`--jq ${JSON.stringify(program)}: ${why}`, code === 3 ? EXIT.usage : EXIT.failed);
  }
}

/** Prints data the way the options ask (--json, --jq, --template); without any, `human` prints it. */
export async function emit(value: unknown, opts: OutputOptions, human: () => unknown): Promise<void> {
  if (opts.jq !== undefined || (opts.json !== undefined && opts.json !== false)) {
    const fields = typeof opts.json === 'string' ? askedFields(value, opts.json) : [];
    const data = fields.length ? pick(value, fields) : value;
    if (opts.jq !== undefined) await printJq(data, opts.jq);
    else printJson(data);
  } else if (opts.template !== undefined) {
    for (const item of Array.isArray(value) ? value : [value])
      process.stdout.write(render(opts.template, item) + (opts.template.endsWith('\\n') ? '' : '\n'));
  } else await human();
}

export interface Column<T> {
  header: string;
  get: (row: T) => string;
  /** May be cut to fit the terminal's width (the last such column is cut first). */
  flexible?: boolean;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Columns aligned under a header on a terminal; tab-separated rows, no header, through a pipe. */
export function table<T>(rows: T[], columns: Column<T>[], empty = 'nothing to show'): void {
  const cells = rows.map((r) => columns.map((c) => oneLine(c.get(r))));
  if (!isTerminal()) {
    for (const row of cells) process.stdout.write(row.join('\t') + '\n');
    return;
  }
  if (rows.length === 0) {
    process.stderr.write(`${empty}\n`);
    return;
  }
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  const room = process.stdout.columns || 100;
  // Too wide: cut the widest flexible column, one character at a time, down to its header.
  while (total() > room) {
    let widest = -1;
    columns.forEach((c, i) => {
      if (c.flexible && widths[i]! > c.header.length && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest]!--;
  }
  const fit = (s: string, w: number) => (s.length > w ? s.slice(0, Math.max(0, w - 1)) + '…' : s.padEnd(w));
  const line = (r: string[]) =>
    r
      .map((s, i) => fit(s, widths[i]!))
      .join('  ')
      .trimEnd();
  const bold = (s: string) => (process.env['NO_COLOR'] ? s : `\x1b[1m${s}\x1b[22m`);
  process.stdout.write(bold(line(columns.map((c) => c.header))) + '\n');
  for (const r of cells) process.stdout.write(line(r) + '\n');
}

/** A short time for tables: the date, or the time of day when it is today. */
export function when(iso: string): string {
  const d = new Date(iso);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return d.toTimeString().slice(0, 5);
  return d.toISOString().slice(0, 10);
}

/** Reads all of stdin (the body of a note, a request, a token). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
