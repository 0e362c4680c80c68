// What a call costs with an OAuth access token against the same call with a personal API token:
// POST /curl/call/bench/noop on one Folio, the two tokens of one user taking turns (API, OAuth,
// API, OAuth, ...) under the same load, in the same run. The OAuth token comes from the real flow
// (registration, sign-in with a password, code + PKCE, token endpoint). Target: the OAuth call's
// req/s at least 1/1.1 of the API token's (costs no more than 10% over it).
//   npx node bench/oauth.ts [--quick]
//   DATABASE_URL=postgres://... npx node bench/oauth.ts [--quick]     (a fresh database on that server)
// Folio runs in this process, autocannon too: both tokens meet the same arrangement, so the ratio
// holds even where the absolute figures are lower than bench/call.ts's.
import autocannon from 'autocannon';
import { BENCH_PLUGINS, createUserToken, freshDatabase, startBenchFolio } from './lib.ts';
import { assertNode24, progress, round, sized } from './util.ts';
import { authorize, registerClient } from '../test/helpers/oauth.ts';

export const TARGET_OVERHEAD = 0.1;
const PATH = '/curl/call/bench/noop';

async function load(
  url: string,
  token: string,
  durationS: number,
): Promise<{ reqPerSec: number; p50Ms: number; p99Ms: number; non2xx: number }> {
  const r = await autocannon({
    url: url + PATH,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
    connections: 10,
    pipelining: 1,
    duration: durationS,
  });
  return { reqPerSec: r.requests.mean, p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx };
}

export async function runOAuthBench(opts: { quick: boolean }) {
  const db = process.env['DATABASE_URL'] ? await freshDatabase(process.env['DATABASE_URL']) : undefined;
  const folio = await startBenchFolio({ plugins: [BENCH_PLUGINS], databaseUrl: db?.url, watch: false });
  try {
    // One user: their API token (from admin.create_user), and a password they set with it to sign in.
    const { token: api } = await createUserToken(folio.url);
    const password = 'bench password long enough';
    const me = await fetch(`${folio.url}/api/v1/users/me`, { headers: { authorization: `Bearer ${api}` } });
    const { email } = (await me.json()) as { email: string };
    const set = await fetch(`${folio.url}/api/v1/users/me/password`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${api}`, 'content-type': 'application/json' },
      body: JSON.stringify({ password }),
    });
    if (set.status !== 204) throw new Error(`setting the password: ${set.status}`);
    const client = await registerClient(folio.url, 'Bench');
    const flow = await authorize(
      folio.url,
      client,
      { email, password },
      { resource: `${folio.url}/curl`, scope: 'notes:read notes:write' },
    );
    const oauth = flow.tokens?.access_token;
    if (!oauth) throw new Error('no OAuth token from the flow');

    const durationS = sized(opts.quick, 10, 3, 1);
    const rounds = sized(opts.quick, 3, 2, 1);
    progress(`oauth: warming up (${folio.engine})`);
    await load(folio.url, api, 1);
    await load(folio.url, oauth, 1);
    const apiRuns = [];
    const oauthRuns = [];
    for (let i = 0; i < rounds; i++) {
      progress(`oauth: round ${i + 1}/${rounds}, API token`);
      apiRuns.push(await load(folio.url, api, durationS));
      progress(`oauth: round ${i + 1}/${rounds}, OAuth token`);
      oauthRuns.push(await load(folio.url, oauth, durationS));
    }
    const sum = (xs: Array<{ reqPerSec: number }>) => xs.reduce((a, x) => a + x.reqPerSec, 0) / xs.length;
    const apiRps = sum(apiRuns);
    const oauthRps = sum(oauthRuns);
    const overhead = apiRps / oauthRps - 1;
    return {
      engine: folio.engine,
      durationS,
      rounds,
      api: { reqPerSec: round(apiRps, 0), runs: apiRuns },
      oauth: { reqPerSec: round(oauthRps, 0), runs: oauthRuns },
      /** How much more an OAuth call costs (time per call), as a share of an API-token call. */
      overhead: round(overhead * 100, 1),
      pass: overhead <= TARGET_OVERHEAD && apiRuns.concat(oauthRuns).every((r) => r.non2xx === 0),
    };
  } finally {
    await folio.close();
    await db?.drop();
  }
}

if (import.meta.main) {
  assertNode24();
  const quick = process.argv.includes('--quick');
  const r = await runOAuthBench({ quick });
  process.stdout.write(
    `oauth call cost (${r.engine}, ${r.rounds} x ${r.durationS}s each, alternating): API token ${r.api.reqPerSec} req/s, OAuth token ${r.oauth.reqPerSec} req/s, overhead ${r.overhead}% (target <= ${TARGET_OVERHEAD * 100}%) ${r.pass ? 'PASS' : 'FAIL'}\n`,
  );
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
