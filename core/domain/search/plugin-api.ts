// What plugins get as ctx.services.search: global search acting as the caller. The scope search is
// checked first; which kinds are searched is the policy's answer for this caller, kind by kind.
import type { DomainCaller } from '../../contract/domain.ts';
import type { SearchOptions, SearchPage, SearchService } from './service.ts';

export interface SearchApi {
  /** One ranked page over every kind the caller may read (or those of `kinds`). */
  query(opts: SearchOptions): Promise<SearchPage>;
  /** Every kind of result this server has, and whether the caller's hits include it. */
  kinds(): Promise<Array<{ kind: string; readable: boolean; scope: string }>>;
}

export function bindSearch(search: SearchService, caller: DomainCaller): SearchApi {
  const readable = () => search.readableKinds((namespace, scope) => caller.mayRead(namespace, scope));
  return {
    async query(opts) {
      caller.entitle(['search'], 'search.query');
      return search.search(caller.principal, await readable(), opts);
    },
    async kinds() {
      caller.entitle(['search'], 'search.kinds');
      const r = await readable();
      return search.sources.map((s) => ({ kind: s.kind, readable: r.includes(s.kind), scope: s.scope }));
    },
  };
}
