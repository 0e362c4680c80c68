// Byte ceilings: where the 413 is decided, and how deep a JSON body may go.
import { BadArguments, TooLarge } from '../contract/errors.ts';
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
  contentType: string;
  filename?: string | undefined;
  /** The value as the handler returned it (JSON kinds), for surfaces that carry structure. */
  value: unknown;
  /** Size in bytes of what goes on the wire. */
  size: number;
  /** The answer as a string (text and JSON kinds). Sent as a string, Node writes headers and body in one syscall. */
  text: string | undefined;
  /** The answer as bytes (made on first use for text and JSON). */
  readonly body: Buffer;
}

/** A text or JSON answer; its bytes are made on first use, by a getter on the prototype (not one per answer: see core/surfaces/http/request-log.ts). */
class TextEncoded implements Encoded {
  readonly kind: 'json' | 'text';
  readonly contentType: string;
  readonly value: unknown;
  readonly text: string;
  readonly size: number;
  #bytes: Buffer | undefined;
  constructor(kind: 'json' | 'text', text: string, contentType: string, value: unknown) {
    this.kind = kind;
    this.contentType = contentType;
    this.value = value;
    this.text = text;
    this.size = Buffer.byteLength(text, 'utf8');
  }
  get body(): Buffer {
    return (this.#bytes ??= Buffer.from(this.text, 'utf8'));
  }
}

function textual(kind: 'json' | 'text', text: string, contentType: string, value: unknown): Encoded {
  return new TextEncoded(kind, text, contentType, value);
}

/** Turns a handler's result into bytes: string -> text, bytes() -> its type, else JSON. */
export function encode(result: unknown): Encoded {
  if (typeof result === 'string') return textual('text', result, 'text/plain; charset=utf-8', result);
  if (isBytes(result)) {
    const body = Buffer.from(result.data.buffer, result.data.byteOffset, result.data.byteLength);
    return {
      kind: 'bytes',
      body,
      size: body.byteLength,
      text: undefined,
      contentType: result.contentType,
      filename: result.filename,
      value: undefined,
    };
  }
  const json = JSON.stringify(result === undefined ? null : result);
  return textual('json', json, 'application/json; charset=utf-8', result ?? null);
}

export function assertWithin(encoded: Encoded, ceiling: number, what: string, helpPath: string): void {
  const size = encoded.size;
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
