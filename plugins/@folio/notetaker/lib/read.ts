// Reading: list, search, tags (get, which reads in parts, is in get.ts).
import { Type } from 'typebox';
import { defineFunction, normalizeTag, type NoteSummary, type SearchHit } from 'folio/sdk';
import { clip, jsonBytes } from './text.ts';
import { fitPage, moreHint, rowsBudget } from './paging.ts';
import { Cursor, DateArg, READ, TagsFilter } from './schemas.ts';

const SERVICE_MAX = 100;

// ---- list -------------------------------------------------------------------------------------

const ListArgs = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: SERVICE_MAX,
      default: 20,
      description: 'Notes per page, at most 100. A page may hold fewer to stay small; follow next_cursor.',
    }),
  ),
  cursor: Type.Optional(Cursor),
  tags: Type.Optional(TagsFilter),
  trashed: Type.Optional(Type.Boolean({ default: false, description: 'List the trash instead of your live notes.' })),
  excerpts: Type.Optional(Type.Boolean({ default: false, description: 'Add the first ~160 characters of each body.' })),
});

const ListRow = Type.Object({
  id: Type.String(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String(),
  version: Type.Integer(),
  body_bytes: Type.Integer(),
  excerpt: Type.Optional(Type.String()),
  deleted_at: Type.Optional(Type.String()),
});

export const list = defineFunction({
  title: 'List notes',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'List your notes, most recently updated first: one compact row per note (id, title, tags, updated_at, version, body_bytes), no bodies. ' +
    'Read a note with notetaker.get. When next_cursor is not null there are more: call again with cursor = next_cursor. ' +
    'total (when given) counts every match, not just this page. trashed: true lists the trash (restore with notetaker.restore).',
  args: ListArgs,
  returns: Type.Object({
    notes: Type.Array(ListRow),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    total: Type.Optional(Type.Integer()),
    more: Type.Optional(Type.String()),
  }),
  examples: [
    { args: {}, description: 'your 20 most recent notes' },
    { args: { tags: ['meeting'], limit: 50 }, description: 'notes tagged meeting' },
    { args: { trashed: true }, description: 'what is in the trash' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const trashed = args.trashed ?? false;
    const page = await fitPage({
      budget: rowsBudget(ctx.budget),
      cursor: args.cursor,
      limit: args.limit ?? 20,
      max: SERVICE_MAX,
      fetch: (cursor, limit) =>
        ctx.services.notes.list({ limit, trashed, ...(cursor !== undefined ? { cursor } : {}), ...(args.tags ? { tags: args.tags } : {}) }),
      row: (n: NoteSummary) => ({
        id: n.id,
        title: clip(n.title, 200),
        tags: n.tags.slice(0, 32),
        updated_at: n.updated_at,
        version: n.version,
        body_bytes: n.body_bytes,
        ...(args.excerpts ? { excerpt: clip(n.excerpt, 160) } : {}),
        ...(n.deleted_at ? { deleted_at: n.deleted_at } : {}),
      }),
    });
    const known = ctx.caller.notes;
    // Known for free from the caller's summary: all live notes, or those with one tag (stored normalized).
    const total = trashed
      ? undefined
      : !args.tags
        ? known.count
        : args.tags.length === 1
          ? (known.tags[normalizeTag(args.tags[0]!)] ?? 0)
          : undefined;
    return {
      notes: page.rows,
      next_cursor: page.next_cursor,
      ...(total !== undefined ? { total } : {}),
      ...moreHint(page.next_cursor, 'notes', ctx.ref('notetaker.list')),
    };
  },
});

// ---- search -----------------------------------------------------------------------------------

const SearchArgs = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 500,
    description:
      'What to look for, in web-search syntax: words, "exact phrase", -excluded, a OR b. Any language; accents and case are ignored; small typos are tolerated.',
  }),
  tags: Type.Optional(TagsFilter),
  from: Type.Optional(DateArg('Only notes updated on or after this date (ISO 8601: 2026-11-01 or 2026-11-01T09:00:00Z).')),
  to: Type.Optional(DateArg('Only notes updated on or before this date (ISO 8601).')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Hits per page, at most 50.' })),
  cursor: Type.Optional(Cursor),
});

