// A few hundred hostile requests over every surface (bench/fuzz.ts, seeded: the same requests on
// every run): no answer is a 5xx, every log line is JSON, nothing goes to stderr, and the server is
// healthy afterwards. The full run (10,000+ requests, Folio as `npm start` runs it) is
// `npx node bench/fuzz.ts`.
import t from 'tap';
import { pino } from 'pino';
import { fuzz, nonJsonLines, setupFuzz } from '../../bench/fuzz.ts';
import { req, startTestServer } from '../helpers/server.ts';

const lines: string[] = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
const stderr: string[] = [];
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk: string | Uint8Array, ...rest: never[]) => {
  stderr.push(String(chunk));
  return write(chunk, ...rest);
};
t.teardown(() => {
  process.stderr.write = write;
});

const s = await startTestServer({ log });
t.teardown(() => s.close());

t.test('300 seeded hostile requests: no 5xx, only JSON log lines, still healthy', async (t) => {
  const tokens = await setupFuzz(s.url, s.adminToken);
  const r = await fuzz(Number(new URL(s.url).port), tokens, { requests: 300, seconds: 150, seed: 20261123, concurrency: 4 });
  t.equal(r.sent, 300, 'every request was sent');
  t.same(r.serverErrors, [], 'no 5xx');
  t.ok(Object.keys(r.bySurface).length === 5, `every surface was hit: ${JSON.stringify(r.bySurface)}`);
  t.same(nonJsonLines(lines.join('')), [], 'every log line is JSON');
  t.same(stderr, [], 'nothing on stderr');
  t.equal((await req(s, 'GET', '/health')).status, 200, 'healthy afterwards');
});
