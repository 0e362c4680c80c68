// Type-level test of the plugin SDK: handler arguments are inferred from a TypeBox `args` schema,
// in defineFunction and in functions written inline in definePlugin. Never run: `npm run typecheck`
// checks it, and each `@ts-expect-error` fails the typecheck if the line below it is NOT an error.
import { Type } from 'typebox';
import { defineFunction, definePlugin, type ArgsOf, type Context } from 'folio/sdk';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;
/** Compiles only when T is `true`. */
function expectTrue<T extends true>(): T | undefined {
  return undefined;
}

const EchoArgs = Type.Object({
  text: Type.String(),
  times: Type.Optional(Type.Integer({ default: 1 })),
  mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('shout')])),
});
type Echo = { text: string; times?: number; mode?: 'plain' | 'shout' };

export const echo = defineFunction({
  description: 'Echo.',
  args: EchoArgs,
  handler: (args, ctx) => {
    expectTrue<Equal<typeof args, Echo>>();
    expectTrue<Equal<typeof ctx, Context>>();
    const { text, times } = args;
    return `${text.repeat(times ?? 1)} (${ctx.budget} bytes at most)`;
  },
});
expectTrue<Equal<ArgsOf<typeof EchoArgs>, Echo>>();
expectTrue<Equal<ReturnType<typeof echo.handler>, string | Promise<string>>>();

defineFunction({
  description: 'Reads an argument the schema does not declare.',
  args: EchoArgs,
  // @ts-expect-error `missing` is not in the schema
  handler: ({ missing }) => missing,
});

defineFunction({
  description: 'Treats a string argument as a number.',
  args: EchoArgs,
  handler: ({ text }) => {
    // @ts-expect-error text is a string
    const n: number = text;
    return n;
  },
});

defineFunction({
  description: 'Reads a literal union as something else.',
  args: EchoArgs,
  handler: ({ mode }) => {
    // @ts-expect-error mode is 'plain' | 'shout' | undefined
    const m: 'loud' | undefined = mode;
    return m;
  },
});

defineFunction({
  description: 'A hand-written type that disagrees with the schema.',
  args: EchoArgs,
  // @ts-expect-error the schema says text is a string
  handler: (args: { text: number }) => args.text,
});

// A hand-written type that agrees with the schema is still fine.
defineFunction({ description: 'Agrees.', args: EchoArgs, handler: (args: { text: string }) => args.text });

// A plain JSON Schema object (not TypeBox) or no schema: TypeScript cannot see the shape, so any.
defineFunction({
  description: 'Plain JSON Schema.',
  args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  handler: (args) => {
    expectTrue<IsAny<typeof args>>();
    return args.anything;
  },
});
defineFunction({
  description: 'Plain JSON Schema with a hand-written type.',
  args: { type: 'object', properties: { q: { type: 'string' } } },
  handler: (args: { q?: string }) => args.q,
});
defineFunction({
  description: 'No arguments.',
  handler: (args, ctx) => {
    expectTrue<IsAny<typeof args>>();
    return ctx.budget;
  },
});

// definePlugin: inline functions infer like defineFunction; defineFunction results and plain
// objects mix freely.
export const plugin = definePlugin({
  namespace: 'typed',
  description: 'Type-level test.',
  functions: {
    echo,
    inline: {
      description: 'Inline.',
      args: Type.Object({ id: Type.String({ format: 'uuid' }), limit: Type.Optional(Type.Integer()) }),
      handler: (args, ctx) => {
        expectTrue<Equal<typeof args, { id: string; limit?: number }>>();
        // @ts-expect-error `ids` is not in the schema
        void args.ids;
        return ctx.caller.user.id === args.id;
      },
    },
    plain: {
      description: 'Plain JSON Schema, annotated by hand.',
      args: { type: 'object', properties: { q: { type: 'string' } } },
      handler: (args: { q?: string }) => args.q ?? '',
    },
    none: {
      description: 'No arguments.',
      handler: async (_args, ctx) => ctx.services.pluginStatus(),
    },
  },
});
expectTrue<Equal<keyof typeof plugin.functions, 'echo' | 'inline' | 'plain' | 'none'>>();

definePlugin({
  namespace: 'typed',
  description: 'Inline, wrong use.',
  functions: {
    count: {
      description: 'Treats a string as a number.',
      args: Type.Object({ word: Type.String() }),
      // @ts-expect-error word is a string, it has no toFixed
      handler: ({ word }) => word.toFixed(2),
    },
  },
});
