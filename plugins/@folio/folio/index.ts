// First-party plugin: the catalogue, for agents facing many tools. `folio.find_tools` searches the
// functions this caller may call by words and answers their argument schemas, so an agent need not
// hold every tool in its context; `folio.pin` chooses the namespaces MCP lists (with any pinned,
// tools/list holds only theirs and these two; every tool can still be called).
import { Type } from 'typebox';
import { definePlugin, defineFunction } from 'folio/sdk';

const find_tools = defineFunction({
  title: 'Find tools',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'Search the tools you can call by what they do (words in their names, titles and descriptions), best first, with their argument schemas; call a found tool by the name given. Use it when the tool you need is not listed.',
  args: Type.Object({
    query: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'What the tool should do, e.g. "upload a file" or "transcribe audio".',
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'How many tools at most.' })),
  }),
  returns: Type.Object({
    tools: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The name to call it by.' }),
        title: Type.Optional(Type.String()),
        description: Type.String(),
        input_schema: Type.Object({}, { additionalProperties: true, description: 'Its arguments (JSON Schema).' }),
        read_only: Type.Boolean(),
      }),
    ),
    total: Type.Integer({ description: 'How many tools matched in all.' }),
  }),
  examples: [{ args: { query: 'share a file' } }],
  handler: async ({ query, limit }, ctx) => {
    const found = await ctx.services.catalogue.find(query, limit ?? 5);
    return {
      tools: found.hits.map((h) => ({
        name: ctx.ref(`${h.namespace}.${h.function}`),
        ...(h.title ? { title: h.title } : {}),
        description: h.description,
        input_schema: h.args as Record<string, unknown>,
        read_only: h.annotations.readOnlyHint === true,
      })),
      total: found.total,
    };
  },
});

const pin = defineFunction({
  title: 'Pin namespaces',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description:
    "Choose the namespaces whose tools are listed to you (MCP tools/list), e.g. ['notetaker', 'search']; an empty list lists everything again. Unlisted tools stay callable and findable with folio.find_tools.",
  args: Type.Object({
    namespaces: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), {
      maxItems: 50,
      description: 'The namespaces to pin; [] to pin none.',
    }),
  }),
  returns: Type.Object({ pinned: Type.Array(Type.String(), { description: 'The pins now.' }) }),
  examples: [{ args: { namespaces: ['notetaker', 'search'] } }],
  handler: async ({ namespaces }, ctx) => ({ pinned: await ctx.services.catalogue.pin(namespaces) }),
});

const pins = defineFunction({
  title: 'Pinned namespaces',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description: 'The namespaces you pinned (none: every namespace is listed).',
  args: Type.Object({}),
  returns: Type.Object({ pinned: Type.Array(Type.String()) }),
  handler: async (_args, ctx) => ({ pinned: await ctx.services.catalogue.pins() }),
});

export default definePlugin({
  namespace: 'folio',
  description: 'The tool catalogue: find the tools you can call by what they do, and pin the namespaces you want listed.',
  catalogue: 'public',
  functions: { find_tools, pin, pins },
});
