// Checks deploy/compose.yaml against the Compose Specification's JSON schema, vendored in
// deploy/schemas/compose-spec.json (these machines cannot run `docker compose config`). YAML merge
// keys (`<<: *folio`) are resolved first, as Compose does. Prints what is wrong; exits 1 if anything.
// Usage: npx node test/topology/compose-schema.ts [file]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

const file = process.argv[2] ?? path.join(PACKAGE_ROOT, 'deploy/compose.yaml');
const schema = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'deploy/schemas/compose-spec.json'), 'utf8')) as object;
const doc: unknown = parse(readFileSync(file, 'utf8'), { merge: true });
// The schema is draft-07 with keywords of later drafts (deprecated) and names its meta-schema by an
// https address Ajv does not know: not strict, and the schema itself is not checked.
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
(addFormatsModule as unknown as (a: Ajv) => void)(ajv);
const validate = ajv.compile(schema);
if (validate(doc)) {
  console.log(`${path.relative(process.cwd(), file)}: valid against the Compose Specification schema`);
} else {
  for (const e of validate.errors ?? []) console.log(`${file}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  process.exit(1);
}
