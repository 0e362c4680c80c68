// GET /curl/help/{namespace}?wait=N: a namespace still loading (a plugin just dropped in) is waited
// for, up to N seconds, before the 404 (the README's hello example relies on it).
import t from 'tap';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { startTestServer, req, createUser, FIXTURES } from '../helpers/server.ts';

const s = await startTestServer({ plugins: [path.join(FIXTURES, 'basic')] });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');

t.test('wait takes plain seconds from 0 to 10, nothing else', async (t) => {
  for (const bad of ['11', '-1', '0x2', '1e1', 'true', '', '2s', '1.5.1']) {
    const r = await req(s, 'GET', `/curl/help/acme?wait=${encodeURIComponent(bad)}`, { token: alice.token });
    t.equal(r.status, 400, `wait=${bad} is refused`);
    t.match(r.text, /wait must be a number of seconds from 0 to 10/);
  }
  const r = await req(s, 'GET', '/curl/help/acme?wait=0.5', { token: alice.token });
  t.equal(r.status, 200, 'a namespace that is there answers at once');
});

t.test('a namespace that never comes is a 404 once the wait is over', async (t) => {
  const r = await req(s, 'GET', '/curl/help/nosuchns?wait=0.3', { token: alice.token });
  t.equal(r.status, 404);
});

t.test('a plugin dropped in while the caller waits is answered, not a 404', async (t) => {
  const waiting = req(s, 'GET', '/curl/help/greeter?wait=10', { token: alice.token });
  await cp(path.join(FIXTURES, 'typed', 'greeter'), path.join(s.scratchPlugins, 'greeter'), { recursive: true });
  const r = await waiting;
  t.equal(r.status, 200, 'answered once the plugin loaded');
  t.match(r.text, /greeter/);
});
