// The SDK's public types (folio/sdk and folio/sdk/testing) as plugin authors get them: the
// declarations and API reports in sdk/ must be what the source declares now. A change to the
// public types fails here until `npm run sdk:build` is run and its diff reviewed and committed.
import t from 'tap';
import { buildSdkDeclarations, staleSdkFiles } from '../../sdk/build.ts';

// tsc declares the harness's types through the whole app, then API Extractor rolls them up:
// minutes on a loaded machine, beyond tap's default per-file limit.
t.setTimeout(600_000);

t.test('sdk/ declarations and API reports match the source', async (t) => {
  const built = await buildSdkDeclarations();
  t.ok(built.get('index.d.ts')?.includes('export declare function definePlugin'), 'the rollup declares definePlugin');
  t.ok(built.get('index.api.md')?.includes('export { Type }'), 'the report lists the re-exported TypeBox');
  t.same(staleSdkFiles(built), [], 'run npm run sdk:build, review the diff of sdk/*.api.md, commit it');
});
