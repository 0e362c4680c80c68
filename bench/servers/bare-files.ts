// The baseline for bench/files.ts: a bare node:http server doing the least a durable content store
// must do, in its own process like Folio's. POST streams the body into a staging file while hashing
// it (sha256), with the same durable writer as Folio's disk store (core/domain/files/durable-file.ts:
// written back behind the transfer, fsynced at the end), and renames it under its hash, answering
// {id, size}; GET /<id> streams the file back with its length. POST /discard reads the body and
// drops it, POST /hash also hashes it: how fast bytes reach Node here at all, and with sha256.
// POST /write writes the body to a new file and nothing else (no hash, no fsync), POST /durable
// also makes it durable (the same writer, no hash): what putting the bytes on this disk costs from
// a Node process, whatever the store does with them; each removes its file. No framework, no database, no
// checks: Folio against this is what Folio adds on top of Node for one transfer. It loads nothing
// of Folio (bench/util.ts, not bench/lib.ts, which imports the whole app: a larger heap makes every
// garbage collection during a transfer slower, see bench/README (f)). Sends {url} once it serves;
// stops on {cmd:'stop'}.
// argv: [dir]  (an empty folder the parent made and removes)
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { durableFile } from '../../core/domain/files/durable-file.ts';
import { send, stopOnParentRequest } from '../util.ts';

const dir = process.argv[2]!;
const CHUNK = 1024 * 1024;
const server = http.createServer((req, res) => {
  void (async () => {
    if (req.method === 'POST' && (req.url === '/discard' || req.url === '/hash')) {
      // The ceilings under any upload on this machine: the bytes through the loopback socket into
      // Node, and then also through sha256; nothing written.
      const hash = req.url === '/hash' ? createHash('sha256') : undefined;
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        hash?.update(chunk);
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: hash?.digest('hex') ?? '', size }));
    } else if (req.method === 'POST' && (req.url === '/write' || req.url === '/durable')) {
      const temp = path.join(dir, randomUUID());
      let size = 0;
      req.on('data', (chunk: Buffer) => (size += chunk.length));
      await pipeline(
        req,
        req.url === '/durable' ? durableFile(temp, { highWaterMark: CHUNK }) : createWriteStream(temp, { highWaterMark: CHUNK }),
      );
      await rm(temp);
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: '', size }));
    } else if (req.method === 'POST') {
      const temp = path.join(dir, randomUUID());
      const hash = createHash('sha256');
      let size = 0;
      const meter = new Transform({
        highWaterMark: CHUNK,
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(req, meter, durableFile(temp, { highWaterMark: CHUNK }));
      const id = hash.digest('hex');
      await rename(temp, path.join(dir, id));
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id, size }));
    } else {
      const file = path.join(dir, path.basename(req.url ?? ''));
      const s = await stat(file);
      res.writeHead(200, { 'content-length': s.size, 'content-type': 'application/octet-stream' });
      await pipeline(createReadStream(file, { highWaterMark: CHUNK }), res);
    }
  })().catch((err: Error) => {
    if (!res.headersSent) res.writeHead(500).end(err.message);
    else res.destroy();
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  stopOnParentRequest(() => new Promise<void>((r) => server.close(() => r())));
  send({ url: `http://127.0.0.1:${port}` });
});
