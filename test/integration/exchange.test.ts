// Export and import end to end, through the REST API and the CLI as a user runs them: alice's notes
// (with links between them and to an attached file) and files are exported, imported into bob's
// account, and exported again: identical except ids. Importing again creates nothing. Another
// user's jobs are 404. Hostile archives (zip slip names, symlinks, names that are not UTF-8, a
// member that declares 2 GB, one whose header lies, bad and bomb front matter, duplicate names by
// case and Unicode normalization, too many entries) each give their per-file error and write
// nothing else. An Obsidian mini-vault has its wiki links, embeds and inline #tags resolved.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { access, mkdtemp, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { createUser, req, startTestServer, type TestServer } from '../helpers/server.ts';
import { runFolio } from '../helpers/cli.ts';

const MAX_ENTRIES = 60;
const QUOTA = 4 * 1024 * 1024;
const server: TestServer = await startTestServer({
  overrides: { exchange: { maxEntries: MAX_ENTRIES, maxMemberBytes: 10 * 1024 * 1024 }, storage: { quotaBytesPerUser: QUOTA } },
});
t.teardown(() => server.close());
const work = await mkdtemp(path.join(tmpdir(), 'folio-exchange-'));
t.teardown(() => rm(work, { recursive: true, force: true }));

const alice = await createUser(server, 'alice-x@example.com');
const bob = await createUser(server, 'bob-x@example.com');
const carol = await createUser(server, 'carol-x@example.com');

interface Job {
  id: string;
  status: string;
  progress: number;
  error: string | null;
  counts: Record<string, number>;
  report?: Array<{ path: string; kind: string; status: string; id?: string; reason?: string }>;
}

async function waitJob(token: string, url: string): Promise<Job> {
  for (let i = 0; i < 600; i++) {
    const r = await req(server, 'GET', url, { token });
    const job = r.json<Job>();
    if (job.status === 'succeeded' || job.status === 'failed') return job;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${url} did not finish`);
}

let lastExport = '';
async function exportZip(token: string, body: unknown = {}): Promise<Buffer> {
  const r = await req(server, 'POST', '/api/v1/exports', { token, body });
  if (r.status !== 202) throw new Error(`export: ${r.status} ${r.text}`);
  const job = await waitJob(token, `/api/v1/exports/${r.json<Job>().id}`);
  lastExport = job.id;
  if (job.status !== 'succeeded') throw new Error(`export failed: ${job.error}`);
  const res = await fetch(`${server.url}/api/v1/exports/${job.id}/archive`, { headers: { authorization: `Bearer ${token}` } });
  return Buffer.from(await res.arrayBuffer());
}

async function importZip(token: string, zip: Buffer): Promise<Job> {
  const res = await fetch(`${server.url}/api/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip' },
    body: zip,
  });
  if (res.status !== 202) throw new Error(`import: ${res.status} ${await res.text()}`);
  const job = (await res.json()) as Job;
  return waitJob(token, `/api/v1/imports/${job.id}`);
}

/** The archive's entries by name. */
async function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  const z = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    z.on('entry', (e: yauzl.Entry) => {
      z.openReadStreamPromise(e)
        .then(async (s) => {
          const chunks: Buffer[] = [];
          for await (const c of s) chunks.push(c as Buffer);
          out.set(e.fileName, Buffer.concat(chunks));
          z.readEntry();
        })
        .catch(reject);
    });
    z.on('end', resolve).on('error', reject);
    z.readEntry();
  });
  return out;
}

