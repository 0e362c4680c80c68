// The REST API's pages in a real browser (Debian's chromium, driven by playwright-core): the
// swagger-ui explorer and the redoc reference render every notetaker operation, load nothing from
// outside Folio, and the explorer can call the API with a bearer token.
import t from 'tap';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, createUser } from '../helpers/server.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  // CI installs it (.ci/run); elsewhere say how, rather than fail on a missing browser.
  if (process.env['CI']) t.fail(`${CHROMIUM} is missing: apt-get install -y chromium`);
  else t.plan(0, `${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
} else {
  await run();
}

async function run() {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const alice = await createUser(s, 'alice@example.com');
  await fetch(`${s.url}/api/v1/notetaker/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Seen from the explorer' }),
  });
  const spec = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { summary: string }>>;
  };
  const summaries: string[] = Object.values(spec.paths).flatMap((item) => Object.values(item).map((op) => op.summary));

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());

  /** A page that records every request it makes and every console error. */
  async function open(path: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      // A failed request is reported below with its URL; the browser's own line says only the status.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(s.url + path, { waitUntil: 'load' });
    return { page, requests, errors };
  }

  const outside = (requests: string[]) => requests.filter((u) => !u.startsWith(s.url) && !u.startsWith('data:') && !u.startsWith('blob:'));

  await t.test('swagger-ui at /api/v1/docs lists every operation and can call the API', async (t) => {
    const { page, requests, errors } = await open('/api/v1/docs');
    await page.getByText('List notes', { exact: true }).first().waitFor({ timeout: 30_000 });
    const shown = await page.locator('.opblock-summary-description').allInnerTexts();
    for (const summary of summaries) t.ok(shown.includes(summary), `"${summary}" is listed`);
    t.ok(await page.getByText('Search notes', { exact: true }).first().isVisible(), 'Search notes is visible');

    // Authorize with a bearer token, then "Try it out" on List notes.
    await page.evaluate((token) => (globalThis as any).ui.preauthorizeApiKey('bearer', token), alice.token);
    const op = page.locator('#operations-notetaker-listNotes');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.getByRole('button', { name: 'Execute' }).click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 15_000 });
    t.match(await status.innerText(), /^200/);
    t.match(await op.locator('.live-responses-table').innerText(), /Seen from the explorer/, 'the response body is shown');

    t.same(outside(requests), [], 'nothing loaded from outside Folio');
    t.same(errors, [], 'no console errors');
    await page.close();
  });

  await t.test('redoc at /api/v1/redoc renders every operation', async (t) => {
    const { page, requests, errors } = await open('/api/v1/redoc');
    await page.locator('h2', { hasText: 'Search notes' }).first().waitFor({ timeout: 30_000 });
    const headings = await page.locator('h2').allInnerTexts();
    for (const summary of summaries) t.ok(headings.includes(summary), `"${summary}" has its section`);
    const text = (await page.locator('#redoc').textContent()) ?? '';
    for (const summary of summaries) t.ok(text.includes(summary), `"${summary}" is rendered`);
    t.match(text, /precondition_failed/, 'problem codes are described');
    t.match(text, /Folio REST API/);
    t.same(outside(requests), [], 'nothing loaded from outside Folio');
    t.same(
      errors.filter((e) => !/Download the React DevTools/.test(e)),
      [],
      'no console errors',
    );
    await page.close();
  });

  await t.test('the curl surface: /curl/docs renders its machine description, /curl/help its catalogue', async (t) => {
    const { page, requests, errors } = await open('/curl/docs');
    await page.getByText('/curl/call/{namespace}/{function}').first().waitFor({ timeout: 30_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    for (const p of ['/curl/whoami', '/curl/help/{namespace}/{function}', '/curl/skill/{namespace}/{name}', '/health'])
      t.ok(
        paths.some((x) => x.replace(/\u200b/g, '') === p),
        `${p} is listed`,
      );
    t.same(outside(requests), [], 'nothing loaded from outside Folio');
    t.same(errors, [], 'no console errors');
    await page.close();

    const cat = await open('/curl/help');
    t.match(await cat.page.locator('h1').innerText(), /Folio catalogue/);
    t.match(await cat.page.locator('body').innerText(), /notetaker\.search\(q: string/, 'public namespaces and their signatures');
    t.same(cat.errors, []);
    await cat.page.close();
  });
}
