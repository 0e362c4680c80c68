// The messages between Folio and an isolated plugin's host process (core/kernel/isolation/host.ts
// is Folio's side, plugin-process.ts the plugin's; the trial worker, worker.ts, takes 'trial').
// Everything crosses as V8-serialized data (channel.ts); errors cross as
// plain data and are revived as the same typed outcome on the other side, so a NotFound thrown by
// a handler answers 404 and a MissingScope from ctx.services reaches the handler as a MissingScope.
import type { Surface } from '../describe.ts';
import type { Caller } from '../../sdk/index.ts';
import type { Bundle } from '../plugin-eval.ts';
import type { WireError } from './wire-error.ts';

export type { WireError } from './wire-error.ts';

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

/**
 * What a plugin's process writes to stderr, on a line of its own, just before an error nobody caught
 * ends it; the error follows. Folio reports that line as the reason, rather than the last line Node
 * prints ("Node.js v24...").
 */
export const UNCAUGHT_LINE = 'folio: the plugin process ends on ';

/** A handler's result as data: text, bytes, or JSON text (encoded where it was made, as in-process). */
export type WireResult =
  | { kind: 'undefined' }
  | { kind: 'text'; text: string }
  | { kind: 'json'; json: string }
  | { kind: 'bytes'; data: Uint8Array; contentType: string; filename: string | undefined };

/**
 * A call's id: random, made by Folio for each call. Folio answers a service request only for a call
 * this process is running, as that call's caller: an id the plugin makes up, or keeps after its
 * call ended, names nothing.
 */
export type CallId = string;

export type ToWorker =
  | { type: 'load'; bundle: Bundle; allowedHosts: string[]; maxResultBytes: number; maxFrame: number }
  | { type: 'trial'; id: number; bundle: Bundle }
  | { type: 'ping'; seq: number }
  | { type: 'call'; id: CallId; fn: string; args: Record<string, unknown>; caller: Caller; budget: number; surface: Surface }
  | { type: 'abort'; id: CallId; reason: string }
  | { type: 'visible'; id: number; caller: Caller }
  | { type: 'prompt'; id: number; name: string; args: Record<string, string>; caller: Caller; surface: Surface }
  | { type: 'service-result'; id: CallId; seq: number; ok: true; value: unknown }
  | { type: 'service-result'; id: CallId; seq: number; ok: false; error: WireError };

export type FromWorker =
  | { type: 'ready'; shape: unknown }
  | { type: 'load-failed'; error: WireError }
  | { type: 'pong'; seq: number }
  | { type: 'trial-result'; id: number; ok: true }
  | { type: 'trial-result'; id: number; ok: false; error: WireError }
  | { type: 'result'; id: CallId; ok: true; value: WireResult }
  | { type: 'result'; id: CallId; ok: false; error: WireError }
  | { type: 'visible-result'; id: number; ok: true; value: unknown }
  | { type: 'visible-result'; id: number; ok: false; error: WireError }
  | { type: 'prompt-result'; id: number; ok: true; value: { text: string } | { not: string } }
  | { type: 'prompt-result'; id: number; ok: false; error: WireError }
  | { type: 'service'; id: CallId; seq: number; path: string[]; args: unknown[] }
  | { type: 'progress'; id: CallId; progress: number; total?: number; message?: string }
  | { type: 'log'; id: CallId; level: 'info' | 'warn' | 'error' | 'debug'; obj: unknown; msg: string | undefined };

// ---- what Folio accepts from a worker ------------------------------------------------------------
// The worker runs the plugin's code, which can post anything on any port it reaches. Every message is
// checked here before Folio acts on it: known type, fields of the right types, bounded sizes. What
// fails is an `invalid` message naming the call it was for, when it names one, so that only that call
// fails. Errors inside a message are left as sent: fromWire (wire-error.ts) reads anything.

/** A message from the worker Folio will not act on, and the call or rule it claimed to be for. */
export interface Invalid {
  type: 'invalid';
  id: CallId | number | undefined;
  reason: string;
}

const LEVELS = new Set(['info', 'warn', 'error', 'debug']);
/** Longest service path (ctx.services.a.b.c...) and log message taken. */
const MAX_PATH = 8;
const MAX_MSG = 16 * 1024;

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const isCallId = (v: unknown): v is CallId => typeof v === 'string' && v.length > 0 && v.length <= 64;
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isFinite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A content type as a header may carry it. */
const isContentType = (v: unknown): v is string => typeof v === 'string' && v.length <= 255 && /^[\x20-\x7e]+$/.test(v);

function wireResult(v: unknown): WireResult | undefined {
  const r = record(v);
  switch (r?.kind) {
    case 'undefined':
      return { kind: 'undefined' };
    case 'text':
      return typeof r.text === 'string' ? { kind: 'text', text: r.text } : undefined;
    case 'json':
      return typeof r.json === 'string' ? { kind: 'json', json: r.json } : undefined;
    case 'bytes':
      if (!(r.data instanceof Uint8Array) || !isContentType(r.contentType)) return undefined;
      if (r.filename !== undefined && (typeof r.filename !== 'string' || r.filename.length > 1024)) return undefined;
      return { kind: 'bytes', data: r.data, contentType: r.contentType, filename: r.filename };
    default:
      return undefined;
  }
}

