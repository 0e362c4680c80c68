// Importing an archive of Markdown (a Folio export, an Obsidian vault, any folder of .md files and
// their attachments) as the caller, through the notes and files services, so validation, size
// limits and the quota are those of any write. Idempotent: a note whose front matter id is one of
// the caller's notes, or whose content this account imported before, is skipped; so is a file
// imported before. Every entry of the archive gets a line in the report: imported, skipped or
// failed, and why. Nothing is written to disk from the archive's names: notes and files go to the
// services, so a hostile name can only be refused, never followed.
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path/posix';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FolioError } from '../../contract/errors.ts';
import type { FilesServiceImpl } from '../files/service.ts';
import type { Principal } from '../identity/types.ts';
import { isTag, normalizeTag } from '../notes/markdown.ts';
import { rows } from '../notes/rows.ts';
import type { NotesServiceImpl } from '../notes/service.ts';
import { BODY_MAX_BYTES, TAGS_MAX } from '../notes/validate.ts';
import { NOTE_SOURCES, type NoteSource } from '../notes/types.ts';
import { Archive, ArchiveRefused, type ArchiveLimits, type Member } from './archive.ts';
import { BadFrontMatter, date, FRONT_MATTER_MAX_BYTES, parseNote, str, tagList } from './front-matter.ts';
import { inlineTags, pathKey, toFolioLinks, type Resolver, type Target } from './links.ts';
import type { Manifest, ReportEntry } from './types.ts';

type ManifestEntry = Manifest['entries'][number];

export interface ImportDeps {
  em: () => EntityManager;
  notes: NotesServiceImpl;
  files: FilesServiceImpl;
  /** Tell the notes cache the caller's notes changed. */
  notesChanged: (owner: string) => void;
}

