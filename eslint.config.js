// Lint: the recommended JavaScript rules and typescript-eslint's type-checked ones (floating
// promises, unsafe any, misused promises, ...), plus a few that catch real bugs in async server
// code. Style is prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

// The layers (docs/architecture.md). Imports point downward only; a breach fails `npm run lint`.
const LAYERS = [
  { type: 'curl', pattern: 'core/surfaces/curl' },
  { type: 'mcp', pattern: 'core/surfaces/mcp' },
  { type: 'rest', pattern: 'core/surfaces/rest' },
  { type: 'web', pattern: 'core/surfaces/(http|pages)' }, // what the surfaces share: body parsing, wording, pages
  { type: 'kernel', pattern: 'core/kernel' },
  { type: 'sdk', pattern: 'core/sdk' },
  { type: 'domain', pattern: 'core/domain' },
  { type: 'contract', pattern: 'core/contract' }, // errors, the REST route contract, the domain registration
  { type: 'db', pattern: 'core/db' },
  { type: 'plugin', pattern: 'plugins/@folio/*' },
  { type: 'plugin', pattern: 'plugins/*' },
  { type: 'plugin', pattern: 'docs/examples/*' },
  // Elements match in order: what is left directly in a folder is classified last.
  { type: 'web', pattern: 'core/surfaces' }, // health.ts
  { type: 'host', pattern: 'core' }, // app.ts, main.ts, domains.ts, migrate.ts: wire everything together
];
const not = (...types) => ({ to: { element: { types: { anyOf: types } } } });
const layering = {
  files: ['core/**/*.ts', 'plugins/**/*.ts', 'docs/examples/**/*.ts'],
  plugins: { boundaries },
  settings: { 'boundaries/elements': LAYERS, 'boundaries/include': ['core/**/*', 'plugins/**/*', 'docs/examples/**/*'] },
  rules: {
    'boundaries/dependencies': [
      'error',
      {
        default: 'allow',
        policies: [
          { from: { element: { type: 'domain' } }, disallow: not('kernel', 'curl', 'mcp', 'rest', 'web', 'host', 'sdk') },
          { from: { element: { type: 'db' } }, disallow: not('domain', 'kernel', 'curl', 'mcp', 'rest', 'web', 'host', 'sdk') },
          { from: { element: { type: 'contract' } }, disallow: not('kernel', 'curl', 'mcp', 'rest', 'web', 'host', 'sdk') },
          { from: { element: { type: 'kernel' } }, disallow: not('curl', 'mcp', 'rest', 'web', 'host') },
          { from: { element: { type: 'sdk' } }, disallow: not('kernel', 'curl', 'mcp', 'rest', 'web', 'host', 'db') },
          { from: { element: { type: 'web' } }, disallow: not('curl', 'mcp', 'rest', 'host') },
          // Surfaces do not import each other.
          { from: { element: { type: 'curl' } }, disallow: not('mcp', 'rest', 'host') },
          { from: { element: { type: 'mcp' } }, disallow: not('curl', 'rest', 'host') },
          { from: { element: { type: 'rest' } }, disallow: not('curl', 'mcp', 'host') },
          // Plugins see only the SDK (imported as 'folio/sdk') and their own files.
          {
            from: { element: { type: 'plugin' } },
            disallow: not('host', 'curl', 'mcp', 'rest', 'web', 'kernel', 'sdk', 'domain', 'contract', 'db'),
          },
        ],
      },
    ],
  },
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'data/',
      '.tap/',
      'coverage/',
      'test/fixtures/plugins/bad/',
      'bench/results/',
      'bench/.cache/',
      'sdk/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  // Plain JavaScript (this file, the .mjs plugin fixtures) has no types to check.
  { files: ['**/*.{js,mjs,cjs}'], ...tseslint.configs.disableTypeChecked },
  layering,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        Buffer: 'readonly',
        TextEncoder: 'readonly',
        performance: 'readonly',
        globalThis: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        structuredClone: 'readonly',
        WeakRef: 'readonly',
        URLSearchParams: 'readonly',
        Headers: 'readonly',
        queueMicrotask: 'readonly',
        document: 'readonly',
        window: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always'],
    },
  },
  // The server's code makes no getter per call: an object literal with a getter or setter, or a
  // defineProperty whose getter is a new function, built inside a function kept every request's
  // objects alive through V8's young-generation collections (measured: a third of what a request
  // allocated was promoted). Use a class (the getter on its prototype, the class declared once) or
  // one getter function defined once. bench/README (a), "Per-request getters".
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: ':function ObjectExpression > Property[kind=/^(get|set)$/]',
          message:
            'no getter/setter in an object literal made per call (see bench/README (a), "Per-request getters"): use a class, or one shared getter function',
        },
        {
          selector:
            ':function CallExpression[callee.property.name=/^(defineProperty|defineProperties|create)$/] ObjectExpression > Property[key.name=/^(get|set)$/] > :function',
          message:
            'no new getter/setter function per defineProperty(ies)/Object.create call (see bench/README (a), "Per-request getters"): define the function once and pass it',
        },
        {
          selector: ':function ClassExpression',
          message: 'no class made per call (a new prototype, and its getters, each time): declare the class once, at module level',
        },
        {
          selector: 'CallExpression[callee.property.name=/^__define[GS]etter__$/]',
          message: 'no __defineGetter__/__defineSetter__: use a class or one shared getter with defineProperty',
        },
      ],
    },
  },
  // The CLI (cli/) is a client of the REST API: at run time it imports nothing of the server.
  // cli/codegen.ts, which builds the OpenAPI document in-process at build time, is the exception.
  {
    files: ['cli/**/*.ts'],
    ignores: ['cli/codegen.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/core/**', '**/plugins/**', '#sdk', 'folio/sdk'],
              message: 'the CLI talks to Folio over the REST API only (cli/lib/client.ts)',
            },
          ],
        },
      ],
    },
  },
  // Tests: the type-checked rules apply as elsewhere (floating and misused promises, unbound
  // methods, ...) except the few below.
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read response bodies as `any` by design (`r.json().id`, JSON.parse of a log line):
      // each assertion is the check on the shape, so typing every body would only restate the test.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // An async subtest callback ends the subtest when it settles (a plain one must call t.end()),
      // so `async (t) => { ...assertions... }` with no await is the idiom, not a slip; likewise
      // `async () => value` in fakes standing in for async methods.
      '@typescript-eslint/require-await': 'off',
      // Tap tracks the promises its own calls return (a subtest, t.resolves, ...): the test waits for
      // them and reports their failures, so they need not be awaited. Any other promise must be.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            // Declared by tap's plugins: subtests in @tapjs/test, promise assertions in @tapjs/asserts.
            { from: 'package', package: '@tapjs/test', name: ['test', 'todo', 'skip'] },
            { from: 'package', package: '@tapjs/asserts', name: ['resolves', 'rejects', 'resolveMatch', 'emits'] },
          ],
        },
      ],
    },
  },
);