/** A zip made here: entries with names as raw bytes, optional Unix mode. */
async function makeZip(entries: Array<{ name: string | Buffer; data: string | Buffer; mode?: number }>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  const placeholders = new Map<string, Buffer>();
  entries.forEach((e, i) => {
    let name = e.name;
    if (Buffer.isBuffer(name)) {
      // yazl takes strings: a placeholder of the same length is patched to the raw bytes after.
      const ph = `__raw${i}__`.padEnd(name.length, '_').slice(0, name.length);
      placeholders.set(ph, name);
      name = ph;
    }
    z.addBuffer(Buffer.from(e.data), name, { ...(e.mode !== undefined ? { mode: e.mode } : {}), compress: true });
  });
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream as unknown as Readable) chunks.push(c as Buffer);
  const buf = Buffer.concat(chunks);
  for (const [ph, raw] of placeholders) {
    let at = buf.indexOf(ph);
    while (at >= 0) {
      raw.copy(buf, at);
      at = buf.indexOf(ph, at + 1);
    }
  }
  return buf;
}

/** Rewrites the uncompressed size an entry declares (local header and central directory). */
function declareSize(zip: Buffer, name: string, size: number): Buffer {
  const buf = Buffer.from(zip);
  const n = Buffer.from(name);
  for (let at = 0; at < buf.length - 46; at++) {
    const sig = buf.readUInt32LE(at);
    if (sig === 0x04034b50 && buf.subarray(at + 30, at + 30 + n.length).equals(n)) buf.writeUInt32LE(size, at + 22);
    if (sig === 0x02014b50 && buf.subarray(at + 46, at + 46 + n.length).equals(n)) buf.writeUInt32LE(size, at + 24);
  }
  return buf;
}

const withoutIds = (s: string) =>
  s.replace(/^id: .*$/m, 'id: X').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID');

async function countNotes(token: string): Promise<number> {
  const r = await req(server, 'GET', '/api/v1/notetaker/notes?limit=100', { token });
  return r.json<{ items: unknown[] }>().items.length;
}

