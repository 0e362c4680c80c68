// The client's address behind reverse proxies: forwarding headers count only from a configured
// proxy, and then the right-most hop that is not itself a trusted proxy is the client.
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { clientAddress, normalizeAddress, ProxyTrust } from '../../core/surfaces/http/client-address.ts';
import { loadConfig } from '../../core/kernel/config.ts';

const request = (peer: string, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;

t.test('no trusted proxy: the peer, whatever the headers say', async (t) => {
  const none = new ProxyTrust([]);
  t.equal(clientAddress(request('203.0.113.9', { 'x-forwarded-for': '1.2.3.4' }), none), '203.0.113.9');
  t.equal(clientAddress(request('::ffff:127.0.0.1', { forwarded: 'for=1.2.3.4' }), none), '127.0.0.1', 'IPv4-mapped written as IPv4');
  const other = new ProxyTrust(['10.0.0.0/8']);
  t.equal(clientAddress(request('127.0.0.1', { 'x-forwarded-for': '1.2.3.4' }), other), '127.0.0.1', 'a peer that is not one of them');
});

t.test('from a trusted proxy: the right-most address that is not a trusted proxy', async (t) => {
  const trust = new ProxyTrust(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
  t.equal(clientAddress(request('127.0.0.1', { 'x-forwarded-for': '198.51.100.7' }), trust), '198.51.100.7');
  t.equal(
    clientAddress(request('127.0.0.1', { 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.1.2.3' }), trust),
    '198.51.100.7',
    'what the client wrote on the left is not believed; proxies on the right are skipped',
  );
  t.equal(clientAddress(request('127.0.0.1', { 'x-forwarded-for': '10.0.0.1, 10.0.0.2' }), trust), '10.0.0.1', 'all proxies: the furthest');
  t.equal(clientAddress(request('127.0.0.1'), trust), '127.0.0.1', 'no header: the peer');
  t.equal(
    clientAddress(request('127.0.0.1', { forwarded: 'for=6.6.6.6, for="[2001:DB8::17]:4711";proto=https, for=10.0.0.5' }), trust),
    '2001:db8::17',
    'Forwarded, when there is no X-Forwarded-For',
  );
  t.equal(clientAddress(request('127.0.0.1', { 'x-forwarded-for': '198.51.100.7:5123' }), trust), '198.51.100.7', 'a port is dropped');
  t.equal(clientAddress(request('127.0.0.1', { 'x-forwarded-for': 'unknown' }), trust), 'unknown', 'a proxy that does not know');
});

t.test('addresses as headers write them', async (t) => {
  t.equal(normalizeAddress(' [::1]:80 '), '::1');
  t.equal(normalizeAddress('"192.0.2.1:8080"'), '192.0.2.1');
  t.equal(normalizeAddress('::FFFF:192.0.2.1'), '192.0.2.1');
  t.equal(normalizeAddress('x'.repeat(500)).length, 64, 'bounded');
});

t.test('http.trustedProxies takes addresses and CIDR ranges; anything else stops the start', async (t) => {
  const ok = loadConfig({ env: { TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1 ::1,fd00::/8' } });
  t.same(ok.http.trustedProxies, ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
  t.same(loadConfig({ env: {} }).http.trustedProxies, [], 'none by default');
  for (const bad of ['localhost', '::1/129', '10.0.0.0/8/1'])
    t.throws(() => loadConfig({ env: { TRUSTED_PROXIES: bad } }), /http\.trustedProxies \(from TRUSTED_PROXIES\)/, bad);
});
