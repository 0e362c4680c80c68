// How results are printed: a table or text for a person at a terminal; tab-separated lines with
// no header when stdout is a pipe; JSON (all fields, or the ones named after --json) or a
// --template line per item for scripts.
import type { Command } from 'commander';

export interface OutputOptions {
  /** true: every field; a string: the comma-separated fields to keep. */
  json?: boolean | string;
  template?: string;
}

export const isTerminal = (): boolean => process.stdout.isTTY === true;

/** Adds --json [fields] and --template to a command that prints data. */
export function withOutput(cmd: Command): Command {
  return cmd
    .option('--json [fields]', 'print JSON; optionally only these comma-separated fields (e.g. id,title)')
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

/** Prints data the way the options ask (--json, --template); without either, `human` prints it. */
export function emit(value: unknown, opts: OutputOptions, human: () => void): void {
  if (opts.json !== undefined && opts.json !== false) {
    const fields =
      typeof opts.json === 'string'
        ? opts.json
            .split(',')
            .map((f) => f.trim())
            .filter(Boolean)
        : [];
    printJson(fields.length ? pick(value, fields) : value);
  } else if (opts.template !== undefined) {
    for (const item of Array.isArray(value) ? value : [value])
      process.stdout.write(render(opts.template, item) + (opts.template.endsWith('\\n') ? '' : '\n'));
  } else human();
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
