// Okta's and Entra ID's provisioning flows, as their documentation shows the requests they send
// (test/fixtures/scim/*.json), replayed in order against a started Folio: create, find by filter,
// deactivate, PATCH attributes, change the email, replace, delete. Each step's answer is checked for the status and
// the values the provider reads back; a change Folio cannot make is a 400, never a silent 204.
import t from 'tap';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer, req } from '../helpers/server.ts';

interface Step {
  name: string;
  request: { method: string; path: string; body?: unknown };
  expect: { status: number; body?: unknown; absent?: string[]; detail?: string };
  /** A field of the answer to keep for later steps ({{id}}), or { name: field } to keep it by another name. */
  save?: string | Record<string, string>;
}

const s = await startTestServer();
t.teardown(() => s.close());

for (const file of ['okta.json', 'entra.json']) {
  const fixture = JSON.parse(await readFile(path.join(PACKAGE_ROOT, 'test/fixtures/scim', file), 'utf8')) as {
    provider: string;
    steps: Step[];
  };
  t.test(fixture.provider, async (t) => {
    const saved: Record<string, string> = {};
    const fill = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value ?? null).replace(/\{\{(\w+)\}\}/g, (_m, k: string) => saved[k] ?? `{{${k}}}`));
    for (const step of fixture.steps) {
      const body = step.request.body === undefined ? undefined : fill(step.request.body);
      const r = await req(s, step.request.method, `/scim/v2${fill(step.request.path) as string}`, {
        token: s.adminToken,
        ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/scim+json' } }),
      });
      t.equal(r.status, step.expect.status, `${step.name}: ${r.status === step.expect.status ? '' : r.text}`);
      if (step.expect.body !== undefined) t.match(r.json(), fill(step.expect.body), `${step.name}: the answer`);
      for (const key of step.expect.absent ?? []) t.notOk(key in r.json<object>(), `${step.name}: no ${key}`);
      if (step.expect.detail) t.match(r.json().detail, step.expect.detail, `${step.name}: says why`);
      const save = typeof step.save === 'string' ? { [step.save]: step.save } : (step.save ?? {});
      for (const [name, field] of Object.entries(save)) saved[name] = r.json()[field];
    }
  });
}