// --- alice's data ------------------------------------------------------------------------------------
const mk = async (title: string, body: string, tags: string[] = []) => {
  const r = await req(server, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title, body, tags } });
  if (r.status !== 201) throw new Error(r.text);
  return r.json<{ id: string; created_at: string; updated_at: string }>();
};
const upload = async (name: string, data: string, q = '') => {
  const res = await fetch(`${server.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}${q}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
    body: data,
  });
  if (res.status !== 201) throw new Error(await res.text());
  return ((await res.json()) as { id: string }).id;
};
const target = await mk('Target note', 'I am linked to.', ['project']);
const pdfNote = await mk('Plan: Q3 / launch', 'See the plan.', ['work', 'plan']);
const planFile = await upload('plan.txt', 'the plan, attached', `&note_id=${pdfNote.id}`);
const source = await mk(
  'Source note',
  `Links to [the target](/api/v1/notetaker/notes/${target.id}) and [the plan](/api/v1/filedb/files/${planFile}/content).\n\n\`\`\`\n[not](/api/v1/notetaker/notes/${target.id})\n\`\`\`\n`,
  ['work'],
);
await upload('budget.csv', 'a,b\n1,2\n', '&folder=finance/2026');
void source;

let aliceZip: Buffer;
let bobZip: Buffer;

t.test('export through REST: Markdown with front matter, attachments beside their notes, relative links, a manifest', async (t) => {
  aliceZip = await exportZip(alice.token);
  const files = await unzip(aliceZip);
  t.ok(files.has('manifest.json'));
  const manifest = JSON.parse(files.get('manifest.json')!.toString());
  t.equal(manifest.format, 'folio-export');
  t.equal(manifest.format_version, 1);
  t.same(manifest.counts, { notes: 3, files: 2, revisions: 0 });
  t.equal(manifest.user.email, 'alice-x@example.com');
  for (const e of manifest.entries) t.ok(files.has(e.path), `${e.path} is in the zip`);
  const plan = files.get('notes/Plan- Q3 - launch.md')!.toString();
  t.match(
    plan,
    /^---\nid: [0-9a-f-]{36}\ntitle: "Plan: Q3 \/ launch"\ntags:\n {2}- work\n {2}- plan\nsource: manual\ncreated: .*\nupdated: .*\nattachments:\n {2}- Plan- Q3 - launch\/plan.txt\n---\nSee the plan.$/,
  );
  t.equal(files.get('notes/Plan- Q3 - launch/plan.txt')!.toString(), 'the plan, attached');
  t.equal(files.get('files/finance/2026/budget.csv')!.toString(), 'a,b\n1,2\n');
  const src = files.get('notes/Source note.md')!.toString();
  t.match(src, '[the target](Target%20note.md)');
  t.match(src, '[the plan](Plan-%20Q3%20-%20launch/plan.txt)');
  t.match(src, `[not](/api/v1/notetaker/notes/${target.id})`, 'code is left as it is');
  const other = await req(server, 'GET', `/api/v1/exports/${lastExport}/archive`, { token: bob.token });
  t.equal(other.status, 404, "bob cannot download alice's export");
});

t.test("another user's export and import jobs are 404", async (t) => {
  const r = await req(server, 'POST', '/api/v1/exports', { token: alice.token, body: { files: false } });
  const id = r.json<Job>().id;
  await waitJob(alice.token, `/api/v1/exports/${id}`);
  t.equal((await req(server, 'GET', `/api/v1/exports/${id}`, { token: bob.token })).status, 404);
  t.equal((await req(server, 'GET', `/api/v1/exports/${id}/archive`, { token: bob.token })).status, 404);
  t.equal((await req(server, 'GET', `/api/v1/imports/${id}`, { token: alice.token })).status, 404, 'an export is not an import');
  const imp = await importZip(carol.token, await makeZip([{ name: 'hello.md', data: 'hi' }]));
  t.equal((await req(server, 'GET', `/api/v1/imports/${imp.id}`, { token: bob.token })).status, 404);
  const bad = await fetch(`${server.url}/api/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'text/plain' },
    body: 'not a zip',
  });
  t.equal(bad.status, 415, 'a body that is not a zip is 415');
});

t.test('scopes: a notes:read token exports notes only, and may not import', async (t) => {
  const made = await req(server, 'POST', '/api/v1/tokens', {
    token: alice.token,
    body: { name: 'reader', scopes: ['notes:read'], expires_in_days: 1 },
  });
  const reader = made.json<{ token: string }>().token;
  const withFiles = await req(server, 'POST', '/api/v1/exports', { token: reader, body: {} });
  t.equal(withFiles.status, 403);
  t.equal(withFiles.json<{ code: string }>().code, 'missing_scope');
  t.match(withFiles.text, 'files:read');
  const notesOnly = await req(server, 'POST', '/api/v1/exports', { token: reader, body: { files: false } });
  t.equal(notesOnly.status, 202);
  await waitJob(reader, `/api/v1/exports/${notesOnly.json<Job>().id}`);
  const imp = await fetch(`${server.url}/api/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/zip' },
    body: await makeZip([{ name: 'x.md', data: 'x' }]),
  });
  t.equal(imp.status, 403, 'importing needs notes:write and files:write');
});

