// An example Folio plugin: bookmarks, kept in memory per user. Walk-through: docs/plugins.md.
import { Type } from 'typebox';
import { definePlugin } from 'folio/sdk';
import { BookmarkStore } from './lib/store.ts';

// Module state lives as long as this version of the plugin: a restart or any edit (hot reload)
// starts with an empty store. A real plugin would persist through ctx.services.
const store = new BookmarkStore();

// Help renders an argument's own constraints, not those of its items: say the tag format in the
// description of `tags` too, or a model has to learn it from a 400.
const Tag = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$' });

const Bookmark = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  added_at: Type.String({ format: 'date-time' }),
});

const AddArgs = Type.Object({
  url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'The address to keep (http or https).' }),
  title: Type.Optional(Type.String({ maxLength: 200, description: 'What to call it; the URL when left out.' })),
  tags: Type.Optional(
    Type.Array(Tag, {
      maxItems: 10,
      uniqueItems: true,
      description: 'Tags to find it by later: lowercase letters, digits and dashes, up to 32 characters each.',
    }),
  ),
});

const ListArgs = Type.Object({
  tag: Type.Optional(Type.String({ description: 'Only bookmarks with this tag.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'At most this many, newest first.' })),
});

const RemoveArgs = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The id from add or list.' }),
});

export default definePlugin({
  namespace: 'bookmarks',
  description: 'Your bookmarks: keep links with tags and find them again.',
  catalogue: 'public',
  // Everyone but guests. An operator can still force it on or off per user (admin.set_namespace_access).
  visible: (caller) => !caller.user.roles.includes('guest'),
  functions: {
    add: {
      description:
        'Bookmark a URL, with an optional title and tags. Adding a URL you already have keeps its id and replaces its title and tags.',
      args: AddArgs,
      returns: Bookmark,
      examples: [
        { args: { url: 'https://example.com/' }, description: 'just the link' },
        { args: { url: 'https://nodejs.org/api/', title: 'Node.js API', tags: ['docs', 'node'] }, description: 'with a title and tags' },
      ],
      handler: (args, ctx) => {
        const bookmark = store.add(ctx.caller.user.id, args);
        ctx.log.info({ bookmark: bookmark.id }, 'bookmark added');
        return bookmark;
      },
    },
    list: {
      description: 'List your bookmarks, newest first; total counts all that match, not just those returned.',
      args: ListArgs,
      returns: Type.Object({ bookmarks: Type.Array(Bookmark), total: Type.Integer() }),
      examples: [{ args: {} }, { args: { tag: 'docs', limit: 5 }, description: 'the five newest tagged docs' }],
      // `limit` has a default, so the validator fills it in: it is always a number here.
      handler: (args, ctx) => store.list(ctx.caller.user.id, { tag: args.tag, limit: args.limit ?? 20 }),
    },
    remove: {
      description: 'Remove one of your bookmarks by id. Answers removed: false when you have no bookmark with that id.',
      args: RemoveArgs,
      returns: Type.Object({ removed: Type.Boolean() }),
      examples: [{ args: { id: '0b5e4f6e-9a7c-4d2b-8f1e-3c6a2d9b7e10' } }],
      handler: (args, ctx) => ({ removed: store.remove(ctx.caller.user.id, args.id) }),
    },
    stats: {
      description: 'How many users have bookmarks and how many there are in all. For operators.',
      returns: Type.Object({ users: Type.Integer(), bookmarks: Type.Integer() }),
      requires: { roles: ['admin'] },
      handler: () => store.stats(),
    },
  },
});
