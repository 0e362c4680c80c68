// Writing one user's notes and files as a zip: Markdown notes with YAML front matter under notes/,
// each note's attached files beside it (notes/<note>/<file>), files not attached to a note under
// files/<folder>/, every revision of a note with --revisions (notes/<note>.revisions/<n>.md), and a
// manifest.json listing every entry with its sha256 and ids. Links in a note to another note or to
// an exported file become relative paths. Paths are decided from titles and names in a fixed order
// (creation time, then title), so exporting the same content twice gives the same paths. The zip
// is written as it is read: a batch of notes (200) is read at a time, and notes and revisions
// wait to be queued while more than 100 entries or 8 MiB are queued ahead of what is written,
// so a note with many large revisions is held a few revisions at a time, not all of them.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import yazl from 'yazl';
import type { FilesServiceImpl } from '../files/service.ts';
import type { Principal } from '../identity/types.ts';
import { ms, rows } from '../notes/rows.ts';
import type { NotesService } from '../notes/types.ts';
import { writeNote } from './front-matter.ts';
import { relative, segment, toArchiveLinks, UniqueNames } from './links.ts';
import type { Manifest } from './types.ts';

export interface ExportDeps {
  em: () => EntityManager;
  notes: NotesService;
  files: FilesServiceImpl;
  folioVersion: string;
}

interface NoteHead {
  id: string;
  title: string;
  created_ms: number;
}
interface FileHead {
  id: string;
  name: string;
  folder: string;
  note_id: string | null;
  size: string;
  sha256: string;
  updated_ms: number;
}

const BATCH = 200;
/** Entries yazl may have queued ahead of what it has written. */
const AHEAD = 100;
/** Bytes of queued notes and revisions held ahead of what yazl has written (a few large ones). */
const AHEAD_BYTES = 8 * 1024 * 1024;