t.test('the CLI imports the export into another user; exporting again is identical except ids; again creates nothing', async (t) => {
  const home = path.join(work, 'home-bob');
  const env = { FOLIO_URL: server.url, FOLIO_TOKEN: bob.token };
  const zipPath = path.join(work, 'alice.zip');
  await writeFile(zipPath, aliceZip);
  const first = await runFolio(home, ['import', zipPath], { env });
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, 'imported 5, skipped 0, failed 0');

  const out = path.join(work, 'bob-export');
  const ex = await runFolio(home, ['export', '--out', out], { env });
  t.equal(ex.code, 0, ex.stderr);
  const a = await unzip(aliceZip);
  const walk = async (dir: string, rel = ''): Promise<string[]> =>
    (
      await Promise.all(
        (await readdir(path.join(dir, rel), { withFileTypes: true })).map(async (e) =>
          e.isDirectory() ? walk(dir, rel ? `${rel}/${e.name}` : e.name) : [rel ? `${rel}/${e.name}` : e.name],
        ),
      )
    ).flat();
  const got = (await walk(out)).sort();
  t.same(got, [...a.keys()].sort(), 'the same paths');
  for (const p of got) {
    if (p === 'manifest.json') continue;
    t.equal(withoutIds((await readFile(path.join(out, p))).toString()), withoutIds(a.get(p)!.toString()), `${p} is the same but for ids`);
  }
  const bm = JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8'));
  t.same(bm.counts, { notes: 3, files: 2, revisions: 0 });

  const again = await runFolio(home, ['import', zipPath, '--json'], { env });
  t.equal(again.code, 0, again.stderr);
  const job = JSON.parse(again.stdout) as Job;
  t.same(job.counts, { imported: 0, skipped: 5, failed: 0 }, 'nothing new');
  t.equal(await countNotes(bob.token), 3);

  const busy = await runFolio(home, ['export', '--out', out], { env });
  t.equal(busy.code, 2, 'a folder that is not empty is refused');
  t.match(busy.stderr, 'not empty');

  bobZip = await exportZip(bob.token);
  const reimport = await importZip(bob.token, bobZip);
  t.same(reimport.counts, { imported: 0, skipped: 5, failed: 0 }, "bob's own export: matched by id");
});

t.test('--revisions exports every revision', async (t) => {
  await req(server, 'PATCH', `/api/v1/notetaker/notes/${target.id}`, {
    token: alice.token,
    body: { expected_version: 1, body: 'changed' },
    headers: { 'if-match': '"1"' },
  });
  const files = await unzip(await exportZip(alice.token, { revisions: true, files: false }));
  t.ok(files.has('notes/Target note.revisions/1.md'));
  t.ok(files.has('notes/Target note.revisions/2.md'));
  t.notOk(
    [...files.keys()].some((k) => k.startsWith('files/')),
    'no files',
  );
  const zipOut = path.join(work, 'with-revisions.zip');
  const r = await runFolio(path.join(work, 'home-alice'), ['export', '--out', zipOut, '--revisions'], {
    env: { FOLIO_URL: server.url, FOLIO_TOKEN: alice.token },
  });
  t.equal(r.code, 0, r.stderr);
  const viaCli = await unzip(await readFile(zipOut));
  t.ok(viaCli.has('notes/Target note.revisions/2.md'), 'the CLI saved the zip as the server made it');
  t.ok(viaCli.has('files/finance/2026/budget.csv'));
});

