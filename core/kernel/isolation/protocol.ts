// The messages between Folio and an isolated plugin's worker (core/kernel/isolation/host.ts is
// Folio's side, worker.ts the plugin's). Everything crosses by structured clone; errors cross as
// plain data and are revived as the same typed outcome on the other side, so a NotFound thrown by
// a handler answers 404 and a MissingScope from ctx.services reaches the handler as a MissingScope.
import type { Surface } from '../describe.ts';
import * as errors from '../../contract/errors.ts';
import type { Caller } from '../../sdk/index.ts';
import type { Bundle } from '../plugin-eval.ts';

/**
 * What a plugin exported, as data: every function replaced by FUNCTION. Folio validates it with
 * the same rules (and messages) as an in-process export, with functions that send messages in
 * their place; the worker need not load the validator.
 */
export const FUNCTION = '\u0000function';

export function shapeOf(v: unknown, depth = 0): unknown {
  if (typeof v === 'function') return FUNCTION;
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => shapeOf(x, depth + 1));
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto === Object.prototype || proto === null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x, depth + 1)]));
  try {
    return structuredClone(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/** An error as data. */
export interface WireError {
  name: string;
  message: string;
  stack: string | undefined;
  props: Record<string, unknown>;
}

/** A handler's result as data: text, bytes, or JSON text (encoded where it was made, as in-process). */
export type WireResult =
  | { kind: 'undefined' }
  | { kind: 'text'; text: string }
  | { kind: 'json'; json: string }
  | { kind: 'bytes'; data: Uint8Array; contentType: string; filename: string | undefined };

export type ToWorker =
  | { type: 'load'; bundle: Bundle }
  | { type: 'trial'; id: number; bundle: Bundle }
  | { type: 'ping'; seq: number }
  | { type: 'call'; id: number; fn: string; args: Record<string, unknown>; caller: Caller; budget: number; surface: Surface }
  | { type: 'abort'; id: number; reason: string }
  | { type: 'visible'; id: number; caller: Caller }
  | { type: 'prompt'; id: number; name: string; args: Record<string, string>; caller: Caller; surface: Surface }
  | { type: 'service-result'; id: number; seq: number; ok: true; value: unknown }
  | { type: 'service-result'; id: number; seq: number; ok: false; error: WireError };

export type FromWorker =
  | { type: 'ready'; shape: unknown }
  | { type: 'load-failed'; error: WireError }
  | { type: 'pong'; seq: number }
  | { type: 'trial-result'; id: number; ok: true }
  | { type: 'trial-result'; id: number; ok: false; error: WireError }
  | { type: 'result'; id: number; ok: true; value: WireResult }
  | { type: 'result'; id: number; ok: false; error: WireError }
  | { type: 'visible-result'; id: number; ok: true; value: unknown }
  | { type: 'visible-result'; id: number; ok: false; error: WireError }
  | { type: 'prompt-result'; id: number; ok: true; value: { text: string } | { not: string } }
  | { type: 'prompt-result'; id: number; ok: false; error: WireError }
  | { type: 'service'; id: number; seq: number; path: string[]; args: unknown[] }
  | { type: 'progress'; id: number; progress: number; total?: number; message?: string }
  | { type: 'log'; id: number; level: 'info' | 'warn' | 'error' | 'debug'; obj: unknown; msg: string | undefined };

/** Own enumerable fields that survive structured clone; the rest is dropped rather than failing the message. */
function cloneable(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    try {
      out[k] = structuredClone(v);
    } catch {
      // a function, a socket, ...: not data, not sent
    }
  }
  return out;
}

export function toWire(err: unknown): WireError {
  if (err instanceof Error)
    return { name: err.name, message: err.message, stack: err.stack, props: cloneable({ ...(err as unknown as Record<string, unknown>) }) };
  return { name: 'Error', message: String(err), stack: undefined, props: {} };
}

const TYPED = new Map<string, { prototype: object }>(
  Object.entries(errors).filter(
    (entry): entry is [string, { prototype: object }] =>
      typeof entry[1] === 'function' && (entry[1] as { prototype?: unknown }).prototype instanceof errors.FolioError,
  ),
);

/** The error again: of its typed class when it is one of Folio's outcomes, else a plain Error. */
export function fromWire(w: WireError): Error {
  const proto = TYPED.get(w.name)?.prototype ?? Error.prototype;
  const err = Object.create(proto) as Error;
  Object.defineProperty(err, 'message', { value: w.message, writable: true, configurable: true });
  Object.defineProperty(err, 'stack', { value: w.stack, writable: true, configurable: true });
  Object.assign(err, w.props);
  Object.defineProperty(err, 'name', { value: w.name, writable: true, configurable: true });
  return err;
}
