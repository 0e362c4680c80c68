// The channel between Folio and a plugin's host process: one socket (a socketpair Folio made, fd 3
// in the host), carrying frames of a 4-byte big-endian length and a v8.serialize'd message. V8's
// serializer keeps bytes as bytes (a file's content crosses without base64) and costs less than
// JSON for the small messages a call is made of (bench/plugin-host.ts measures the channel).
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
}

const HEADER = 4;

export class Channel {
  readonly #socket: Duplex;
  readonly #maxFrame: number;
  #maxSend: number;
  readonly #events: ChannelEvents;
  #broken = false;

  constructor(socket: Duplex, maxFrame: number, events: ChannelEvents) {
    this.#socket = socket;
    this.#maxFrame = maxFrame;
    this.#maxSend = maxFrame;
    this.#events = events;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    // A peer that goes away is seen as the process's exit; the socket's own error adds nothing.
    socket.on('error', () => {});
  }

  /**
   * Serializes and writes now (a value that cannot cross throws here, to the sender). Written at
   * once, not at the end of the turn: a log line a handler sends before it computes for a while
   * must reach Folio before the computing ends.
   */
  send(m: unknown): void {
    const body = v8.serialize(m);
    if (body.length > this.#maxSend)
      throw new RangeError(`a message of ${body.length} bytes is over the channel's limit of ${this.#maxSend}`);
    if (this.#socket.destroyed) return;
    const frame = Buffer.allocUnsafe(HEADER + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, HEADER);
    this.#socket.write(frame);
  }

  /** Bytes sent and not yet taken by the peer (queued here or in the socket). */
  get backlog(): number {
    return this.#socket.writableLength;
  }

  /**
   * Sends no message longer than the peer reads (`maxFrame` otherwise): one longer would break the
   * channel at the other end, and with it every call the peer is running.
   */
  limitSends(bytes: number): void {
    this.#maxSend = Math.min(this.#maxSend, bytes);
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
        m = v8.deserialize(buf.subarray(at + HEADER, at + HEADER + len));
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