t.test('hostile archives: each bad entry fails on its own with its reason; nothing else is written', async (t) => {
  const before = await countNotes(carol.token);
  const bomb = `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n`;
  let zip = await makeZip([
    { name: 'good.md', data: '---\ntitle: Good one\n---\nfine' },
    { name: Buffer.from('../evil.md'), data: 'x' },
    { name: Buffer.from('a/../../evil2.md'), data: 'x' },
    { name: Buffer.from('/etc/evil.md'), data: 'x' },
    { name: Buffer.from('C:/evil.md'), data: 'x' },
    { name: Buffer.from('dir\\evil.md'), data: 'x' },
    { name: 'link.md', data: '/etc/passwd', mode: 0o120777 },
    { name: Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x2e, 0x6d, 0x64]), data: 'x' },
    { name: 'latin1.md', data: Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
    { name: 'notyaml.md', data: '---\ntitle: [unclosed\n---\nbody' },
    { name: 'bomb.md', data: `---\n${bomb}---\nbody` },
    { name: 'Readme.md', data: 'one' },
    { name: 'README.md', data: 'two' },
    { name: 'caf\u00e9.md', data: 'nfc' },
    { name: 'cafe\u0301.md', data: 'nfd' },
    { name: 'huge.bin', data: 'small really' },
    { name: 'liar.txt', data: 'x'.repeat(100_000) },
    { name: 'over-quota.bin', data: Buffer.alloc(QUOTA + 1) },
  ]);
  zip = declareSize(zip, 'huge.bin', 0x80000000);
  zip = declareSize(zip, 'liar.txt', 10);
  const job = await importZip(carol.token, zip);
  t.equal(job.status, 'succeeded');
  const by = new Map(job.report!.map((r) => [r.path, r]));
  const failed = (p: string, why: RegExp) => {
    const r = by.get(p);
    t.equal(r?.status, 'failed', `${p} failed`);
    t.match(r?.reason ?? '', why, `${p}: ${r?.reason}`);
  };
  t.equal(by.get('good.md')?.status, 'imported');
  failed('../evil.md', /climbs out/);
  failed('a/../../evil2.md', /climbs out/);
  failed('/etc/evil.md', /absolute/);
  failed('C:/evil.md', /drive letter/);
  failed('dir\\evil.md', /backslash/);
  failed('link.md', /symbolic link/);
  failed('bad\ufffd\ufffd.md', /not valid UTF-8/);
  failed('latin1.md', /not valid UTF-8/);
  failed('notyaml.md', /not YAML/);
  failed('bomb.md', /alias/i);
  t.equal(by.get('Readme.md')?.status, 'imported');
  failed('README.md', /same name as Readme.md/);
  t.equal(by.get('caf\u00e9.md')?.status, 'imported');
  failed('cafe\u0301.md', /Unicode normalization/);
  failed('huge.bin', /declares 2147483648 bytes/);
  failed('liar.txt', /inflates to .* than the 10 bytes it declares/);
  failed('over-quota.bin', /quota/);
  t.equal(job.counts.imported, 3);
  t.equal(await countNotes(carol.token), before + 3, 'only the good notes were written');
  const files = await req(server, 'GET', '/api/v1/filedb/files?limit=100', { token: carol.token });
  t.same(files.json<{ items: unknown[] }>().items, [], 'no file was stored');
});

t.test('too many entries fail the import as a whole; nothing is written', async (t) => {
  const before = await countNotes(carol.token);
  const many = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ name: `tiny/${i}.md`, data: `${i}` }));
  const job = await importZip(carol.token, await makeZip(many));
  t.equal(job.status, 'failed');
  t.match(job.error ?? '', `over this server's limit of ${MAX_ENTRIES}`);
  t.equal(await countNotes(carol.token), before);
});