function promptValue(v: unknown): { text: string } | { not: string } | undefined {
  const r = record(v);
  if (typeof r?.text === 'string') return { text: r.text };
  if (typeof r?.not === 'string') return { not: r.not.slice(0, 64) };
  return undefined;
}

/** Values walked in one message, repeats included, and how deep: past either it is not acted on. */
const MAX_NODES = 200_000;
const MAX_DEPTH = 64;

/**
 * Whether walking `v` (as the log, an error's revival or JSON.stringify would) stays within bounds.
 * V8's deserializer keeps shared references, so a few hundred bytes can describe an object whose
 * walk doubles at each level, or a sparse array of 2^32 - 1 slots: counted here, repeats included,
 * before anything walks it.
 */
export function withinBounds(v: unknown): boolean {
  let nodes = 0;
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return false;
    if (typeof x !== 'object' || x === null || ArrayBuffer.isView(x) || x instanceof ArrayBuffer) continue;
    if (Array.isArray(x)) {
      if (x.length > MAX_NODES) return false;
      for (const y of x) stack.push([y, depth + 1]);
    } else if (x instanceof Map) {
      if (x.size > MAX_NODES) return false;
      for (const [k, y] of x) stack.push([k, depth + 1], [y, depth + 1]);
    } else if (x instanceof Set) {
      if (x.size > MAX_NODES) return false;
      for (const y of x) stack.push([y, depth + 1]);
    } else {
      const keys = Object.keys(x);
      if (keys.length > MAX_NODES) return false;
      for (const k of keys) stack.push([(x as Record<string, unknown>)[k], depth + 1]);
    }
  }
  return true;
}

/** A message from the worker as Folio will act on it, or `invalid` with why. Never throws. */
export function decodeFromWorker(raw: unknown): FromWorker | Invalid {
  const m = record(raw);
  const claimed = m && (isCallId(m.id) || isSeq(m.id)) ? m.id : undefined;
  const invalid = (reason: string): Invalid => ({ type: 'invalid', id: claimed, reason });
  if (!m) return invalid('not an object');
  if (!withinBounds(m)) return invalid(`a message too large or too deep to read (over ${MAX_NODES} values or ${MAX_DEPTH} levels)`);
  switch (m.type) {
    case 'ready':
      return { type: 'ready', shape: m.shape };
    case 'load-failed':
      return { type: 'load-failed', error: m.error as WireError };
    case 'pong':
      return isSeq(m.seq) ? { type: 'pong', seq: m.seq } : invalid('a pong without its number');
    case 'trial-result':
      if (!isSeq(m.id) || typeof m.ok !== 'boolean') return invalid('a trial result without an id or outcome');
      return m.ok
        ? { type: 'trial-result', id: m.id, ok: true }
        : { type: 'trial-result', id: m.id, ok: false, error: m.error as WireError };
    case 'result': {
      if (!isCallId(m.id) || typeof m.ok !== 'boolean') return invalid('a result without a call id or outcome');
      if (!m.ok) return { type: 'result', id: m.id, ok: false, error: m.error as WireError };
      const value = wireResult(m.value);
      return value ? { type: 'result', id: m.id, ok: true, value } : invalid('a result that is not text, JSON text or bytes');
    }
    case 'visible-result':
      if (!isSeq(m.id) || typeof m.ok !== 'boolean') return invalid('a visible() answer without an id or outcome');
      return m.ok
        ? { type: 'visible-result', id: m.id, ok: true, value: m.value }
        : { type: 'visible-result', id: m.id, ok: false, error: m.error as WireError };
    case 'prompt-result': {
      if (!isSeq(m.id) || typeof m.ok !== 'boolean') return invalid('a prompt answer without an id or outcome');
      if (!m.ok) return { type: 'prompt-result', id: m.id, ok: false, error: m.error as WireError };
      const value = promptValue(m.value);
      return value ? { type: 'prompt-result', id: m.id, ok: true, value } : invalid('a prompt answer that is neither text nor a type');
    }
    case 'service': {
      const path = m.path;
      if (!isCallId(m.id) || !isSeq(m.seq)) return invalid('a service request without a call id or number');
      if (!Array.isArray(path) || path.length > MAX_PATH || !path.every((k) => typeof k === 'string' && k.length <= 64))
        return invalid('a service request whose path is not a few names');
      if (!Array.isArray(m.args)) return invalid('a service request whose arguments are not a list');
      return { type: 'service', id: m.id, seq: m.seq, path: path as string[], args: m.args as unknown[] };
    }
    case 'progress':
      if (!isCallId(m.id) || !isFinite(m.progress)) return invalid('a progress report without a call id or number');
      return {
        type: 'progress',
        id: m.id,
        progress: m.progress,
        ...(isFinite(m.total) ? { total: m.total } : {}),
        ...(typeof m.message === 'string' ? { message: m.message.slice(0, MAX_MSG) } : {}),
      };
    case 'log':
      if (!isCallId(m.id) || typeof m.level !== 'string' || !LEVELS.has(m.level)) return invalid('a log line without a call id or level');
      return {
        type: 'log',
        id: m.id,
        level: m.level as 'info' | 'warn' | 'error' | 'debug',
        obj: m.obj,
        msg: typeof m.msg === 'string' ? m.msg.slice(0, MAX_MSG) : undefined,
      };
    default:
      return invalid(`an unknown message type`);
  }
}
