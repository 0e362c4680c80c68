// The channel to a plugin's process and what Folio reads from it: frames split or joined anyhow
// arrive whole, a frame over the limit or bytes that are not one break the channel, a message that
// is small on the wire but huge to walk is not acted on, and granted hosts match as documented.
import t from 'tap';
import { Duplex, PassThrough } from 'node:stream';
import v8 from 'node:v8';
import { Channel } from '../../core/kernel/isolation/channel.ts';
import { decodeFromWorker, withinBounds } from '../../core/kernel/isolation/protocol.ts';
import { grantCapabilities, hostAllowed, type Capabilities } from '../../core/kernel/isolation/capabilities.ts';

/** A duplex whose reads come from `input` (written by the test) and whose writes are kept. */
function pipe(): { socket: Duplex; input: PassThrough; written: Buffer[] } {
  const input = new PassThrough();
  const written: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      written.push(chunk);
      done();
    },
  });
  input.on('data', (c: Buffer) => socket.push(c));
  return { socket, input, written };
}

function frame(m: unknown, json = false): Buffer {
  const body = json ? Buffer.from('J' + JSON.stringify(m)) : Buffer.concat([Buffer.from('V'), v8.serialize(m)]);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

t.test('frames split across chunks, and several in one chunk, arrive whole and in order', async (t) => {
  const { socket, input } = pipe();
  const got: unknown[] = [];
  new Channel(socket, 1 << 20, { message: (m) => got.push(m), broken: () => t.fail('not broken') });
  const all = Buffer.concat([frame({ a: 1 }), frame('two'), frame(new Uint8Array([1, 2, 3]))]);
  for (let i = 0; i < all.length; i += 3) input.write(all.subarray(i, i + 3));
  input.write(Buffer.concat([frame(4, true), frame({ five: [5] }, true)]));
  await new Promise((r) => setImmediate(r));
  t.same(got, [{ a: 1 }, 'two', new Uint8Array([1, 2, 3]), 4, { five: [5] }]);
});

t.test('a frame over the limit, or bytes that do not deserialize, break the channel saying why', async (t) => {
  for (const [bytes, why] of [
    [Buffer.from([0xff, 0xff, 0xff, 0xff, 0]), /4294967295 bytes, over the channel's limit of 1024/],
    [Buffer.from([0, 0, 0, 3, 0x56, 0xfe, 0xfe]), /does not deserialize/],
    [Buffer.from([0, 0, 0, 3, 0x4a, 0x7b, 0x7b]), /does not deserialize/],
    [Buffer.from([0, 0, 0, 2, 0x00, 0x00]), /unknown format/],
  ] as const) {
    const { socket, input } = pipe();
    const reasons: string[] = [];
    const got: unknown[] = [];
    new Channel(socket, 1024, { message: (m) => got.push(m), broken: (r) => reasons.push(r) });
    input.write(Buffer.concat([bytes, frame('after')]));
    await new Promise((r) => setImmediate(r));
    t.equal(reasons.length, 1);
    t.match(reasons[0], why);
    t.same(got, [], 'nothing after it is read');
  }
});

t.test('a peer that stops reading is given up once twice the largest frame waits for it', async (t) => {
  // A socket whose writes never complete: what is sent waits in its buffer.
  const stuck = new Duplex({ read() {}, write() {} });
  const reasons: string[] = [];
  const ch = new Channel(stuck, 64 * 1024, { message: () => {}, broken: (r) => reasons.push(r) });
  const big = 'x'.repeat(60 * 1024);
  for (let i = 0; i < 200 && reasons.length === 0; i++) {
    try {
      ch.send(big);
    } catch {
      break;
    }
  }
  t.equal(reasons.length, 1);
  t.match(reasons[0], /stopped reading/);
  t.throws(() => ch.send('more'), /gone/, 'nothing more is sent');
});

t.test('a message small on the wire but huge to walk is refused before anything walks it', async (t) => {
  // Each level points twice at the next: 2^30 paths through 30 objects.
  let x: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < 30; i++) x = { a: x, b: x };
  const wire = v8.serialize({ type: 'log', id: 'c', level: 'info', obj: x, msg: 'm' });
  t.ok(wire.length < 2000, `${wire.length} bytes on the wire`);
  const decoded = decodeFromWorker(v8.deserialize(wire));
  t.equal(decoded.type, 'invalid');
  t.match((decoded as { reason: string }).reason, /too large or too deep/);
  const sparse: unknown[] = [];
  sparse.length = 2 ** 32 - 1;
  t.notOk(withinBounds(v8.deserialize(v8.serialize(sparse))), 'a sparse array of 2^32 - 1 slots');
  t.ok(withinBounds({ items: Array.from({ length: 1000 }, (_, i) => ({ i, tags: ['a'] })) }), 'an ordinary answer');
});

t.test('granted hosts: asked and granted, with *. covering a domain and its subdomains', async (t) => {
  t.ok(hostAllowed(['*.example.com'], 'example.com'));
  t.ok(hostAllowed(['*.example.com'], 'API.example.com.'));
  t.notOk(hostAllowed(['*.example.com'], 'evilexample.com'));
  t.notOk(hostAllowed([], 'example.com'));
  const asked = (network: string[]): Capabilities => ({ network, env: ['KEY', 'OTHER'], processes: true, workers: false });
  const r = grantCapabilities(asked(['api.a.com', 'b.com']), { network: ['API.A.COM'], env: ['KEY', 'NOT_ASKED'] });
  t.same(r.granted, { network: ['api.a.com'], env: ['KEY'], processes: false, workers: false });
  t.same(r.missing, { network: ['b.com'], env: ['OTHER'], processes: true, workers: false });
  t.same(grantCapabilities(asked(['*']), { network: ['api.a.com'] }).granted.network, ['api.a.com'], 'any host asked, one granted');
  t.same(grantCapabilities(asked(['api.a.com']), { network: true }).granted.network, ['api.a.com'], 'one asked, any granted');
  t.same(grantCapabilities(asked(['api.a.com']), undefined).granted.network, [], 'nothing granted');
});
