// `folio export --out <folder|file.zip>` and `folio import <folder|file.zip>`: the exports and
// imports REST groups (/api/v1/exports, /api/v1/imports). Export waits for the job, downloads the
// zip, and with a folder extracts it with the server's own rules for names (nothing outside the
// folder, no links, no duplicates by case or normalization; a non-empty folder only with --force).
// Import zips a folder here first, never following a symbolic link, uploads it, waits, and prints
// the report: what was imported, skipped and failed, and why.
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { components } from '../generated/openapi.d.ts';
import { API_PREFIX, failure, ok, send, type Target } from '../lib/client.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { onInterrupt } from '../lib/interrupt.ts';
import { emit, type OutputOptions, withOutput } from '../lib/output.ts';
import { meter } from './files.ts';

type Job = components['schemas']['ExchangeJob'];
const info = (line: string) => process.stderr.write(line + '\n');
const DONE = new Set(['succeeded', 'failed']);

/** Why a name from an archive may not be written under a folder (the server refuses the same ones). */
export function unsafeName(name: string): string | undefined {
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains control characters';
  const parts = name.replace(/\/$/, '').split('/');
  if (parts.some((p) => p === '..' || p === '.' || p === '')) return "has a '..', '.' or empty segment";
  return undefined;
}

async function wait(target: Target, get: () => Promise<Job>, label: string, first: Job): Promise<Job> {
  let job = first;
  const forget = onInterrupt(() => `the job goes on on the server (job ${job.id})`);
  const bar = meter(label, 100, 'percent');
  try {
    bar.to(job.progress, job.status);
    while (!DONE.has(job.status)) {
      await new Promise((r) => setTimeout(r, 500));
      job = await get();
      bar.to(job.progress, job.status);
    }
  } finally {
    bar.end();
    forget();
  }
  void target;
  return job;
}

