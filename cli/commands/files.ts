// `folio files ...`: the filedb REST group (/api/v1/filedb). Uploads and downloads stream between
// the disk and the server (a large file never sits in memory), with a progress bar on stderr when
// stderr is a terminal.
import { createReadStream, createWriteStream } from 'node:fs';
import { link, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import * as tus from 'tus-js-client';
import type { components } from '../generated/openapi.d.ts';
import { API_PREFIX, failure, ok, send, type Target } from '../lib/client.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { fullId } from '../lib/ids.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { configDir, readJsonFile, writePrivate } from '../lib/config.ts';
import { onInterrupt, removeOnInterrupt } from '../lib/interrupt.ts';
import { emit, readStdin, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type File = components['schemas']['File'];
type Share = components['schemas']['ShareLink'] & { url?: string };

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};
const info = (line: string) => process.stderr.write(line + '\n');

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/**
 * A one-line bar on stderr (redrawn at most ten times a second) of `done` bytes out of `total`;
 * `end` clears it. When stderr is not a terminal it draws nothing.
 */
export function meter(
  label: string,
  total: number | undefined,
  unit: 'bytes' | 'percent' = 'bytes',
): { to(done: number, stage?: string): void; end(): void } {
  const tty = process.stderr.isTTY === true;
  let last = 0;
  let lastStage: string | undefined;
  return {
    to(done, stage) {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 100 && stage === lastStage) return;
      last = now;
      lastStage = stage;
      const shown = stage ? `${label} (${stage})` : label;
      const width = Math.max(10, Math.min(30, (process.stderr.columns || 80) - shown.length - 30));
      let line: string;
      if (total) {
        const ratio = Math.min(1, done / total);
        const filled = Math.round(ratio * width);
        const amount = unit === 'bytes' ? ` ${bytes(done)}/${bytes(total)}` : '';
        line = `${shown} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%${amount}`;
      } else line = unit === 'bytes' ? `${shown} ${bytes(done)}` : shown;
      process.stderr.write(`\r\x1b[2K${line}`);
    },
    end() {
      if (tty) process.stderr.write('\r\x1b[2K');
    },
  };
}

/** A pass-through stream that moves a meter() as bytes go by, and clears it at the end. */
function progress(label: string, total: number | undefined): Transform {
  const bar = meter(label, total);
  let done = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      bar.to(done);
      cb(null, chunk);
    },
    flush(cb) {
      bar.end();
      cb();
    },
  });
}

type PreviousUpload = Awaited<ReturnType<tus.Upload['findPreviousUploads']>>[number];

/**
 * Where unfinished uploads' URLs are kept between runs: a JSON file only its owner can read (the
 * URL is no secret without the token, but it names the user's upload), keyed by fingerprint.
 */
function uploadUrls(file: string) {
  const load = () => readJsonFile<Record<string, PreviousUpload>>(file, {});
  const save = (all: Record<string, PreviousUpload>) => writePrivate(file, JSON.stringify(all, null, 2));
  return {
    findAllUploads: () => Promise.resolve(Object.values(load())),
    findUploadsByFingerprint: (fp: string) =>
      Promise.resolve(Object.entries(load()).flatMap(([k, v]) => (k.startsWith(`${fp}::`) ? [{ ...v, urlStorageKey: k }] : []))),
    removeUpload(key: string) {
      const all = load();
      delete all[key];
      save(all);
      return Promise.resolve();
    },
    addUpload(fp: string, upload: PreviousUpload) {
      const key = `${fp}::${Date.now()}`;
      save({ ...load(), [key]: { ...upload, urlStorageKey: key } });
      return Promise.resolve(key);
    },
  };
}

/**
 * Uploads with the tus protocol (/api/v1/filedb/uploads): the bytes go up in one stream; when the
 * connection drops the client asks the server where it got to and sends the rest (a few retries),
 * and the upload's URL is kept in <config dir>/uploads.json, so running the same command again
 * after an interruption (even a killed process) resumes it instead of starting over. The stored URL
 * is keyed by the server, the file (path, size, modification time) and where it goes; it is
 * forgotten once the upload completes. A server without resumable uploads gets a plain upload.
 */