interface NoteDraft {
  member: Member;
  id: string;
  hash: string;
  /** Already here: skipped. */
  existing: string | undefined;
  attachments: string[];
}
interface FileDraft {
  member: Member;
  hash: string;
  id: string | undefined;
  existing: boolean;
  /** Where and as what it is stored: from the manifest of a Folio export, else from its path. */
  folder: string;
  name: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NOTE_MAX = BODY_MAX_BYTES + FRONT_MATTER_MAX_BYTES + 1024;
const isNote = (p: string) => /\.(md|markdown)$/i.test(p);
const message = (err: unknown) =>
  err instanceof FolioError || err instanceof BadFrontMatter || err instanceof ArchiveRefused
    ? err.message
    : `failed: ${(err as Error).message}`;

const REVISION = 'revision history is exported for reading; an import writes the current version';

/** Why an entry is passed over without being read: tool folders and hidden files. */
function passedOver(p: string, folioExport: boolean): string | undefined {
  const parts = p.split('/');
  if (parts[0] === '.obsidian') return "Obsidian's settings folder";
  if (parts[0] === '__MACOSX') return "macOS's resource forks";
  if (parts.some((s) => s.startsWith('.'))) return 'a hidden file';
  if (folioExport && /\.revisions\/\d+\.md$/.test(p)) return REVISION;
  return undefined;
}

export async function runImport(
  d: ImportDeps,
  p: Principal,
  file: string,
  limits: ArchiveLimits,
  progress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<ReportEntry[]> {
  const report: ReportEntry[] = [];
  const archive = await Archive.open(file, limits);
  try {
    for (const r of archive.refused) report.push({ path: r.path, kind: 'other', status: 'failed', reason: r.reason });
    let folioExport = false;
    // A Folio export's manifest says what each entry is (a note, a file, a revision), and each
    // file's folder and name in Folio; the extension of a path in the zip decides nothing then.
    const listed = new Map<string, ManifestEntry>();
    const manifest = archive.members.find((m) => m.path === 'manifest.json');
    // A manifest larger than this is not Folio's (Folio's is ~200 bytes per entry): not read whole.
    if (manifest && manifest.size <= 64 * 1024 * 1024) {
      try {
        const m = JSON.parse((await archive.read(manifest)).toString('utf8')) as Partial<Manifest>;
        folioExport = m.format === 'folio-export';
        if (folioExport && Array.isArray(m.entries))
          for (const e of m.entries) if (e && typeof e.path === 'string') listed.set(e.path.normalize('NFC'), e);
      } catch {
        // not Folio's: imported as a file like any other
      }
    }
    const kindOf = (m: Member): 'note' | 'file' | 'revision' => {
      const e = listed.get(m.path);
      if (e) return e.kind === 'note' ? 'note' : e.kind === 'revision' ? 'revision' : 'file';
      return isNote(m.path) ? 'note' : 'file';
    };
    const notes: NoteDraft[] = [];
    const files: FileDraft[] = [];
    const owner = p.user.id;
    const total = archive.members.length * 2 || 1;
    let step = 0;
    const tick = () => {
      step++;
      if (step % 50 === 0) progress(step / total);
    };

    const known = await Known.load(d, owner);
    // Pass 1: read every member once: notes parsed (not kept), files hashed; decide what is new.
    for (const m of archive.members) {
      signal.throwIfAborted();
      tick();
      if (folioExport && m === manifest) continue;
      const over = kindOf(m) === 'revision' ? REVISION : passedOver(m.path, folioExport);
      if (over) {
        report.push({ path: m.path, kind: 'other', status: 'skipped', reason: over });
        continue;
      }
      try {
        if (kindOf(m) === 'note') notes.push(await firstLook(archive, m, known, !folioExport));
        else files.push(await hashFile(archive, m, known, where(m.path, folioExport, listed.get(m.path))));
      } catch (err) {
        report.push({ path: m.path, kind: kindOf(m) === 'note' ? 'note' : 'file', status: 'failed', reason: message(err) });
      }
    }

    const targets = new Map<string, Target>();
    const byName = new Map<string, Target>();
    const remember = (t: Target) => {
      targets.set(pathKey(t.path), t);
      const base = pathKey(path.basename(t.path));
      if (!byName.has(base)) byName.set(base, t);
    };

    // Pass 2a: files, unattached for now (a note's links need their ids before it is written).
    for (const f of files) {
      signal.throwIfAborted();
      tick();
      if (f.existing) {
        report.push({
          path: f.member.path,
          kind: 'file',
          status: 'skipped',
          id: f.id!,
          reason: 'already here (same id, or same folder, name and content)',
        });
        remember({ kind: 'file', path: f.member.path, id: f.id });
        continue;
      }
      try {
        const created = await d.files.create(p, {
          name: f.name,
          folder: f.folder,
          source: await archive.stream(f.member),
          length: f.member.size,
          signal,
        });
        f.id = created.id;
        await record(d, owner, f.hash, 'file', created.id);
        report.push({ path: f.member.path, kind: 'file', status: 'imported', id: created.id });
      } catch (err) {
        report.push({ path: f.member.path, kind: 'file', status: 'failed', reason: message(err) });
      }
      remember({ kind: 'file', path: f.member.path, id: f.id });
    }
    for (const n of notes) remember({ kind: 'note', path: n.member.path, id: n.existing ?? n.id });
    const resolver: Resolver = { byPath: (k) => targets.get(k), byName: (k) => byName.get(k) };
    const fileIds = new Map(files.filter((f) => f.id).map((f) => [f.member.path, f]));

    // A file a note's front matter names is that note's; one only linked to or embedded (an
    // Obsidian vault's) belongs to the first note that does, unless some front matter names it.
    const claimed = new Set<string>();
    for (const n of notes) for (const a of n.attachments) claimed.add(pathKey(path.normalize(path.join(path.dirname(n.member.path), a))));
    const attached = new Set<string>();

    // Pass 2b: notes, with their links resolved; then their attachments attached.
    let changed = false;
    for (const n of notes) {
      signal.throwIfAborted();
      tick();
      if (n.existing) {
        report.push({ path: n.member.path, kind: 'note', status: 'skipped', id: n.existing, reason: 'already here (same id or content)' });
        continue;
      }
      try {
        const parsed = parseNote(utf8.decode(await archive.read(n.member)), !folioExport);
        const fm = parsed.data;
        const links = toFolioLinks(parsed.body, n.member.path, resolver, !folioExport);
        const dropped: string[] = [];
        const over: string[] = [];
        const tags: string[] = [];
        for (const raw of [...tagList(fm['tags']), ...(folioExport ? [] : inlineTags(parsed.body))]) {
          const t = normalizeTag(raw);
          if (!isTag(t)) dropped.push(raw);
          else if (tags.includes(t)) continue;
          else if (tags.length < TAGS_MAX) tags.push(t);
          else over.push(t);
        }
        const source = str(fm['source']);
        // A date the database cannot hold (before year 1, after 9999) is reported and replaced.
        const badDates: string[] = [];
        const when = (key: string): string | undefined => {
          const v = fm[key];
          if (v === undefined || v === null) return undefined;
          const d = date(v);
          const year = d === undefined ? NaN : new Date(d).getUTCFullYear();
          if (d !== undefined && year >= 1 && year <= 9999) return d;
          badDates.push(`${key} (${(typeof v === 'string' ? v : (d ?? JSON.stringify(v) ?? '')).slice(0, 40)})`);
          return undefined;
        };
        const created = when('created') ?? n.member.modified.toISOString();
        const note = await d.notes.importNote(p, {
          id: n.id,
          title: noteTitle(fm, n.member.path),
          body: links.body,
          tags,
          source: source && NOTE_SOURCES.includes(source as NoteSource) ? (source as NoteSource) : 'import',
          created_at: created,
          updated_at: when('updated') ?? when('modified') ?? created,
        });
        changed = true;
        await record(d, owner, n.hash, 'note', note.id);
        const attach = new Set(folioExport ? [] : [...links.files].filter((f) => !claimed.has(pathKey(f)) && !attached.has(f)));
        for (const a of n.attachments) {
          const full = path.normalize(path.join(path.dirname(n.member.path), a));
          const t = targets.get(pathKey(full));
          if (t?.kind === 'file') attach.add(t.path);
          else links.unresolved.push(a);
        }
        for (const a of attach) {
          const f = fileIds.get(a);
          attached.add(a);
          if (f?.id && !f.existing) await d.files.attach(p, f.id, note.id).catch(() => undefined);
        }
        const notes: string[] = [];
        if (links.unresolved.length) notes.push(`not found in the archive: ${[...new Set(links.unresolved)].join(', ')}`);
        if (parsed.kept) notes.push(parsed.kept);
        if (over.length) notes.push(`more than ${TAGS_MAX} tags: kept the first ${TAGS_MAX}, left out ${over.join(', ')}`);
        if (badDates.length) notes.push(`not a date between the years 1 and 9999, the archive's time used instead: ${badDates.join(', ')}`);
        if (dropped.length) notes.push(`not tags (${'1 to 64 letters, digits, _ - / .'}): ${dropped.join(', ')}`);
        report.push({
          path: n.member.path,
          kind: 'note',
          status: 'imported',
          id: note.id,
          ...(notes.length ? { reason: notes.join('; ') } : {}),
        });
      } catch (err) {
        report.push({ path: n.member.path, kind: 'note', status: 'failed', reason: message(err) });
      }
    }
    if (changed) d.notesChanged(owner);
    return report;
  } finally {
    archive.close();
  }
}

function noteTitle(fm: Record<string, unknown>, p: string): string {
  const t = str(fm['title'])?.trim();
  if (t) return t.replace(/\p{Cc}+/gu, ' ').slice(0, 500);
  return (
    path
      .basename(p)
      .replace(/\.(md|markdown)$/i, '')
      .trim() || 'Untitled'
  );
}

/** What the caller has: their note ids, and what earlier imports wrote that is still there. */
class Known {
  readonly notes = new Set<string>();
  readonly files = new Set<string>();
  /** Live files by folder, name and content. */
  readonly fileKeys = new Map<string, string>();
  readonly imported = new Map<string, string>();

  static async load(d: ImportDeps, owner: string): Promise<Known> {
    const k = new Known();
    const em = d.em();
    // Only live ones: a note or file in the trash is not "already here"; its import makes a new one.
    for (const r of await rows<{ id: string }>(em, `select id from notes where owner_id = ? and deleted_at is null`, [owner]))
      k.notes.add(r.id);
    for (const r of await rows<{ id: string; folder: string; name: string; sha256: string }>(
      em,
      `select id, folder, name, sha256 from files where owner_id = ? and deleted_at is null`,
      [owner],
    )) {
      k.files.add(r.id);
      k.fileKeys.set(fileKey(r.folder, r.name, r.sha256), r.id);
    }
    const found = await rows<{ content_hash: string; object_id: string }>(
      em,
      `select x.content_hash, x.object_id from exchange_imported x
        where x.owner_id = ?
          and (exists (select 1 from notes n where n.id = x.object_id and n.owner_id = x.owner_id and n.deleted_at is null)
            or exists (select 1 from files f where f.id = x.object_id and f.owner_id = x.owner_id and f.deleted_at is null))`,
      [owner],
    );
    for (const r of found) k.imported.set(r.content_hash, r.object_id);
    return k;
  }
}

async function firstLook(archive: Archive, m: Member, known: Known, lenient: boolean): Promise<NoteDraft> {
  if (m.size > NOTE_MAX) throw new Error(`${m.size} bytes: over the note size limit of ${BODY_MAX_BYTES} bytes (1 MiB)`);
  const bytes = await archive.read(m);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new BadFrontMatter('the note is not valid UTF-8 text');
  }
  const parsed = parseNote(text, lenient);
  const hash = createHash('sha256').update('note\n').update(m.path).update('\n').update(bytes).digest('hex');
  const fmId = str(parsed.data['id'])?.toLowerCase();
  const existing = fmId !== undefined && known.notes.has(fmId) ? fmId : known.imported.get(hash);
  const attachments = Array.isArray(parsed.data['attachments'])
    ? parsed.data['attachments'].filter((a): a is string => typeof a === 'string')
    : [];
  return { member: m, id: randomUUID(), hash, existing, attachments };
}

async function hashFile(
  archive: Archive,
  m: Member,
  known: Known,
  at: { folder: string; name: string; id: string | undefined },
): Promise<FileDraft> {
  const h = createHash('sha256');
  for await (const c of await archive.stream(m)) h.update(c as Buffer);
  const content = h.digest('hex');
  const hash = createHash('sha256').update('file\n').update(m.path).update('\n').update(content).digest('hex');
  // The same file: the manifest's id is one of the caller's live files (their own export), or a
  // live file has the same folder, name and content, or an earlier import wrote it.
  const id =
    (at.id !== undefined && known.files.has(at.id) ? at.id : undefined) ??
    known.fileKeys.get(fileKey(at.folder, at.name, content)) ??
    known.imported.get(hash);
  return { member: m, hash, id, existing: id !== undefined, folder: at.folder, name: at.name };
}

const fileKey = (folder: string, name: string, sha256: string) => `${folder}\n${name}\n${sha256}`;

/** A file's folder and name: a Folio export's manifest has them; else the path in the archive. */
function where(p: string, folioExport: boolean, e: ManifestEntry | undefined): { folder: string; name: string; id: string | undefined } {
  if (e && (e.kind === 'file' || e.kind === 'attachment') && typeof e.name === 'string' && e.name !== '')
    return {
      folder: typeof e.folder === 'string' ? e.folder : '',
      name: e.name,
      id: typeof e.id === 'string' ? e.id.toLowerCase() : undefined,
    };
  const dir = path.dirname(p);
  const folder =
    dir === '.' ? '' : folioExport && dir.startsWith('notes') ? '' : folioExport && dir.startsWith('files') ? dir.slice(6) : dir;
  return { folder, name: path.basename(p), id: e && typeof e.id === 'string' ? e.id.toLowerCase() : undefined };
}

async function record(d: ImportDeps, owner: string, hash: string, kind: 'note' | 'file', id: string): Promise<void> {
  await d.em().execute(
    `insert into exchange_imported (owner_id, content_hash, kind, object_id) values (?, ?, ?, ?)
     on conflict (owner_id, content_hash) do update set object_id = excluded.object_id, kind = excluded.kind`,
    [owner, hash, kind, id],
  );
}
