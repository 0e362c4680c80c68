// The search group: one ranked list over everything of yours that has text (notes, files,
// transcripts, and whatever later groups register). A route table over SearchService; which kinds
// a caller may see is the policy's answer (namespace visible, token scope), asked per kind.
import { Type } from 'typebox';
import { LIMIT_CLAMPED, pageReply, route, type Route } from '../../../contract/rest.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../notes/types.ts';
import { MAX_TERMS, type SearchService } from '../service.ts';

const tags = ['search'];

const Location = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'The page of a PDF the match is on.' })),
    start_seconds: Type.Optional(Type.Number({ minimum: 0, description: 'When the transcript segment with the match starts.' })),
    heading: Type.Optional(Type.String({ description: 'The heading of the note section the match is in.' })),
  },
  { $id: 'SearchLocation' },
);

export const Hit = Type.Object(
  {
    kind: Type.String({ description: 'note, file, transcript, ... (what GET /search/kinds lists).' }),
    id: Type.String({ format: 'uuid' }),
    title: Type.String(),
    snippet: Type.String({ description: 'Text around the first match, the matched words between « and ».' }),
    where: Type.Union([Location, Type.Null()], { description: 'Where the match is; null when only the title matched.' }),
    updated_at: Type.String({ format: 'date-time' }),
    link: Type.String({ description: 'The resource on this REST API.' }),
    tags: Type.Array(Type.String()),
    content_type: Type.Union([Type.String(), Type.Null()], { description: "A file's content type; null for other kinds." }),
    rank: Type.Number(),
    match: Type.Union([Type.Literal('fulltext'), Type.Literal('fuzzy')], {
      description: 'fuzzy: words of the query that matched nothing were replaced by close words (typo tolerance).',
    }),
  },
  { $id: 'SearchHit' },
);

const Page = Type.Object(
  {
    hits: Type.Array(Hit),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    limit: Type.Integer(),
    limit_clamped_from: Type.Optional(Type.Integer()),
    kinds: Type.Array(Type.String(), { description: 'The kinds searched: those asked for that you may read.' }),
  },
  { $id: 'SearchPage' },
);

const Kinds = Type.Object(
  {
    kinds: Type.Array(
      Type.Object({
        kind: Type.String(),
        readable: Type.Boolean({
          description: 'Whether your hits include this kind (its group is on for you and your token may read it).',
        }),
        scope: Type.String({ description: 'The scope a token needs for this kind.' }),
      }),
    ),
  },
  { $id: 'SearchKinds' },
);

const IsoDate = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}([Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?([Zz]|[+-]\\d{2}:?\\d{2})?)?$',
  description: 'ISO 8601 date (2026-03-01) or date-time (2026-03-01T09:00:00Z), inclusive, on updated_at.',
});

const Query = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: `Web-search syntax, as in note search: words (all must match), "quoted phrases", -excluded, a OR b; at most ${MAX_TERMS} terms. Any language; typos are tolerated (such hits have match=fuzzy).`,
    }),
    kind: Type.Optional(
      Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), {
        maxItems: 16,
        description: 'Only these kinds; repeat for several: kind=note&kind=file. Default: every kind you may read.',
      }),
    ),
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 16,
        description: 'Only resources with every one of these tags.',
      }),
    ),
    from: Type.Optional(IsoDate),
    to: Type.Optional(IsoDate),
    type: Type.Optional(
      Type.String({
        maxLength: 130,
        description: 'Only files of this content type (application/pdf) or family (audio/*).',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: LIST_LIMIT_DEFAULT,
        description: `How many hits; default ${LIST_LIMIT_DEFAULT}, at most ${LIST_LIMIT_MAX} (a larger value is clamped, and limit_clamped_from says so).`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page, with the same q and filters.' }),
    ),
  },
  { additionalProperties: false },
);

export const COMPONENTS = { SearchHit: Hit, SearchPage: Page, SearchLocation: Location, SearchKinds: Kinds };

export function searchRoutes(search: SearchService): Route[] {
  return [
    route({
      id: 'search',
      method: 'GET',
      path: '/search',
      summary: 'Search everything',
      description:
        'One ranked list over your notes (title, tags, body), files (name and extracted text, page by page for PDFs) and transcripts (text with segment times), best match first. Each hit says its kind and id, a snippet around the match, where the match is (page, start_seconds or heading) and a link to the resource. Only kinds you may read are searched: a group switched off for you, or a token without its read scope, leaves its kind out. Long documents are searched to their end, phrases included. A search that runs past its time limit (5 s, PostgreSQL) is stopped and answered 503 search_timeout: narrow it.',
      tags,
      scopes: ['search'],
      query: Query,
      responses: { 200: { description: 'A page of hits.', schema: Page, headers: [LIMIT_CLAMPED] } },
      problems: ['search_timeout'],
      handler: async ({ principal, query, mayRead }) => {
        const readable = await search.readableKinds(mayRead);
        const page = await search.search(principal, readable, {
          q: query.q,
          kinds: query.kind,
          tags: query.tag,
          from: query.from,
          to: query.to,
          type: query.type,
          limit: query.limit,
          cursor: query.cursor,
        });
        return pageReply(page, query.limit);
      },
    }),
    route({
      id: 'searchKinds',
      method: 'GET',
      path: '/search/kinds',
      summary: 'Kinds of results',
      description: 'Every kind of resource search covers on this server, and whether your hits include it.',
      tags,
      scopes: ['search'],
      responses: { 200: { description: 'The kinds.', schema: Kinds } },
      handler: async ({ mayRead }) => {
        const readable = await search.readableKinds(mayRead);
        return {
          status: 200,
          body: { kinds: search.sources.map((s) => ({ kind: s.kind, readable: readable.includes(s.kind), scope: s.scope })) },
        };
      },
    }),
  ];
}
