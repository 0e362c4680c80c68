// The files of a new plugin (`folio plugin new <name>`): a package that installs offline from the
// Folio it was made by (a file: link to the checkout, which brings folio/sdk, TypeBox and the test
// harness at Folio's own versions), with one typed function, a prompt, a skill, a passing test
// and a README.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ScaffoldOptions {
  /** The Folio checkout the plugin is made against (its devDependency, a file: link). */
  folioRoot: string;
  folioVersion: string;
}

export function scaffold(dir: string, name: string, opts: ScaffoldOptions): void {
  const [major, minor] = opts.folioVersion.split('.');
  const range = `^${major}.${minor}.0`;
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(
      {
        name: `folio-plugin-${name.replaceAll('_', '-')}`,
        version: '0.1.0',
        description: `The ${name} plugin for Folio.`,
        private: true,
        type: 'module',
        exports: './index.ts',
        folio: {
          engines: range,
          capabilities: { network: [], env: [], processes: false, workers: false },
        },
        scripts: {
          test: 'node --test test/*.test.ts',
          typecheck: 'node node_modules/folio/node_modules/typescript/bin/tsc -p .',
          check: `node ${path.join(opts.folioRoot, 'core/plugin-tool.ts')} check .`,
        },
        devDependencies: { folio: `file:${opts.folioRoot}` },
      },
      null,
      2,
    )}\n`,
    'tsconfig.json': `${JSON.stringify(
      {
        compilerOptions: {
          target: 'es2024',
          lib: ['es2024'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          verbatimModuleSyntax: true,
          erasableSyntaxOnly: true,
          skipLibCheck: true,
          typeRoots: ['./node_modules/folio/node_modules/@types'],
          types: ['node'],
        },
        include: ['*.ts', 'test/*.ts'],
      },
      null,
      2,
    )}\n`,
    'index.ts': `// The ${name} plugin: its functions are served as ${name}.<function> on curl, ${name}__<function> on MCP.
import { definePlugin, defineFunction, Type } from 'folio/sdk';

const greet = defineFunction({
  title: 'Greet someone',
  description: 'Says hello to someone by name.',
  annotations: { readOnlyHint: true, openWorldHint: false },
  args: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, description: 'Who to greet' }) }),
  returns: Type.Object({ greeting: Type.String() }),
  examples: [{ args: { name: 'Ada' }, description: 'Greets Ada' }],
  // \`name\` is typed string, from the args schema.
  handler: ({ name }) => ({ greeting: \`Hello, \${name}!\` }),
});

export default definePlugin({
  namespace: '${name}',
  description: 'Greets people (a new plugin: describe what yours does).',
  functions: { greet },
  prompts: {
    welcome: {
      title: 'Welcome someone',
      description: 'Asks the model to greet someone with ${name}.greet.',
      arguments: [{ name: 'name', description: 'Who to welcome', required: true }],
      render: (args, ctx) => \`Welcome \${args['name']} with \${ctx.ref('${name}.greet', { name: args['name'] })}.\`,
    },
  },
});
`,
    'skills/how_it_works.md': `---
name: how_it_works
description: 'What the ${name} namespace does and when to use it.'
---

# ${name}: how it works

Call \`${name}.greet\` with a \`name\` to get a greeting back.
`,
    'test/plugin.test.ts': `// Loads this plugin as Folio does (its bundler, its sandboxed host, its services on an embedded
// database of the test's own) and calls it as a user would. Run: npm test
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestFolio } from 'folio/sdk/testing';

const folio = await startTestFolio(path.join(import.meta.dirname, '..'));
after(() => folio.close());

test('greet answers with a greeting', async () => {
  const me = await folio.as({ email: 'ada@example.com' });
  assert.deepEqual(await me.call('greet', { name: 'Ada' }), { greeting: 'Hello, Ada!' });
});

test('greet refuses an empty name', async () => {
  const me = await folio.as();
  await assert.rejects(me.call('greet', { name: '' }), { code: 'validation_failed' });
});

test('the welcome prompt names the tool as the surface does', async () => {
  const onMcp = await folio.as({ surface: 'mcp' });
  assert.match(await onMcp.prompt('welcome', { name: 'Ada' }), /${name}__greet/);
  assert.equal(await onMcp.visible(), true);
});
`,
    'README.md': `# ${name}

A plugin for Folio, made by \`folio plugin new ${name}\`.

- \`index.ts\`: the plugin (functions, prompts), written with \`folio/sdk\` (TypeBox is \`Type\` from there).
- \`skills/\`: guides served to agents with the namespace.
- \`test/\`: tests with \`folio/sdk/testing\`, which loads the plugin as the server does.
- \`package.json\`: \`folio.engines\` is the range of Folio versions it works with (a server outside
  it does not load it), \`folio.capabilities\` what it asks the operator for (network hosts, env).

    npm install        # links the Folio it was made with (offline)
    npm test           # node --test, Node 24
    npm run typecheck
    npm run check      # loads it in a sandboxed host, lists what it holds, checks the range

Install it on a server with \`folio plugin add <this folder>\`.
`,
  };
  for (const [file, text] of Object.entries(files)) {
    const at = path.join(dir, file);
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, text);
  }
}
