// What a DOCX zip bomb does to everyone else's requests: uploads one (XML_MB MiB of XML, a few
// hundred KB on the wire) to a running server and asks /health every 50 ms until the file's text
// extraction has ended (or the server stopped answering), then prints the latencies.
//   FOLIO=http://127.0.0.1:3000 TOKEN=<a token with files:write> XML_MB=100 LIE=1 npx node bench/extract-bomb.ts
// LIE=1 declares word/document.xml as 1 KiB, so only the process limits stand in the way.
import { docxBomb, DOCX_TYPE } from '../test/helpers/docx-bomb.ts';

const base = process.env['FOLIO'] ?? 'http://127.0.0.1:3000';
const auth = { authorization: `Bearer ${process.env['TOKEN'] ?? ''}` };
const bomb = docxBomb({ xmlMb: Number(process.env['XML_MB'] ?? 100), lie: process.env['LIE'] === '1' });
const up = await fetch(`${base}/api/v1/filedb/files?name=bomb.docx`, {
  method: 'POST',
  headers: { ...auth, 'content-type': DOCX_TYPE },
  body: bomb,
});
if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`);
const { id } = (await up.json()) as { id: string };
console.log(`uploaded ${bomb.length} bytes as ${id}`);

const latencies: number[] = [];
const started = Date.now();
let outcome = 'pending';
while (outcome === 'pending' && Date.now() - started < 180_000) {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    latencies.push(performance.now() - t0);
    const text = await fetch(`${base}/api/v1/filedb/files/${id}/text`, { headers: auth });
    outcome = ((await text.json()) as { state: string; note: string | null }).state;
    if (outcome !== 'pending') console.log('text:', outcome);
  } catch (err) {
    outcome = `the server stopped answering (${(err as Error).message})`;
  }
  await new Promise((r) => setTimeout(r, 50));
}
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]?.toFixed(1);
console.log(
  `outcome: ${outcome}; ${latencies.length} /health answers in ${((Date.now() - started) / 1000).toFixed(1)} s: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`,
);
