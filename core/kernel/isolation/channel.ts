// The channel between Folio and a plugin's host process: one socket (a socketpair Folio made, fd 3
// in the host), carrying frames of a 4-byte big-endian length, a one-byte format and the message:
// JSON text for the small messages most calls are made of (a call, a text or JSON result, a ping),
// which JSON encodes and decodes several times faster than V8's serializer; V8's format
// (v8.serialize) for what JSON cannot carry as it is (bytes, dates, errors of any shape, service
// answers). bench/plugin-host.ts measures what a call costs on each side.
//
// Each message is one write of one frame. A frame longer than
// `maxFrame`, or one that does not deserialize, breaks the channel: the other side is not speaking
// the protocol, and nothing after it can be trusted to start at a frame boundary.
import type { Duplex } from 'node:stream';
import v8 from 'node:v8';

export interface ChannelEvents {
  message(m: unknown): void;
  /** The peer sent what is not a frame; the channel reads nothing more. */
  broken(reason: string): void;
  /** The peer closed its end (or the socket was destroyed). */
  closed?(): void;
}

const HEADER = 4;
const V8 = 0x56;
const JSON_TEXT = 0x4a;

export class Channel {
  readonly #socket: Duplex;
  #maxFrame: number;
  readonly #events: ChannelEvents;
  #broken = false;

  constructor(socket: Duplex, maxFrame: number, events: ChannelEvents) {
    this.#socket = socket;
    this.#maxFrame = maxFrame;
    this.#events = events;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    // A peer that goes away is seen as the process's exit; the socket's own error adds nothing.
    socket.on('error', () => {});
    socket.on('close', () => this.#events.closed?.());
  }

  /**
   * Serializes and writes now (a value that cannot cross throws here, to the sender). Written at
   * once, not at the end of the turn: a log line a handler sends before it computes for a while
   * must reach Folio before the computing ends.
   */
  send(m: unknown, json = false): void {
    let frame: Buffer;
    if (json) {
      const text = JSON.stringify(m);
      const length = 1 + Buffer.byteLength(text);
      this.#fits(length);
      frame = Buffer.allocUnsafe(HEADER + length);
      frame.writeUInt32BE(length, 0);
      frame[HEADER] = JSON_TEXT;
      frame.write(text, HEADER + 1);
    } else {
      const body = v8.serialize(m);
      this.#fits(1 + body.length);
      frame = Buffer.allocUnsafe(HEADER + 1 + body.length);
      frame.writeUInt32BE(1 + body.length, 0);
      frame[HEADER] = V8;
      body.copy(frame, HEADER + 1);
    }
    this.#socket.write(frame);
    // A peer that does not read: what waits for it is bounded, then the peer is given up.
    if (this.#socket.writableLength > this.#maxFrame * 2)
      this.#break(`stopped reading (${this.#socket.writableLength} bytes waiting for it)`);
  }

  #fits(length: number): void {
    if (length > this.#maxFrame) throw new RangeError(`a message of ${length} bytes is over the channel's limit of ${this.#maxFrame}`);
    if (this.#socket.destroyed) throw new Error("the plugin's process is gone");
  }

  /** Lowers the largest frame either way (the peer said its limit). */
  limit(maxFrame: number): void {
    this.#maxFrame = Math.min(this.#maxFrame, maxFrame);
  }

  /** Bytes sent and not yet taken by the peer (queued here or in the socket). */
  get backlog(): number {
    return this.#socket.writableLength;
  }

  close(): void {
    this.#socket.destroy();
  }

  // Chunks of an incomplete frame wait in a list and are joined once the whole frame is here.
  #chunks: Buffer[] = [];
  #have = 0;
  #need = HEADER;

  #read(chunk: Buffer): void {
    if (this.#broken) return;
    this.#chunks.push(chunk);
    this.#have += chunk.length;
    if (this.#have < this.#need) return;
    const buf = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#have);
    this.#chunks = [];
    this.#have = 0;
    this.#need = HEADER;
    let at = 0;
    while (buf.length - at >= HEADER) {
      const len = buf.readUInt32BE(at);
      if (len > this.#maxFrame) return this.#break(`sent a message of ${len} bytes, over the channel's limit of ${this.#maxFrame}`);
      if (buf.length - at - HEADER < len) {
        this.#need = HEADER + len;
        break;
      }
      let m: unknown;
      try {
        const format = buf[at + HEADER];
        if (format === JSON_TEXT) m = JSON.parse(buf.toString('utf8', at + HEADER + 1, at + HEADER + len));
        else if (format === V8 && len > 1) m = v8.deserialize(buf.subarray(at + HEADER + 1, at + HEADER + len));
        else throw new Error(`unknown format ${format}`);
      } catch (err) {
        return this.#break(`sent a message that does not deserialize (${(err as Error).message})`);
      }
      at += HEADER + len;
      this.#events.message(m);
      if (this.#broken) return;
    }
    if (at < buf.length) {
      this.#chunks.push(buf.subarray(at));
      this.#have = buf.length - at;
    }
  }

  #break(reason: string): void {
    this.#broken = true;
    this.#chunks = [];
    this.#socket.destroy();
    this.#events.broken(reason);
  }
}