export async function resumableUpload(
  target: Target,
  file: string,
  size: number,
  where: { name: string; folder?: string | undefined; note?: string | undefined },
): Promise<File> {
  const st = await stat(file);
  const key = createHash('sha256')
    .update(JSON.stringify([target.url, path.resolve(file), size, st.mtimeMs, where.name, where.folder ?? '', where.note ?? '']))
    .digest('hex');
  const bar = meter(`uploading ${path.basename(file)}`, size);
  let fileId: string | null = null;
  let body: string | null = null;
  const metadata: Record<string, string> = { name: where.name, filetype: 'application/octet-stream' };
  if (where.folder) metadata['folder'] = where.folder;
  if (where.note) metadata['note_id'] = where.note;
  // What the server already holds stays there, and this machine remembers where (uploads.json).
  const forget = onInterrupt(() => 'run the same command again to resume the upload');
  const outcome = await new Promise<{ ok: true } | { ok: false; err: Error }>((resolve) => {
    const up = new tus.Upload(createReadStream(file), {
      endpoint: `${target.url}${API_PREFIX}/filedb/uploads`,
      uploadSize: size,
      metadata,
      headers: { authorization: `Bearer ${target.token ?? ''}` },
      fingerprint: () => Promise.resolve(`folio-${key}`),
      urlStorage: uploadUrls(path.join(configDir(), 'uploads.json')),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      retryDelays: [0, 1000, 3000, 5000],
      onProgress: (sent) => bar.to(sent),
      onAfterResponse: (_req, res) => {
        const id = res.getHeader('Folio-File-Id');
        if (id) fileId = id;
        if (res.getStatus() === 200 && id) body = res.getBody();
      },
      onSuccess: () => resolve({ ok: true }),
      onError: (err) => resolve({ ok: false, err }),
    });
    void up.findPreviousUploads().then(
      (previous) => {
        const last = previous.sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))[0];
        if (last) {
          info(`resuming an earlier upload of ${path.basename(file)}`);
          up.resumeFromPreviousUpload(last);
        }
        up.start();
      },
      () => up.start(),
    );
  });
  forget();
  bar.end();
  if (!outcome.ok) {
    const res = (outcome.err as tus.DetailedError).originalResponse;
    const req = (outcome.err as tus.DetailedError).originalRequest;
    if (!res)
      throw new CliError(
        `cannot reach Folio at ${target.url} (${outcome.err.message.split('\n')[0]}); run the same command again to resume`,
        EXIT.unreachable,
      );
    // A server without resumable uploads: the plain way.
    if (res.getStatus() === 404 && req?.getMethod() === 'POST') return plainUpload(target, file, size, where);
    const status = res.getStatus();
    throw await failure(
      target,
      new Response(res.getBody() || null, { status, headers: { 'content-type': res.getHeader('Content-Type') ?? 'text/plain' } }),
    );
  }
  if (body) return JSON.parse(body) as File;
  if (!fileId) throw new CliError('the upload finished but the server did not say which file it made', EXIT.server);
  const got = await authed(target, `/filedb/files/${encodeURIComponent(fileId)}`, { method: 'GET' });
  if (!got.ok) throw await failure(target, got);
  return (await got.json()) as File;
}

/** One streamed POST of the raw bytes (servers without resumable uploads). */
async function plainUpload(
  target: Target,
  file: string,
  size: number,
  where: { name: string; folder?: string | undefined; note?: string | undefined },
): Promise<File> {
  const query = new URLSearchParams({ name: where.name });
  if (where.folder) query.set('folder', where.folder);
  if (where.note) query.set('note_id', where.note);
  const body = Readable.toWeb(createReadStream(file).pipe(progress(`uploading ${path.basename(file)}`, size)));
  const res = await authed(target, `/filedb/files?${query.toString()}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
    body,
    duplex: 'half',
  });
  if (!res.ok) throw await failure(target, res);
  return (await res.json()) as File;
}

/** A request straight to the REST API with the token, for the streaming calls openapi-fetch would buffer. */
function authed(target: Target, p: string, init: RequestInit): Promise<Response> {
  return send(target, target.url + API_PREFIX + p, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${target.token ?? ''}` },
  });
}

