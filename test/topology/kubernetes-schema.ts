// Checks the manifests in deploy/kubernetes/ against the Kubernetes API's JSON schemas, as the
// kubernetes-models package ships them (compiled from the Kubernetes OpenAPI schemas with Ajv):
// every object's kind must be a known one of its apiVersion, and its fields must have the types,
// required fields and formats the API declares. Unknown extra fields are not caught: the
// Kubernetes schemas allow them (a cluster's server-side validation would warn). kustomization.yaml
// is kustomize's own file, not an API object: skipped. Prints one line per object; exits 1 if one
// is invalid or unknown. Usage: npx node test/topology/kubernetes-schema.ts [file ...]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

const dir = path.join(PACKAGE_ROOT, 'deploy/kubernetes');
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => path.join(dir, f));

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

let bad = 0;
for (const file of files) {
  const name = path.relative(process.cwd(), file);
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length > 0) {
      bad++;
      console.log(`${name}: not YAML: ${doc.errors[0]!.message}`);
      continue;
    }
    const obj = doc.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string } } | null;
    if (!obj) continue;
    const what = `${name}: ${obj.apiVersion ?? '?'} ${obj.kind ?? '?'} ${obj.metadata?.name ?? ''}`.trimEnd();
    if (obj.apiVersion?.startsWith('kustomize.config.k8s.io/')) {
      console.log(`${what}: kustomize's file, not an API object (skipped)`);
      continue;
    }
    let Cls: ModelClass | undefined;
    try {
      const mod = (await import(`kubernetes-models/${obj.apiVersion ?? ''}`)) as Record<string, ModelClass>;
      Cls = obj.kind ? mod[obj.kind] : undefined;
    } catch {
      Cls = undefined;
    }
    if (!Cls) {
      bad++;
      console.log(`${what}: not a kind the Kubernetes API has`);
      continue;
    }
    try {
      new Cls(obj).validate();
      console.log(`${what}: valid`);
    } catch (err) {
      bad++;
      const errors = (err as { errors?: Array<{ instancePath?: string; message?: string; params?: unknown }> }).errors;
      const detail = errors?.length
        ? errors.map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ')
        : (err as Error).message;
      console.log(`${what}: INVALID: ${detail}`);
    }
  }
}
process.exit(bad === 0 ? 0 : 1);
