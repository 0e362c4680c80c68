// ctx.services.<domain> is gated by the switch of the namespace that governs the domain
// (core/kernel/services.ts), and the gate wraps the API's async methods: a method that reads or
// writes data must be async to be gated. This holds every registered domain's binder to that, so a
// method written as a plain function returning a promise cannot slip past the gate.
import t from 'tap';
import type { Domain, DomainCaller } from '../../core/contract/domain.ts';
import { DOMAINS } from '../../core/domains.ts';

/** Members that are pure helpers (no data read or written), allowed to stay synchronous. */
const SYNC_HELPERS = new Set(['files.contentUrl']);

// Any property of the stand-in service is a function (the binders only keep references at bind time).
const service = new Proxy({}, { get: () => () => '' });
const caller: DomainCaller = {
  principal: { user: { id: 'u', email: 'u@example.com', roles: [] }, scopes: ['*'], tokenKind: 'api' } as never,
  entitle: () => {},
  mayRead: () => Promise.resolve(true),
  groupVisible: () => Promise.resolve(true),
};

const gated = (DOMAINS as ReadonlyArray<Domain<any, any>>).filter(
  (d) => d.bind && d.rest !== undefined && (!Array.isArray(d.rest) || d.rest.length === 1),
);
t.ok(gated.length >= 4, `the gated domains: ${gated.map((d) => d.name).join(', ')}`);
for (const domain of gated) {
  t.test(`services.${domain.name}: every data method is async`, async (t) => {
    const api = domain.bind!(service, caller) as Record<string, unknown>;
    const fns = Object.entries(api).filter(([, v]) => typeof v === 'function');
    t.ok(fns.length > 0);
    for (const [name, fn] of fns) {
      const key = `${domain.name}.${name}`;
      if (SYNC_HELPERS.has(key)) continue;
      t.equal((fn as () => unknown).constructor.name, 'AsyncFunction', key);
    }
  });
}