const fileColumns = [
  { header: 'ID', get: (f: File) => f.id },
  { header: 'NAME', get: (f: File) => f.name, flexible: true },
  { header: 'SIZE', get: (f: File) => bytes(f.size) },
  { header: 'VERSION', get: (f: File) => String(f.version) },
  { header: 'UPDATED', get: (f: File) => when(f.updated_at) },
];

export const files: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('files').description('files: upload, download, versions, trash, share links');
    examples(group, 'folio files upload report.pdf', 'folio files list', 'folio files download $ID -o report.pdf');

    const list = withOutput(group.command('list').alias('ls').description('list your files, most recently updated first'))
      .option('--folder <folder>', 'only the files in this folder')
      .option('-L, --limit <n>', 'how many files at most', positive, 50)
      .option('--trash', 'the files in the trash instead')
      .action(async (o: OutputOptions & { folder?: string; limit: number; trash?: boolean }) => {
        const { api, target } = cli.client();
        const items: File[] = [];
        let cursor: string | undefined;
        do {
          const limit = Math.min(100, o.limit - items.length);
          const query = { limit, ...(cursor ? { cursor } : {}) };
          const page = o.trash
            ? await ok(target, await api.GET('/filedb/trash', { params: { query } }))
            : await ok(
                target,
                await api.GET('/filedb/files', { params: { query: { ...query, ...(o.folder ? { folder: o.folder } : {}) } } }),
              );
          items.push(...page.items);
          cursor = page.next_cursor ?? undefined;
        } while (cursor && items.length < o.limit);
        await emit(items, o, () => table(items, fileColumns, o.trash ? 'the trash is empty' : 'no files'));
      });
    examples(list, 'folio files list --folder trips/2026', 'folio files list --json id,name,size');

    const infoCmd = withOutput(group.command('info').description("a file's details: name, size, type, version, sha256"))
      .argument('<id>', 'the file id')
      .action(async (typed: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'file', typed);
        const f = await ok(target, await api.GET('/filedb/files/{id}', { params: { path: { id } } }));
        await emit(f, o, () => {
          const rows: Array<[string, string]> = [
            ['id', f.id],
            ['name', f.name],
            ['folder', f.folder || '-'],
            ['size', `${bytes(f.size)} (${f.size} bytes)`],
            ['type', f.content_type],
            ['version', String(f.version)],
            ['sha256', f.sha256],
            ['note', f.note_id ?? '-'],
            ['updated', f.updated_at],
          ];
          for (const [k, v] of rows) process.stdout.write(`${k.padEnd(8)} ${v}\n`);
        });
      });
    examples(infoCmd, 'folio files info $ID', 'folio files info $ID --json sha256');

    const upload = withOutput(
      group
        .command('upload')
        .description(
          'upload a file (streamed from disk, resumable) and print its id; run it again after an interruption to send only the rest',
        ),
    )
      .argument('<path>', 'the file to upload')
      .option('--name <name>', 'the name to store it under (default: the file name)')
      .option('--folder <folder>', 'the folder to put it in')
      .option('--note <note-id>', 'attach it to this note')
      .action(async (file: string, o: OutputOptions & { name?: string; folder?: string; note?: string }) => {
        const target = cli.target();
        cli.client(); // fails with "not logged in" before the file is opened
        let size: number;
        try {
          const st = await stat(file);
          if (!st.isFile()) throw new CliError(`${file} is not a regular file`, EXIT.usage);
          size = st.size;
        } catch (err) {
          if (err instanceof CliError) throw err;
          throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.usage);
        }
        const name = o.name ?? path.basename(file);
        const note = o.note === undefined ? undefined : await fullId(target, 'note', o.note);
        const f = await resumableUpload(target, file, size, { name, folder: o.folder, note });
        await emit(f, o, () => process.stdout.write(f.id + '\n'));
      });
    examples(
      upload,
      'folio files upload report.pdf',
      'folio files upload scan.png --name receipt.png --note $ID',
      'ID=$(folio files upload backup.tar.gz)',
      'folio files upload big.iso   # interrupted? the same command again resumes where it stopped',
    );

    const download = group
      .command('download')
      .alias('get')
      .description('download a file (streamed to disk); without -o, to stdout when piped, else to its own name')
      .argument('<id>', 'the file id')
      .option('-o, --output <path>', 'write it here (- for stdout)')
      .option('--version <n>', 'an earlier version of the file', positive)
      .option('--clobber', 'overwrite the output file if it exists')
      .action(async (typed: string, o: { output?: string; version?: number; clobber?: boolean }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'file', typed);
        let out = o.output;
        if (out === undefined && process.stdout.isTTY) {
          out = (await ok(target, await api.GET('/filedb/files/{id}', { params: { path: { id } } }))).name;
        }
        const refuseExisting = async () => {
          if (out === undefined || out === '-' || o.clobber) return;
          if (
            await stat(out).then(
              () => true,
              () => false,
            )
          )
            throw new CliError(`${out} already exists; nothing was written (--clobber overwrites it, -o names another file)`, EXIT.usage);
        };
        await refuseExisting();
        const p = o.version
          ? `/filedb/files/${encodeURIComponent(id)}/versions/${o.version}/content`
          : `/filedb/files/${encodeURIComponent(id)}/content`;
        const res = await authed(target, p, { method: 'GET' });
        if (!res.ok || !res.body) throw await failure(target, res);
        const length = Number(res.headers.get('content-length')) || undefined;
        const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
        if (out === undefined || out === '-') {
          await pipeline(body, progress(`downloading ${id}`, length), process.stdout);
          return;
        }
        // Into a .part file beside it, renamed at the end: a cut-off download never looks complete.
        const part = `${out}.part`;
        const forget = removeOnInterrupt(part);
        try {
          await pipeline(body, progress(`downloading ${path.basename(out)}`, length), createWriteStream(part));
          if (o.clobber) await rename(part, out);
          else {
            // link fails if the name was taken while the download ran: never replaces a file
            await link(part, out).catch((err: NodeJS.ErrnoException) => {
              if (err.code === 'EEXIST')
                throw new CliError(
                  `${out} already exists; nothing was written (--clobber overwrites it, -o names another file)`,
                  EXIT.usage,
                );
              throw err;
            });
            await rm(part, { force: true });
          }
        } catch (err) {
          await rm(part, { force: true });
          if (err instanceof CliError) throw err;
          throw new CliError(`download of ${id} failed: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.failed);
        } finally {
          forget();
        }
        info(`wrote ${out}`);
      });
    examples(
      download,
      'folio files download $ID -o report.pdf',
      'folio files download $ID -o report.pdf --clobber',
      'folio files download $ID --version 1 > v1.pdf',
    );

    const versions = withOutput(group.command('versions').description("a file's versions, newest first"))
      .argument('<id>', 'the file id')
      .action(async (typed: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'file', typed);
        const { items } = await ok(target, await api.GET('/filedb/files/{id}/versions', { params: { path: { id } } }));
        await emit(items, o, () =>
          table(items, [
            { header: 'VERSION', get: (v) => String(v.version) },
            { header: 'CHANGE', get: (v) => v.change },
            { header: 'WHEN', get: (v) => v.created_at.slice(0, 19).replace('T', ' ') },
            { header: 'SIZE', get: (v) => bytes(v.size) },
            { header: 'NAME', get: (v) => v.name, flexible: true },
          ]),
        );
      });
    examples(versions, 'folio files versions $ID', 'folio files download $ID --version 1 -o old.pdf');

    const rmCmd = group
      .command('rm')
      .alias('delete')
      .description('move a file to the trash (or, with --purge, delete a trashed one for good)')
      .argument('<id>', 'the file id')
      .option('--purge', 'delete it for good (it must be in the trash already; there is no undo)')
      .action(async (typed: string, o: { purge?: boolean }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'file', typed);
        if (o.purge) {
          await ok(target, await api.DELETE('/filedb/trash/{id}', { params: { path: { id } } }));
          info(`purged ${id}`);
        } else {
          await ok(target, await api.DELETE('/filedb/files/{id}', { params: { path: { id } } }));
          info(`moved ${id} to the trash (undo: folio files restore ${id})`);
        }
      });
    examples(rmCmd, 'folio files rm $ID', 'folio files rm $ID --purge');

    const restore = group
      .command('restore')
      .description('bring a file back from the trash, or make an earlier version current again')
      .argument('<id>', 'the file id')
      .option('--version <n>', 'restore this earlier version (as a new version; nothing is lost)', positive)
      .action(async (typed: string, o: { version?: number }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'file', typed);
        const f = o.version
          ? await ok(
              target,
              await api.POST('/filedb/files/{id}/versions/{version}/restore', { params: { path: { id, version: o.version } } }),
            )
          : await ok(target, await api.POST('/filedb/files/{id}/restore', { params: { path: { id } } }));
        info(`restored ${id}: now version ${f.version}`);
      });
    examples(restore, 'folio files restore $ID', 'folio files restore $ID --version 1');

    const share = withOutput(group.command('share').description('make a share link (anyone with it can download) and print its URL'))
      .argument('<id>', 'the file id')
      .option('--expires-in <seconds>', 'the link stops working after this many seconds', positive)
      .option('--password-stdin', 'require a password, read from stdin (first line)')
      .option('--max-downloads <n>', 'the link stops working after this many downloads', positive)
      .option('--version <n>', 'always serve this version (default: the current one)', positive)
      .option('--label <text>', 'a note to yourself: who the link is for')
      .action(
        async (
          typed: string,
          o: OutputOptions & { expiresIn?: number; passwordStdin?: boolean; maxDownloads?: number; version?: number; label?: string },
        ) => {
          const { api, target } = cli.client();
          const id = await fullId(target, 'file', typed);
          let password: string | undefined;
          if (o.passwordStdin) {
            password = (await readStdin()).split(/\r?\n/)[0] ?? '';
            if (!password) throw new CliError('--password-stdin: stdin held no password', EXIT.usage);
          }
          const link = (await ok(
            target,
            await api.POST('/filedb/files/{id}/shares', {
              params: { path: { id } },
              body: {
                ...(o.expiresIn ? { expires_in_seconds: o.expiresIn } : {}),
                ...(o.maxDownloads ? { max_downloads: o.maxDownloads } : {}),
                ...(o.version ? { version: o.version } : {}),
                ...(o.label ? { label: o.label } : {}),
                ...(password ? { password } : {}),
              },
            }),
          )) as Share;
          await emit(link, o, () => process.stdout.write(`${link.url ?? ''}\n`));
        },
      );
    examples(share, 'folio files share $ID --expires-in 86400', 'echo s3cret | folio files share $ID --password-stdin --max-downloads 5');

    const shares = withOutput(group.command('shares').description('your share links: downloads, last access, state')).action(
      async (o: OutputOptions) => {
        const { api, target } = cli.client();
        const page: { items: Share[] } = await ok(target, await api.GET('/filedb/shares'));
        await emit(page.items, o, () =>
          table(
            page.items,
            [
              { header: 'ID', get: (l) => l.id },
              { header: 'FILE', get: (l) => l.file_name, flexible: true },
              { header: 'STATE', get: (l) => l.state },
              { header: 'DOWNLOADS', get: (l) => (l.max_downloads ? `${l.downloads}/${l.max_downloads}` : String(l.downloads)) },
              { header: 'EXPIRES', get: (l) => (l.expires_at ? when(l.expires_at) : '-') },
              { header: 'LABEL', get: (l) => l.label, flexible: true },
            ],
            'no share links',
          ),
        );
      },
    );
    examples(shares, 'folio files shares', 'folio files shares --json id,file_name,downloads');

    const unshare = group
      .command('unshare')
      .description('revoke a share link: it answers 404 from now on')
      .argument('<share-id>', 'the share link id (from folio files shares)')
      .action(async (id: string) => {
        const { api, target } = cli.client();
        await ok(target, await api.DELETE('/filedb/shares/{id}', { params: { path: { id } } }));
        info(`revoked share ${id}`);
      });
    examples(unshare, 'folio files unshare $ID');
  },
};
