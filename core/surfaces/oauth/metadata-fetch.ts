// How the authorization server fetches a client ID metadata document (a client whose client_id is
// the https URL of its metadata): GET over https only, no redirects, a deadline, a size cap, and a
// guard against server-side request forgery: every address the host resolves to (or the address
// the URL names) must be a public one, unless private networks are allowed by configuration. The
// check is made on the address actually connected to (the lookup), so DNS rebinding cannot slip a
// private address in after it. oidc-provider caches what it fetched (Cache-Control max-age within
// the bounds set in provider.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export const METADATA_TIMEOUT_MS = 2500;
export const METADATA_MAX_BYTES = 5 * 1024;

/** Private, loopback, link-local, shared, multicast, documentation and reserved ranges. */
const SPECIAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  SPECIAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL.addSubnet(net, bits, 'ipv6');

/** Is `address` (an IP literal) outside the public internet? IPv4-mapped IPv6 is judged as IPv4. */
export function isSpecialAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return SPECIAL.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return SPECIAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface MetadataFetchOptions {
  allowPrivate: boolean;
  /** Extra trusted certificate authorities (PEM). */
  ca?: string | undefined;
  timeoutMs?: number;
  maxBytes?: number;
}

/** A `fetch` for oidc-provider's configuration, used only for client metadata documents. */
export function metadataFetch(opts: MetadataFetchOptions) {
  const timeoutMs = opts.timeoutMs ?? METADATA_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? METADATA_MAX_BYTES;
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = opts.allowPrivate ? addresses : addresses.filter((a) => !isSpecialAddress(a.address));
      if (usable.length === 0 || usable.length !== addresses.length)
        return callback(Object.assign(new Error(`${hostname} resolves to a private address`), { code: 'EPRIVATE' }), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };

  return (input: string | URL, init: { signal?: AbortSignal | null } = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'https:') return reject(new Error('client metadata documents are fetched over https only'));
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !opts.allowPrivate && isSpecialAddress(host)) return reject(new Error(`${host} is a private address: not fetched`));
      const request = https.request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json', 'user-agent': 'Folio' },
          lookup: guardedLookup,
          ...(opts.ca ? { ca: opts.ca } : {}),
          timeout: timeoutMs,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              reject(new Error(`the document is larger than ${maxBytes} bytes`));
              res.destroy();
              request.destroy();
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
            // No redirects are followed: a 3xx reaches the provider as it is, and it refuses it.
            resolve(
              new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), {
                status: res.statusCode ?? 502,
                headers,
              }),
            );
          });
        },
      );
      const late = () => {
        reject(new Error(`no answer within ${timeoutMs} ms`));
        request.destroy();
      };
      const deadline = setTimeout(late, timeoutMs);
      request.on('close', () => clearTimeout(deadline));
      request.on('timeout', late);
      request.on('error', reject);
      request.end();
    });
}
