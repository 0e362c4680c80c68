// A Folio server in its own process, for bench/files.ts: it sends {url, token} once it serves, then
// answers {cmd:'rss'} with its resident set size and CPU time so far, until {cmd:'stop'}.
// argv: [dataDir]  (an empty folder the parent made and removes after this process is gone)
import { createUserToken, send, startBenchFolio, stopOnParentRequest } from '../lib.ts';

const dataDir = process.argv[2] || undefined;
try {
  const folio = await startBenchFolio({ plugins: [], watch: false, dataDir });
  const { token } = await createUserToken(folio.url);
  process.on('message', (m) => {
    if ((m as { cmd?: string })?.cmd === 'rss') {
      const cpu = process.cpuUsage();
      send({ rss: process.memoryUsage.rss(), cpuMs: (cpu.user + cpu.system) / 1000 });
    }
  });
  stopOnParentRequest(() => folio.close());
  send({ url: folio.url, token });
} catch (err) {
  send({ error: (err as Error).stack ?? String(err) });
  process.exit(1);
}
