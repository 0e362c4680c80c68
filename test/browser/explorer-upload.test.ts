// The explorer can upload a file: in a real browser (Debian's chromium, driven by playwright-core),
// swagger-ui at /api/v1/docs, authorized with a bearer token, runs "Upload a file" with a file
// picked in its form, and the file is stored byte for byte.
import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startTestServer, createUser } from '../helpers/server.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  if (process.env['CI']) t.fail(`${CHROMIUM} is missing: apt-get install -y chromium`);
  else t.plan(0, `${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
} else {
  await run();
}

async function run() {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const alice = await createUser(s, 'alice-explorer@example.com');
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-explorer-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'from-the-browser.txt');
  await writeFile(file, 'picked in the explorer\n');

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  t.teardown(() => browser.close());

  await t.test('swagger-ui: "Upload a file" with a picked file stores it', async (t) => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${s.url}/api/v1/docs`, { waitUntil: 'load' });
    await page.getByText('Upload a file', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.evaluate((token) => (globalThis as any).ui.preauthorizeApiKey('bearer', token), alice.token);
    const op = page.locator('#operations-filedb-uploadFile');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.locator('tr[data-param-name="name"] input').fill('from-the-browser.txt');
    // The browser's form: multipart/form-data with the part `file`.
    await op.locator('.body-param-content-type select').selectOption('multipart/form-data');
    await op.locator('tr[data-property-name="file"] input[type=file]').setInputFiles(file);
    await op.getByRole('button', { name: 'Execute' }).click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 15_000 });
    t.match(await status.innerText(), /^201/);
    t.match(await op.locator('.live-responses-table').innerText(), /from-the-browser\.txt/, 'the new file is shown');

    const list = (await (await fetch(`${s.url}/api/v1/filedb/files`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as {
      items: Array<{ id: string; name: string }>;
    };
    const stored = list.items.find((f) => f.name === 'from-the-browser.txt') as { id: string; folder?: string } | undefined;
    t.ok(stored, 'the file is stored');
    t.equal(stored?.folder, '', 'in no folder: the form sent no placeholder values');
    const bytes = await (
      await fetch(`${s.url}/api/v1/filedb/files/${stored!.id}/content`, { headers: { authorization: `Bearer ${alice.token}` } })
    ).text();
    t.equal(bytes, 'picked in the explorer\n', 'byte for byte');
    t.same(errors, [], 'no page errors');
    await page.close();
  });
}