export async function writeExport(
  d: ExportDeps,
  p: Principal,
  opts: { revisions: boolean; files: boolean },
  out: string,
  progress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<{ size: number; counts: Manifest['counts'] }> {
  const owner = p.user.id;
  const heads = await rows<NoteHead>(
    d.em(),
    `select id, title, ${ms('created_at', 'created_ms')} from notes where owner_id = ? and deleted_at is null order by created_at, title, id`,
    [owner],
  );
  const files = opts.files
    ? await rows<FileHead>(
        d.em(),
        `select f.id, f.name, f.folder, f.note_id, f.size, f.sha256, ${ms('f.updated_at', 'updated_ms')} from files f
          where f.owner_id = ? and f.deleted_at is null order by f.folder, f.name, f.created_at, f.id`,
        [owner],
      )
    : [];

  // Paths first: every link between notes and to files is known before any note is written.
  const names = new UniqueNames();
  names.reserve('manifest.json');
  const notePath = new Map<string, string>();
  for (const n of heads) notePath.set(n.id, names.take('notes/', segment(n.title), '.md'));
  const filePath = new Map<string, string>();
  for (const f of files) {
    const attachedTo = f.note_id !== null ? notePath.get(f.note_id) : undefined;
    const dir = attachedTo
      ? `${attachedTo.slice(0, -3)}/`
      : `files/${
          f.folder
            ? f.folder
                .split('/')
                .map((s) => segment(s, '_'))
                .join('/') + '/'
            : ''
        }`;
    const dot = f.name.lastIndexOf('.');
    const ext = dot > 0 ? `.${segment(f.name.slice(dot + 1), '', 20)}`.replace(/\.$/, '') : '';
    filePath.set(f.id, names.take(dir, segment(dot > 0 ? f.name.slice(0, dot) : f.name, 'file'), ext));
  }
  const attachedTo = new Map<string, string[]>();
  for (const f of files)
    if (f.note_id !== null && notePath.has(f.note_id)) attachedTo.set(f.note_id, [...(attachedTo.get(f.note_id) ?? []), f.id]);
  const pathOf = (kind: 'note' | 'file', id: string) => (kind === 'note' ? notePath.get(id) : filePath.get(id));

  const zip = new yazl.ZipFile();
  const written = pipeline(zip.outputStream as unknown as Readable, createWriteStream(out), { signal });
  written.catch(() => {});
  let added = 0;
  let started = 0;
  let heldBytes = 0;
  let wake: (() => void) | undefined;
  const add = (path: string, bytes: Buffer, mtime: Date) => {
    added++;
    heldBytes += bytes.length;
    zip.addReadStreamLazy(path, { mtime, size: bytes.length }, (cb) => {
      started++;
      heldBytes -= bytes.length;
      wake?.();
      cb(null, Readable.from([bytes]));
    });
  };
  const caughtUp = async () => {
    while (added - started > AHEAD || heldBytes > AHEAD_BYTES) {
      signal.throwIfAborted();
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
    }
  };
  const entries: Manifest['entries'] = [];
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  let revisionCount = 0;
  const total = heads.length + files.length || 1;
  let done = 0;

  for (let i = 0; i < heads.length; i += BATCH) {
    signal.throwIfAborted();
    const ids = heads.slice(i, i + BATCH).map((h) => h.id);
    const batch = await rows<{
      id: string;
      title: string;
      body: string;
      tags: string[];
      source: string;
      created_ms: number;
      updated_ms: number;
    }>(
      d.em(),
      `select id, title, body, tags, source, ${ms('created_at', 'created_ms')}, ${ms('updated_at', 'updated_ms')}
         from notes where owner_id = ? and id = any(?::uuid[])`,
      [owner, `{${ids.join(',')}}`],
    );
    const byId = new Map(batch.map((n) => [n.id, n]));
    for (const id of ids) {
      const n = byId.get(id);
      if (!n) continue; // purged since the list was read
      const path = notePath.get(id)!;
      const attachments = (attachedTo.get(id) ?? []).map((f) => relative(path, filePath.get(f)!));
      const data: Record<string, unknown> = {
        id: n.id,
        title: n.title,
        tags: n.tags,
        source: n.source,
        created: new Date(n.created_ms).toISOString(),
        updated: new Date(n.updated_ms).toISOString(),
      };
      if (attachments.length > 0) data['attachments'] = attachments;
      const bytes = Buffer.from(writeNote(data, toArchiveLinks(n.body, path, pathOf)), 'utf8');
      add(path, bytes, new Date(n.updated_ms));
      entries.push({ path, kind: 'note', id: n.id, sha256: sha(bytes), size: bytes.length });
      if (opts.revisions) revisionCount += await addRevisions(d, p, n.id, path, add, caughtUp, entries, sha);
      done++;
      await caughtUp();
    }
    progress((done / total) * 0.95);
  }

  for (const f of files) {
    signal.throwIfAborted();
    const path = filePath.get(f.id)!;
    const ref = await d.files.content(p, f.id).catch(() => null);
    if (!ref) continue;
    added++;
    zip.addReadStreamLazy(path, { mtime: new Date(f.updated_ms), size: ref.size }, (cb) => {
      started++;
      wake?.();
      d.files.read(ref).then(
        (s) => cb(null, s),
        (err: unknown) => cb(err, undefined as never),
      );
    });
    const note = f.note_id !== null && notePath.has(f.note_id) ? { note_id: f.note_id } : {};
    entries.push({
      path,
      kind: note.note_id ? 'attachment' : 'file',
      id: f.id,
      ...note,
      folder: f.folder,
      name: f.name,
      sha256: ref.sha256,
      size: ref.size,
    });
    done++;
    await caughtUp();
    progress((done / total) * 0.95);
  }

  const counts = { notes: heads.length, files: files.length, revisions: revisionCount };
  const manifest: Manifest = {
    format: 'folio-export',
    format_version: 1,
    folio_version: d.folioVersion,
    user: { id: p.user.id, email: p.user.email },
    exported_at: new Date().toISOString(),
    counts,
    entries,
  };
  zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2) + '\n'), 'manifest.json');
  zip.end();
  await written;
  return { size: (await stat(out)).size, counts };
}

async function addRevisions(
  d: ExportDeps,
  p: Principal,
  id: string,
  notePath: string,
  add: (path: string, bytes: Buffer, mtime: Date) => void,
  caughtUp: () => Promise<void>,
  entries: Manifest['entries'],
  sha: (b: Buffer) => string,
): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  const dir = `${notePath.slice(0, -3)}.revisions/`;
  do {
    const page = await d.notes.revisions(p, id, { limit: 100, ...(cursor ? { cursor } : {}) });
    for (const r of page.items) {
      const rev = await d.notes.revision(p, id, r.version);
      const bytes = Buffer.from(
        writeNote({ version: rev.version, title: rev.title, tags: rev.tags, change: rev.change, created: rev.created_at }, rev.body),
        'utf8',
      );
      const path = `${dir}${rev.version}.md`;
      add(path, bytes, new Date(rev.created_at));
      entries.push({ path, kind: 'revision', id, sha256: sha(bytes), size: bytes.length });
      n++;
      // One revision at a time: the next is read only once the zip has taken most of the queue.
      await caughtUp();
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return n;
}
