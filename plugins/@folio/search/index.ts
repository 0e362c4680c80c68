// First-party plugin: global search for agents. One ranked list over the caller's notes, files and
// transcripts (and any kind a later group registers), through ctx.services.search, bound to the
// caller: the policy decides which kinds they may read. Answers are shaped for an agent: ids
// first, snippets clipped so a page fits the call's byte ceiling, and `next`, the call that
// continues.
import { Type } from 'typebox';
import { definePlugin, defineFunction, type GlobalSearchHit } from 'folio/sdk';

const READ = { scopes: ['search'] };
/** The part of the call's byte ceiling the hits may take. */
const SHARE = 0.6;
const SNIPPET_CHARS = 300;

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

const row = (h: GlobalSearchHit) => ({
  kind: h.kind,
  id: h.id,
  title: clip(h.title, 200),
  ...(h.where ? { where: h.where } : {}),
  snippet: clip(h.snippet, SNIPPET_CHARS),
  updated_at: h.updated_at,
  ...(h.content_type ? { content_type: h.content_type } : {}),
  ...(h.match === 'fuzzy' ? { match: h.match } : {}),
});

const Args = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 1000,
    description:
      'Web-search syntax: words (all must match), "exact phrase", -word to exclude, a OR b. Any language; small typos are tolerated.',
  }),
  kinds: Type.Optional(
    Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), {
      maxItems: 16,
      description: 'Only these kinds (note, file, transcript; search.kinds lists them). Default: all you may read.',
    }),
  ),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 16, description: 'Only with all these tags.' })),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'Updated on or after this ISO date or date-time.' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'Updated on or before this ISO date or date-time.' })),
  type: Type.Optional(
    Type.String({ maxLength: 130, description: 'Only files of this content type (application/pdf) or family (audio/*).' }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Hits per answer (fewer when the byte ceiling bites).' }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'From `next`: leave it to that call.' })),
});

const query = defineFunction({
  title: 'Search everything',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'Search all your notes, files (names and text, PDFs page by page) and transcripts at once, best match first. ' +
    "Each hit: kind and id (read it with that kind's functions: notetaker.get, files.text, transcribe.transcript), title, where the match is (page, start_seconds, heading) and a snippet with the matched words in « ». " +
    '`next` is the call that continues; null at the end.',
  args: Args,
  returns: Type.Object({
    hits: Type.Array(
      Type.Object({
        kind: Type.String(),
        id: Type.String(),
        title: Type.String(),
        where: Type.Optional(
          Type.Object({
            page: Type.Optional(Type.Integer()),
            start_seconds: Type.Optional(Type.Number()),
            heading: Type.Optional(Type.String()),
          }),
        ),
        snippet: Type.String(),
        updated_at: Type.String(),
        content_type: Type.Optional(Type.String()),
        match: Type.Optional(Type.Literal('fuzzy')),
      }),
    ),
    kinds: Type.Array(Type.String(), { description: 'The kinds searched.' }),
    next: Type.Union([Type.String(), Type.Null()], { description: 'The call for the next hits; null when there are no more.' }),
  }),
  examples: [
    { args: { q: 'budget 2027' }, description: 'everything mentioning both words' },
    { args: { q: '"action items"', kinds: ['transcript'] }, description: 'a phrase, in transcripts only' },
    { args: { q: 'invoice', type: 'application/pdf' }, description: 'PDF files' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const { cursor, limit: asked, ...filters } = args;
    const opts = { q: filters.q, kinds: filters.kinds, tags: filters.tags, from: filters.from, to: filters.to, type: filters.type };
    const limit = asked ?? 10;
    let page = await ctx.services.search.query({ ...opts, limit, ...(cursor ? { cursor } : {}) });
    const budget = Math.max(400, Math.floor(ctx.budget * SHARE));
    const hits: Array<ReturnType<typeof row>> = [];
    let size = 2;
    for (const h of page.hits) {
      const r = row(h);
      const b = bytes(r) + 1;
      if (hits.length > 0 && size + b > budget) break;
      hits.push(r);
      size += b;
    }
    // The ceiling cut the page short: ask again for exactly what fits, for a cursor that continues there.
    if (hits.length < page.hits.length)
      page = await ctx.services.search.query({ ...opts, limit: hits.length, ...(cursor ? { cursor } : {}) });
    const rest = Object.fromEntries(
      Object.entries({ ...filters, ...(asked !== undefined ? { limit: asked } : {}) }).filter(([, v]) => v !== undefined),
    );
    return {
      hits,
      kinds: page.kinds,
      next: page.next_cursor ? ctx.ref('search.query', { ...rest, cursor: page.next_cursor }) : null,
    };
  },
});

const kinds = defineFunction({
  title: 'Kinds of search results',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description: 'The kinds of resource search covers here (note, file, transcript, ...), and whether your hits include each.',
  args: Type.Object({}),
  requires: READ,
  handler: async (_args, ctx) => ({ kinds: await ctx.services.search.kinds() }),
});

export default definePlugin({
  namespace: 'search',
  description: 'Search everything of yours at once: notes, files and transcripts in one ranked list.',
  catalogue: 'public',
  functions: { query, kinds },
});
