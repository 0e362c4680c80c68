// Who is on the other end of a request, and how they addressed it, when Folio may sit behind
// reverse proxies. Forwarding headers (X-Forwarded-For/-Proto/-Host, Forwarded) are anyone's to
// write, so they count only on a connection from a proxy the operator named (http.trustedProxies):
// the client is then the right-most forwarded address that is not itself a trusted proxy (each
// proxy appends the address it saw; what is left of the last trusted hop is the client's word).
// Every throttle keyed by client (sign-in, share-link passwords) reads the address from here,
// through Koa's ctx.ip, on Folio's app and on the authorization server's alike.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type Koa from 'koa';

/** The proxies whose forwarding headers are believed: addresses and CIDR ranges (validated in core/kernel/config.ts). */
export class ProxyTrust {
  readonly #list = new BlockList();
  readonly #any: boolean;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address = '', bits] = entry.split('/', 2);
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(bits), type);
    }
    this.#any = entries.length > 0;
  }

  trusts(address: string): boolean {
    const v = isIP(address);
    return this.#any && v !== 0 && this.#list.check(address, v === 6 ? 'ipv6' : 'ipv4');
  }
}

/** An address as a forwarding header or a socket writes it, without port, brackets or the IPv4-mapped prefix. */
export function normalizeAddress(raw: string): string {
  let a = raw.trim().replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]*)\]/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.indexOf(':'));
  a = a.toLowerCase();
  if (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4) a = a.slice(7);
  // Not an address (a proxy's "unknown" or an obfuscated name): kept as the proxy wrote it, bounded.
  return a.slice(0, 64);
}

/** Forwarded (RFC 7239) elements' `name=` values, left to right. */
function forwardedParams(header: string, name: string): string[] {
  const out: string[] = [];
  for (const element of header.split(','))
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === name)
        out.push(
          pair
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1'),
        );
    }
  return out;
}

/**
 * The addresses the proxies in front recorded, left (furthest) to right (nearest): X-Forwarded-For,
 * which common proxies write, or else Forwarded's `for=` (a proxy that writes only Forwarded
 * should drop a client's X-Forwarded-For).
 */
function forwardedFor(req: IncomingMessage): string[] {
  const xff = req.headers['x-forwarded-for'];
  if (typeof xff === 'string' && xff.trim()) return xff.split(',');
  const fwd = req.headers['forwarded'];
  return typeof fwd === 'string' ? forwardedParams(fwd, 'for') : [];
}

const ADDRESS = Symbol('client address');
type Remembered = IncomingMessage & { [ADDRESS]?: string };

const peerOf = (req: IncomingMessage, res?: ServerResponse) => normalizeAddress((req.socket ?? res?.socket)?.remoteAddress ?? '');

/** The client's address: the peer's, or behind trusted proxies the nearest hop that is not one. */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string {
  const remembered = (req as Remembered)[ADDRESS];
  if (remembered !== undefined) return remembered;
  let client = peerOf(req);
  if (trust.trusts(client)) {
    const hops = forwardedFor(req);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizeAddress(hops[i]!);
      if (!hop) break;
      client = hop;
      if (!trust.trusts(hop)) break;
    }
  }
  (req as Remembered)[ADDRESS] = client;
  return client;
}

/** The first value of a trusted proxy's X-Forwarded-<name> (or Forwarded's `<name>=`), else undefined. */
function forwardedValue(
  req: IncomingMessage,
  res: ServerResponse | undefined,
  trust: ProxyTrust,
  name: 'proto' | 'host',
): string | undefined {
  if (!trust.trusts(peerOf(req, res))) return undefined;
  const x = req.headers[`x-forwarded-${name}`];
  const first = typeof x === 'string' && x.trim() ? x.split(',', 1)[0] : forwardedParams(String(req.headers['forwarded'] ?? ''), name)[0];
  return first?.trim() || undefined;
}

const SETTINGS = Symbol('proxy trust');
/** The app's trust, its public origin if fixed, and Koa's own request prototype (whose getters these stand in for). */
type Trusting = Koa & { [SETTINGS]?: { trust: ProxyTrust; origin: URL | undefined; koa: object } };

/** What the getters below are called on: a Koa request of an app trustProxies set up. */
interface KoaRequestLike {
  app: Trusting;
  req: IncomingMessage;
  res: ServerResponse;
}

const settings = (r: KoaRequestLike) => r.app[SETTINGS]!;

function ip(this: KoaRequestLike): string {
  return clientAddress(this.req, settings(this).trust);
}

// From whichever of the request's or the response's socket is still there: Node lets go of the
// request's when an answer is made after the server stopped reading an upload.
function protocol(this: KoaRequestLike): string {
  const { trust, origin } = settings(this);
  if (origin) return origin.protocol.slice(0, -1);
  const socket = (this.req.socket ?? this.res.socket) as Partial<TLSSocket> | null;
  if (socket?.encrypted) return 'https';
  return forwardedValue(this.req, this.res, trust, 'proto')?.toLowerCase() ?? 'http';
}

function host(this: KoaRequestLike): string {
  const { trust, origin, koa } = settings(this);
  if (origin) return origin.host;
  return forwardedValue(this.req, this.res, trust, 'host') ?? (Reflect.get(koa, 'host', this) as string);
}

/**
 * Makes a Koa app's ctx.ip, ctx.protocol and ctx.host (and so ctx.origin, ctx.href, ctx.secure)
 * follow the rules above: forwarding headers only from trusted proxies. With `origin` (the public
 * URL), protocol and host are always its own: the authorization server's endpoints then name the
 * address it is known by, whatever a request says.
 */
export function trustProxies(app: Koa, trust: ProxyTrust, origin?: URL): void {
  // Koa's own reading of the headers (ctx.ips, and the getters replaced here) trusts any peer: off.
  app.proxy = false;
  (app as Trusting)[SETTINGS] = { trust, origin, koa: Object.getPrototypeOf(app.request) as object };
  Object.defineProperties(app.request, {
    ip: { configurable: true, get: ip },
    protocol: { configurable: true, get: protocol },
    host: { configurable: true, get: host },
  });
}