const Hit = Type.Object({
  id: Type.String(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String(),
  version: Type.Integer(),
  match: Type.String(),
  snippet: Type.String(),
});

export const search = defineFunction({
  title: 'Search notes',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'Search your notes, best match first. q takes web-search syntax: words (all must match), "exact phrase", -word to exclude, a OR b. ' +
    'Works in any language (CJK included), ignores accents and case, and tolerates small typos (those hits say match: "fuzzy"). ' +
    'Each hit has the note id, title, tags and a snippet with the matched words in « ». Read a hit with notetaker.get. ' +
    'More hits: call again with cursor = next_cursor. Guide: GET /curl/skill/notetaker/search_syntax.',
  args: SearchArgs,
  returns: Type.Object({
    hits: Type.Array(Hit),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    more: Type.Optional(Type.String()),
  }),
  examples: [
    { args: { q: 'budget 2027' }, description: 'notes mentioning both words' },
    {
      args: { q: '"quarterly review" -draft', tags: ['meeting'], from: '2026-10-01' },
      description: 'a phrase, excluding drafts, in meeting notes since October',
    },
    { args: { q: '会議 OR meeting' }, description: 'any language' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const page = await fitPage({
      budget: rowsBudget(ctx.budget),
      cursor: args.cursor,
      limit: args.limit ?? 10,
      max: SERVICE_MAX,
      fetch: (cursor, limit) =>
        ctx.services.notes.search({
          q: args.q,
          limit,
          ...(cursor !== undefined ? { cursor } : {}),
          ...(args.tags ? { tags: args.tags } : {}),
          ...(args.from ? { from: args.from } : {}),
          ...(args.to ? { to: args.to } : {}),
        }),
      row: (h: SearchHit) => ({
        id: h.id,
        title: clip(h.title, 200),
        tags: h.tags.slice(0, 32),
        updated_at: h.updated_at,
        version: h.version,
        match: h.match,
        snippet: clip(h.snippet, 400),
      }),
    });
    return { hits: page.rows, next_cursor: page.next_cursor, ...moreHint(page.next_cursor, 'hits', ctx.ref('notetaker.search')) };
  },
});

// ---- tags -------------------------------------------------------------------------------------

const TagsArgs = Type.Object({
  prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only tags starting with this (case-insensitive).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Tags per page, at most 1000.' })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, default: 0, description: 'Skip this many (use next_offset from the previous answer).' }),
  ),
});

export const tags = defineFunction({
  title: 'List tags',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The tags on your live notes with how many notes carry each, most used first. total counts all tags that match; when next_offset is not null, call again with offset = next_offset.',
  args: TagsArgs,
  returns: Type.Object({
    tags: Type.Array(Type.Object({ tag: Type.String(), count: Type.Integer() })),
    total: Type.Integer(),
    next_offset: Type.Union([Type.Integer(), Type.Null()]),
    more: Type.Optional(Type.String()),
  }),
  examples: [{ args: {} }, { args: { prefix: 'proj' }, description: 'tags starting with proj' }],
  requires: READ,
  handler: async (args, ctx) => {
    const prefix = args.prefix?.toLowerCase();
    const all = (await ctx.services.notes.tags())
      .filter((t) => prefix === undefined || t.tag.toLowerCase().startsWith(prefix))
      .sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag));
    const offset = args.offset ?? 0;
    const out: Array<{ tag: string; count: number }> = [];
    let size = 2;
    for (const t of all.slice(offset, offset + (args.limit ?? 100))) {
      const b = jsonBytes(t) + 1;
      if (out.length > 0 && size + b > rowsBudget(ctx.budget)) break;
      out.push({ tag: t.tag, count: t.count });
      size += b;
    }
    const next = offset + out.length < all.length ? offset + out.length : null;
    return {
      tags: out,
      total: all.length,
      next_offset: next,
      ...(next !== null ? { more: `There are more tags: call ${ctx.ref('notetaker.tags')} again with offset ${next}.` } : {}),
    };
  },
});

export const usage = defineFunction({
  title: 'Show your storage use',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The bytes you store against your storage quota: used (every kind together), quota (null: no limit) and by_kind (notes: every revision as stored, a snapshot or a small delta each; files). ' +
    'A write that would go over the quota is refused (quota_exceeded) and stores nothing; purging notes from the trash frees their bytes.',
  args: Type.Object({}),
  returns: Type.Object({
    used: Type.Integer(),
    quota: Type.Union([Type.Integer(), Type.Null()]),
    by_kind: Type.Record(Type.String(), Type.Integer()),
  }),
  examples: [{ args: {} }],
  requires: READ,
  handler: async (_args, ctx) => ctx.services.notes.storageUse(),
});