/** Extracts `zipFile` into `dir`; every name is checked before anything is written. */
async function extract(zipFile: string, dir: string): Promise<number> {
  const zip = await yauzl.openPromise(zipFile, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const seen = new Set<string>();
  let n = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        void (async () => {
          const name = decoder.decode(entry.fileName as unknown as Buffer);
          const bad = unsafeName(name);
          if (bad) throw new CliError(`the archive's entry ${JSON.stringify(name)} ${bad}; stopped`, EXIT.failed);
          if (((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000)
            throw new CliError(`the archive's entry ${name} is a symbolic link; stopped`, EXIT.failed);
          const key = name.normalize('NFC').toLowerCase();
          if (seen.has(key)) throw new CliError(`the archive has ${name} twice (by case or Unicode normalization); stopped`, EXIT.failed);
          seen.add(key);
          const to = path.join(dir, ...name.normalize('NFC').split('/'));
          if (!to.startsWith(dir + path.sep)) throw new CliError(`the archive's entry ${name} is outside the folder; stopped`, EXIT.failed);
          if (name.endsWith('/')) await mkdir(to, { recursive: true });
          else {
            await mkdir(path.dirname(to), { recursive: true });
            // wx: never through a link or over a file already there.
            await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(to, { flags: 'wx' }));
            n++;
          }
        })().then(() => zip.readEntry(), reject);
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return n;
}

/**
 * Moves what `from` holds into `to`, folder by folder: a file already there is replaced (an atomic
 * rename) when it is a regular file; a symbolic link or anything else in the way stops it, so
 * nothing is ever written through a link. Other files in `to` are left as they are.
 */
async function place(from: string, to: string, rel = ''): Promise<void> {
  const here = path.join(to, rel);
  const st = await lstat(here).catch(() => null);
  if (!st) await mkdir(here);
  else if (!st.isDirectory()) throw new CliError(`${here} is in the way (not a folder: a file or a link); stopped`, EXIT.failed);
  for (const e of await readdir(path.join(from, rel), { withFileTypes: true })) {
    const r = rel ? path.join(rel, e.name) : e.name;
    if (e.isDirectory()) {
      await place(from, to, r);
      continue;
    }
    const there = await lstat(path.join(to, r)).catch(() => null);
    if (there && !there.isFile()) throw new CliError(`${path.join(to, r)} is in the way (a link or a folder); stopped`, EXIT.failed);
    await rename(path.join(from, r), path.join(to, r));
  }
}

/** Zips a folder: regular files only; symbolic links (and anything else) are left out and named. */
async function zipFolder(dir: string, out: string): Promise<{ files: number; left: string[] }> {
  const zip = new yazl.ZipFile();
  const written = pipeline(zip.outputStream as unknown as Readable, createWriteStream(out));
  const left: string[] = [];
  let files = 0;
  const walk = async (rel: string) => {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      // lstat, not stat: a link is never followed, whatever it points at.
      const st = await lstat(path.join(dir, r));
      if (st.isSymbolicLink()) left.push(`${r} (a symbolic link)`);
      else if (st.isDirectory()) await walk(r);
      else if (st.isFile()) {
        zip.addFile(path.join(dir, r), r, { mtime: st.mtime });
        files++;
      } else left.push(`${r} (not a regular file)`);
    }
  };
  await walk('');
  zip.end();
  await written;
  return { files, left };
}

export const exchange: CommandGroup = {
  register(program: Command, cli: Cli) {
    const exp = program
      .command('export')
      .description('export your notes and files: a zip, or with a folder the same laid out as files')
      .requiredOption('--out <folder|file.zip>', 'where to write it: a path ending in .zip, or a folder')
      .option('--revisions', 'also every revision of every note')
      .option('--no-files', 'notes only')
      .option('--force', 'extract into a folder that is not empty (replacing its files of the same names), or replace a .zip')
      .action(async (o: { out: string; revisions?: boolean; files: boolean; force?: boolean }) => {
        const { api, target } = cli.client();
        const asZip = o.out.toLowerCase().endsWith('.zip');
        const dir = path.resolve(o.out);
        if (asZip && !o.force && (await lstat(dir).catch(() => null)))
          throw new CliError(`${o.out} exists: choose another name, or add --force to replace it`, EXIT.usage);
        if (!asZip) {
          const there = await readdir(dir).catch(() => null);
          if (there && there.length > 0 && !o.force)
            throw new CliError(`${o.out} is not empty: choose an empty folder, or add --force`, EXIT.usage);
        }
        const first = await ok(target, await api.POST('/exports', { body: { revisions: o.revisions === true, files: o.files } }));
        const job = await wait(
          target,
          async () => ok(target, await api.GET('/exports/{id}', { params: { path: { id: first.id } } })),
          'exporting',
          first,
        );
        if (job.status !== 'succeeded')
          throw new CliError(`the export failed: ${job.error ?? 'no reason given'} (job ${job.id})`, EXIT.server);
        const res = await send(target, `${target.url}${API_PREFIX}/exports/${job.id}/archive`, {
          headers: { authorization: `Bearer ${target.token}` },
        });
        if (!res.ok || !res.body) throw await failure(target, res);
        // Written beside the target, then moved into place: an interrupted download or extraction
        // leaves the earlier zip or folder as it was.
        await mkdir(path.dirname(dir), { recursive: true });
        const tmp = await mkdtemp(path.join(path.dirname(dir), `.${path.basename(dir)}.part-`));
        const zipPath = path.join(tmp, 'export.zip');
        try {
          await pipeline(Readable.fromWeb(res.body as never), createWriteStream(zipPath, { flags: 'wx' }));
          if (asZip) {
            await rename(zipPath, dir);
            info(`saved ${o.out} (${job.counts.notes ?? 0} notes, ${job.counts.files ?? 0} files)`);
          } else {
            const into = path.join(tmp, 'files');
            await mkdir(into);
            const n = await extract(zipPath, into);
            await place(into, dir);
            info(`wrote ${n} files to ${o.out} (${job.counts.notes ?? 0} notes, ${job.counts.files ?? 0} files)`);
          }
        } finally {
          await rm(tmp, { recursive: true, force: true });
        }
      });
    examples(
      exp,
      'folio export --out notes.zip',
      'folio export --out ~/folio-backup --revisions',
      'folio export --out notes-only.zip --no-files',
    );

    const imp = withOutput(
      program
        .command('import')
        .description('import a zip or a folder of Markdown (a Folio export, an Obsidian vault, ...) and print the report'),
    )
      .argument('<folder|file.zip>', 'a folder (zipped here, links not followed) or a .zip')
      .option('--all', 'list every entry of the report, not only the ones skipped or failed')
      .action(async (source: string, o: OutputOptions & { all?: boolean }) => {
        const { api, target } = cli.client();
        const st = await stat(source).catch(() => null);
        if (!st) throw new CliError(`${source}: no such file or folder`, EXIT.usage);
        const tmp = st.isDirectory() ? await mkdtemp(path.join(tmpdir(), 'folio-import-')) : undefined;
        let job: Job;
        try {
          let zipPath = path.resolve(source);
          if (tmp) {
            zipPath = path.join(tmp, 'import.zip');
            const z = await zipFolder(path.resolve(source), zipPath);
            for (const l of z.left) info(`left out ${l}`);
          } else {
            const fh = await open(zipPath, 'r');
            const head = Buffer.alloc(4);
            await fh.read(head, 0, 4, 0);
            await fh.close();
            if (head.readUInt32LE(0) !== 0x04034b50 && head.readUInt32LE(0) !== 0x06054b50)
              throw new CliError(`${source} is neither a folder nor a zip archive`, EXIT.usage);
          }
          const size = (await stat(zipPath)).size;
          const bar = meter('uploading', size);
          let sent = 0;
          const count = new Transform({
            transform(chunk: Buffer, _e, done) {
              sent += chunk.length;
              bar.to(sent);
              done(null, chunk);
            },
          });
          const body = Readable.toWeb(createReadStream(zipPath).pipe(count));
          const res = await send(target, `${target.url}${API_PREFIX}/imports`, {
            method: 'POST',
            headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/zip', 'content-length': String(size) },
            body: body as never,
            duplex: 'half',
          });
          bar.end();
          if (res.status !== 202) throw await failure(target, res);
          const first = (await res.json()) as Job;
          job = await wait(
            target,
            async () => ok(target, await api.GET('/imports/{id}', { params: { path: { id: first.id } } })),
            'importing',
            first,
          );
        } finally {
          if (tmp) await rm(tmp, { recursive: true, force: true });
        }
        if (job.status !== 'succeeded')
          throw new CliError(`the import failed: ${job.error ?? 'no reason given'} (job ${job.id})`, EXIT.server);
        await emit(job, o, () => {
          const lines = (job.report ?? []).filter((r) => o.all || r.status !== 'imported' || r.reason);
          const c = job.counts;
          const out = lines.map((r) => `${r.status.padEnd(8)} ${r.path}${r.reason ? `: ${r.reason}` : ''}`);
          out.push(`imported ${c.imported ?? 0}, skipped ${c.skipped ?? 0}, failed ${c.failed ?? 0} (job ${job.id})`);
          process.stdout.write(out.join('\n') + '\n');
        });
        if ((job.counts.failed ?? 0) > 0) process.exitCode = EXIT.failed;
      });
    examples(imp, 'folio import notes.zip', 'folio import ~/Obsidian/Vault', 'folio import export.zip --json');
  },
};
