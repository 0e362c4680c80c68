// Byte ceilings: where the 413 is decided, and how deep a JSON body may go.
import { BadArguments, TooLarge } from './errors.ts';
import { isBytes } from '../sdk/index.ts';

export interface Limits {
  responseBytes: number;
  responseHardCapBytes: number;
  jsonDepth: number;
}

/**
 * The ceiling for one call: the server default, replaced by the function's own `maxBytes` (up
 * to the hard cap), then lowered (never raised) by the caller's `max_bytes_llm`.
 */
export function ceilingFor(limits: Limits, fnMaxBytes: number | undefined, requested: unknown): number {
  const base = Math.min(fnMaxBytes ?? limits.responseBytes, limits.responseHardCapBytes);
  if (requested === undefined) return base;
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested <= 0)
    throw new BadArguments('max_bytes_llm must be a positive integer (a byte count)', [
      { path: 'max_bytes_llm', message: `must be a positive integer; got ${JSON.stringify(requested)}` },
    ]);
  return Math.min(base, requested);
}

export interface Encoded {
  kind: 'json' | 'text' | 'bytes';
  body: Buffer;
  contentType: string;
  filename?: string | undefined;
  /** The value as the handler returned it (JSON kinds), for surfaces that carry structure. */
  value: unknown;
}

/** Turns a handler's result into bytes: string -> text, bytes() -> its type, else JSON. */
export function encode(result: unknown): Encoded {
  if (typeof result === 'string')
    return { kind: 'text', body: Buffer.from(result, 'utf8'), contentType: 'text/plain; charset=utf-8', value: result };
  if (isBytes(result))
    return {
      kind: 'bytes',
      body: Buffer.from(result.data.buffer, result.data.byteOffset, result.data.byteLength),
      contentType: result.contentType,
      filename: result.filename,
      value: undefined,
    };
  const json = JSON.stringify(result === undefined ? null : result);
  return { kind: 'json', body: Buffer.from(json, 'utf8'), contentType: 'application/json; charset=utf-8', value: result ?? null };
}

export function assertWithin(encoded: Encoded, ceiling: number, what: string, helpPath: string): void {
  const size = encoded.body.byteLength;
  if (size <= ceiling) return;
  throw new TooLarge(
    `the answer of ${what} is ${size} bytes, over this call's ceiling of ${ceiling} bytes. ` +
      `Ask for less: narrow the arguments (a smaller limit, a filter, one part or page at a time; ` +
      `see ${helpPath}). max_bytes_llm can lower the ceiling but never raise it.`,
    size,
    ceiling,
  );
}

/** Depth of a parsed JSON value, without recursion (a hostile body must not blow the stack). */
export function jsonDepth(value: unknown, max: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d);
    if (deepest > max) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}