t.test('an Obsidian vault (a folder, through the CLI): wiki links, embeds, inline tags; links are not followed', async (t) => {
  const vault = path.join(work, 'vault');
  await mkdir(path.join(vault, 'Projects'), { recursive: true });
  await mkdir(path.join(vault, 'attachments'), { recursive: true });
  await mkdir(path.join(vault, '.obsidian'), { recursive: true });
  await writeFile(path.join(vault, '.obsidian', 'app.json'), '{}');
  await writeFile(
    path.join(vault, 'Home.md'),
    '---\ntags: [daily]\ncreated: 2024-01-02T03:04:05Z\nupdated: 2024-02-03T04:05:06Z\n---\n# Home\nSee [[Roadmap]] and [[Roadmap|the plan]].\n![[diagram.png]]\nMissing: [[Nowhere]]\nTagged #idea and #project/alpha, not #123.\n`#notatag`\n',
  );
  await writeFile(path.join(vault, 'Projects', 'Roadmap.md'), 'Back to [[Home]].');
  await writeFile(path.join(vault, 'attachments', 'diagram.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
  await writeFile(path.join(work, 'secret.md'), 'outside the vault');
  await symlink(path.join(work, 'secret.md'), path.join(vault, 'secret-link.md'));
  const home = path.join(work, 'home-dave');
  const dave = await createUser(server, 'dave-x@example.com');
  const r = await runFolio(home, ['import', vault, '--json'], { env: { FOLIO_URL: server.url, FOLIO_TOKEN: dave.token } });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, 'left out secret-link.md (a symbolic link)');
  const job = JSON.parse(r.stdout) as Job;
  const by = new Map(job.report!.map((e) => [e.path, e]));
  t.equal(by.get('.obsidian/app.json')?.status, 'skipped');
  t.notOk(by.has('secret-link.md'), 'the link was never sent');
  const homeId = by.get('Home.md')!.id!;
  const roadmapId = by.get('Projects/Roadmap.md')!.id!;
  const imgId = by.get('attachments/diagram.png')!.id!;
  t.match(by.get('Home.md')!.reason, '[[Nowhere]]', 'the unresolved link is reported');
  const note = (await req(server, 'GET', `/api/v1/notetaker/notes/${homeId}`, { token: dave.token })).json<{
    title: string;
    body: string;
    tags: string[];
    created_at: string;
    updated_at: string;
  }>();
  t.equal(note.title, 'Home');
  t.match(note.body, `See [Roadmap](/api/v1/notetaker/notes/${roadmapId}) and [the plan](/api/v1/notetaker/notes/${roadmapId}).`);
  t.match(note.body, `![diagram.png](/api/v1/filedb/files/${imgId}/content)`);
  t.match(note.body, '[[Nowhere]]');
  t.same(note.tags, ['daily', 'idea', 'project/alpha']);
  t.equal(note.created_at, '2024-01-02T03:04:05.000Z');
  t.equal(note.updated_at, '2024-02-03T04:05:06.000Z');
  const back = (await req(server, 'GET', `/api/v1/notetaker/notes/${roadmapId}`, { token: dave.token })).json<{ body: string }>();
  t.equal(back.body, `Back to [Home](/api/v1/notetaker/notes/${homeId}).`);
  const img = (await req(server, 'GET', `/api/v1/filedb/files/${imgId}`, { token: dave.token })).json<{
    note_id: string;
    folder: string;
  }>();
  t.equal(img.note_id, homeId, 'the embedded file is attached to the note');
  t.equal(img.folder, 'attachments');
});

t.test(
  'a round trip keeps kinds, folders and names; your own export re-imports without duplicates; the trash does not block',
  async (t) => {
    const erin = await createUser(server, 'erin-x@example.com');
    const frank = await createUser(server, 'frank-x@example.com');
    const put = async (token: string, name: string, data: string, q = '') => {
      const res = await fetch(`${server.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}${q}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: data,
      });
      if (res.status !== 201) throw new Error(await res.text());
      return ((await res.json()) as { id: string }).id;
    };
    const note = async (title: string, body: string) =>
      (await req(server, 'POST', '/api/v1/notetaker/notes', { token: erin.token, body: { title, body } })).json<{ id: string }>();
    const keep = await note('Keeper', 'kept');
    const gone = await note('Gone soon', 'to the trash after the export');
    await req(server, 'PATCH', `/api/v1/notetaker/notes/${keep.id}`, {
      token: erin.token,
      body: { expected_version: 1, body: 'kept, edited' },
      headers: { 'if-match': '"1"' },
    });
    await put(erin.token, 'readme.md', '# a file, not a note', '&folder=docs');
    await put(erin.token, 'a:b?.txt', 'attached in a folder', `&folder=work/q3&note_id=${keep.id}`);
    const files = async (token: string) =>
      (await req(server, 'GET', '/api/v1/filedb/files?limit=100', { token })).json<{
        items: Array<{ id: string; name: string; folder: string; note_id: string | null }>;
      }>().items;

    const zip = await exportZip(erin.token, { revisions: true });
    const entries = await unzip(zip);
    t.ok(entries.has('notes/Keeper.revisions/1.md'), 'revisions are in the export');
    t.ok(entries.has('files/docs/readme.md'));

    const into = await importZip(frank.token, zip);
    t.equal(into.status, 'succeeded');
    const by = new Map(into.report!.map((r) => [r.path, r]));
    t.equal(by.get('files/docs/readme.md')?.kind, 'file', 'a .md file comes back as a file, not a note');
    t.equal(by.get('notes/Keeper.revisions/1.md')?.status, 'skipped');
    t.equal(await countNotes(frank.token), 2, 'two notes, no note made of a file or a revision');
    const got = new Map((await files(frank.token)).map((f) => [f.name, f]));
    t.same([...got.keys()].sort(), ['a:b?.txt', 'readme.md'], 'original names');
    t.equal(got.get('readme.md')?.folder, 'docs');
    t.equal(got.get('a:b?.txt')?.folder, 'work/q3', 'an attached file keeps its folder');
    t.equal(got.get('a:b?.txt')?.note_id, by.get('notes/Keeper.md')?.id, 'and its note');

    // Erin trashes a note, then imports her own export: files are hers already, the trashed note comes back.
    t.equal((await req(server, 'DELETE', `/api/v1/notetaker/notes/${gone.id}`, { token: erin.token })).status, 200);
    const own = await importZip(erin.token, zip);
    t.equal(own.status, 'succeeded');
    const mine = new Map(own.report!.map((r) => [r.path, r]));
    t.equal(mine.get('notes/Keeper.md')?.status, 'skipped');
    t.equal(mine.get('files/docs/readme.md')?.status, 'skipped', 'your own file is matched by id');
    t.equal(mine.get('notes/Keeper/a-b-.txt')?.status, 'skipped');
    t.equal(mine.get('notes/Gone soon.md')?.status, 'imported', 'a trashed note does not block its restore');
    t.not(mine.get('notes/Gone soon.md')?.id, gone.id, 'as a new note');
    t.equal((await files(erin.token)).length, 2, 'no file was duplicated');
    t.equal(await countNotes(erin.token), 2);
    const restored = await req(server, 'GET', `/api/v1/notetaker/notes/${mine.get('notes/Gone soon.md')!.id}`, { token: erin.token });
    t.equal(restored.json<{ body: string }>().body, 'to the trash after the export');
  },
);

t.test('a plain Markdown note that starts with a --- rule is imported whole', async (t) => {
  const job = await importZip(carol.token, await makeZip([{ name: 'rule.md', data: '---\nJust a paragraph.\n---\nAfter.' }]));
  const r = job.report!.find((e) => e.path === 'rule.md')!;
  t.equal(r.status, 'imported');
  t.match(r.reason, 'horizontal rule');
  const n = (await req(server, 'GET', `/api/v1/notetaker/notes/${r.id}`, { token: carol.token })).json<{ body: string }>();
  t.equal(n.body, '---\nJust a paragraph.\n---\nAfter.');
});

t.test('tags past the limit and dates the database cannot hold are reported, and the note is imported', async (t) => {
  const data =
    '---\ntags: [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20, t21, t22, t23, t24, t25, t26, t27, t28, t29, t30, t31, t32, t33, t34, t35, t36, t37, t38, t39]\ncreated: "+275760-09-13T00:00:00.000Z"\nupdated: "-000001-01-01T00:00:00.000Z"\n---\nbody';
  const job = await importZip(carol.token, await makeZip([{ name: 'odd.md', data }]));
  const r = job.report!.find((e) => e.path === 'odd.md')!;
  t.equal(r.status, 'imported', r.reason ?? '');
  t.match(r.reason, 'more than 32 tags: kept the first 32, left out t32, t33');
  t.match(r.reason, 'not a date between the years 1 and 9999');
  t.match(r.reason, 'created (+275760');
  const n = (await req(server, 'GET', `/api/v1/notetaker/notes/${r.id}`, { token: carol.token })).json<{ tags: string[] }>();
  t.equal(n.tags.length, 32);
});

const sql = <T>(q: string, params: unknown[] = []) => server.folio.db.orm.em.fork().execute<T[]>(q, params);
const exists = (f: string) =>
  access(f).then(
    () => true,
    () => false,
  );

t.test('jobs whose queue job ended without finishing fail with a reason, free the cap and lose their upload', async (t) => {
  const gina = await createUser(server, 'gina-x@example.com');
  const stale: Array<{ id: string; file: string }> = [];
  // What a server stopped mid-job leaves: rows running, their uploads on disk, their queue jobs gone.
  for (let i = 0; i < 3; i++) {
    const id = randomUUID();
    const file = path.join(work, `stale-${i}.import.zip`);
    await writeFile(file, 'an upload');
    await sql(
      `insert into exchange_jobs (id, owner_id, kind, status, archive, job_id, expires_at) values (?, ?, 'import', 'running', ?, ?, now() + interval '1 hour')`,
      [id, gina.id, file, randomUUID()],
    );
    stale.push({ id, file });
  }
  const job = await importZip(gina.token, await makeZip([{ name: 'fresh.md', data: 'hello' }]));
  t.equal(job.status, 'succeeded', 'the stale jobs do not hold the account back (no 429)');
  for (const s of stale) {
    const r = (await req(server, 'GET', `/api/v1/imports/${s.id}`, { token: gina.token })).json<Job>();
    t.equal(r.status, 'failed');
    t.match(r.error, 'gone from the queue');
    t.notOk(await exists(s.file), 'its upload is deleted');
  }
});

t.test('one finished export per account is kept; a lost archive is a clear 404', async (t) => {
  const hal = await createUser(server, 'hal-x@example.com');
  await exportZip(hal.token, { files: false });
  const first = lastExport;
  const [row] = await sql<{ archive: string }>(`select archive from exchange_jobs where id = ?`, [first]);
  await exportZip(hal.token, { files: false });
  t.equal((await req(server, 'GET', `/api/v1/exports/${first}`, { token: hal.token })).status, 404, 'the older export is gone');
  t.notOk(await exists(row!.archive), 'with its archive');
  const [now] = await sql<{ archive: string }>(`select archive from exchange_jobs where id = ?`, [lastExport]);
  await rm(now!.archive);
  const lost = await req(server, 'GET', `/api/v1/exports/${lastExport}/archive`, { token: hal.token });
  t.equal(lost.status, 404);
  t.match(lost.text, 'no longer on the server');
});

t.test('the CLI replaces an earlier export only with --force: a folder in place, a zip whole', async (t) => {
  const home = path.join(work, 'home-alice');
  const env = { FOLIO_URL: server.url, FOLIO_TOKEN: alice.token };
  const dir = path.join(work, 'alice-folder');
  const first = await runFolio(home, ['export', '--out', dir], { env });
  t.equal(first.code, 0, first.stderr);
  await writeFile(path.join(dir, 'mine.txt'), 'not from Folio');
  await writeFile(path.join(dir, 'notes', 'Target note.md'), 'stale');
  const refused = await runFolio(home, ['export', '--out', dir], { env });
  t.equal(refused.code, 2);
  const again = await runFolio(home, ['export', '--out', dir, '--force'], { env });
  t.equal(again.code, 0, again.stderr);
  t.match(await readFile(path.join(dir, 'notes', 'Target note.md'), 'utf8'), /^---\nid: /, 'the earlier file is replaced');
  t.equal(await readFile(path.join(dir, 'mine.txt'), 'utf8'), 'not from Folio', 'other files are left alone');
  t.same(
    (await readdir(work)).filter((n) => n.includes('.part')),
    [],
    'no temporary folder is left',
  );

  const zip = path.join(work, 'again.zip');
  await writeFile(zip, 'precious');
  const kept = await runFolio(home, ['export', '--out', zip], { env });
  t.equal(kept.code, 2);
  t.match(kept.stderr, 'exists');
  t.equal(await readFile(zip, 'utf8'), 'precious', 'an existing file is not overwritten without --force');
  const replaced = await runFolio(home, ['export', '--out', zip, '--force'], { env });
  t.equal(replaced.code, 0, replaced.stderr);
  t.ok((await unzip(await readFile(zip))).has('manifest.json'), 'replaced by the export');
});
