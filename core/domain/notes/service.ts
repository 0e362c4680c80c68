// The notes domain service. Owns the rules (validation, versions, trash, revisions) and the
// transactions; never sees HTTP. Every query carries `owner_id = <the principal's user>` in its WHERE,
// so another user's note is NotFound by construction. Writes lock the note row (select ... for update)
// for the length of one short transaction: replacing edits compare expected_version under that lock
// (stale -> Conflict with the current note), appends simply queue behind it and all land in order.
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Conflict, NotFound } from '../../contract/errors.ts';
import type { Principal } from '../identity/types.ts';
import type { ResourceEvents } from '../../contract/search.ts';
import { chargeStorage, storageUsage, type StorageSettings } from '../storage/usage.ts';
import { applyStatsDelta, applyWordDelta, derive, tagDelta, VECTOR_WORDS_SQL, wordDelta, wordsOf, type Content } from './derived.ts';
import { appendToBody, appendUnderHeading, prependToBody, prependUnderHeading, replaceUnderHeading } from './markdown.ts';
import { buildReport } from './report.ts';
import { chainState, metaBytes, planRevision, revisionBody } from './revision-store.ts';
import { DiffThread } from './diff-thread.ts';
import { ReportRenderPool, ReportSlots } from './report-pool.ts';
import {
  NOTE_COLUMNS,
  NOW_MS,
  REVISION_COLUMNS,
  SUMMARY_COLUMNS,
  ms,
  rows,
  toNote,
  toRevision,
  toRevisionSummary,
  toSummary,
  type NoteRow,
  type RevisionRow,
  type SummaryRow,
} from './rows.ts';
import { searchNotes } from './search.ts';
import type {
  AppendText,
  CreateNote,
  ListOptions,
  Note,
  NotesService,
  NotesSummary,
  NoteSummary,
  Page,
  ReplaceSection,
  ReportOptions,
  Revision,
  RevisionChange,
  RevisionDiff,
  RevisionSummary,
  SearchHit,
  SearchOptions,
  StorageUse,
  UpdateNote,
} from './types.ts';
import * as v from './validate.ts';

export interface NotesServiceOptions {
  /** How long a note stays in the trash before purgeExpiredTrash() removes it (default 30). */
  trashRetentionDays?: number;
  /** How many notes a report fetches per query (default 500). */
  reportBatchSize?: number;
  /** The per-user storage quota that revisions count against (default: no limit). */
  storage?: StorageSettings;
  /** How many reports one user may have rendering at once (default 2). */
  reportsPerUser?: number;
  /** Worker threads that render reports (default: the cores but one, 1 to 4). */
  reportThreads?: number | null;
  /** Folio's public URL, for links back to notes in reports. */
  publicUrl?: () => string;
  /** Told of every note written, trashed, restored or purged, in the write's transaction (search listens). */
  events?: ResourceEvents;
}

/** The kind of resource a note is, for search. */
export const NOTE_KIND = 'note';

/** The storage kind note revisions are counted under. */
const STORAGE_KIND = 'notes';

type Mutation = (cur: NoteRow) => Content;

interface WriteSpec {
  change: RevisionChange;
  expectedVersion?: number | undefined;
  /** New content; omitted for trash/untrash, which change only the state. */
  mutate?: Mutation;
  /** Path blamed when the result is too large. */
  sizePath?: string;
}

export class NotesServiceImpl implements NotesService {
  readonly #orm: MikroORM;
  readonly #retentionDays: number;
  readonly #reportBatchSize: number;
  readonly #storage: StorageSettings;
  readonly #reportPool: ReportRenderPool;
  readonly #publicUrl: () => string;
  readonly #reportSlots: ReportSlots;
  readonly #diffs = new DiffThread();
  readonly #events: ResourceEvents | undefined;

  constructor(db: { orm: MikroORM }, opts: NotesServiceOptions = {}) {
    this.#orm = db.orm;
    this.#storage = opts.storage ?? { quotaBytesPerUser: null };
    this.#retentionDays = opts.trashRetentionDays ?? 30;
    this.#reportBatchSize = opts.reportBatchSize ?? 500;
    if (!(this.#retentionDays >= 0)) throw new Error('trashRetentionDays must be >= 0');
    if (!Number.isInteger(this.#reportBatchSize) || this.#reportBatchSize < 1)
      throw new Error('reportBatchSize must be a positive integer');
    this.#reportSlots = new ReportSlots(opts.reportsPerUser ?? 2);
    this.#reportPool = new ReportRenderPool({ threads: opts.reportThreads });
    this.#publicUrl = opts.publicUrl ?? (() => '');
    this.#events = opts.events;
  }

  async #changed(em: EntityManager, owner: string, ids: string[]): Promise<void> {
    await this.#events?.changed(
      em,
      ids.map((id) => ({ kind: NOTE_KIND, owner, id })),
    );
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }

  // --- reads -------------------------------------------------------------------------------------

  async list(p: Principal, opts: ListOptions = {}): Promise<Page<NoteSummary>> {
    const { limit, clampedFrom } = v.limit(opts.limit);
    const list = `${opts.trashed ? 'trash' : 'notes'}:${p.user.id}`;
    const cursor = v.decodeCursor(opts.cursor, 'tu', list);
    const tags = v.optionalTags(opts.tags, 'tags');
    const params: unknown[] = [p.user.id];
    let where = `owner_id = ? and deleted_at is ${opts.trashed ? 'not null' : 'null'}`;
    if (tags?.length) {
      where += ` and tags @> array[?]::text[]`;
      params.push(tags);
    }
    if (opts.idPrefix !== undefined) {
      where += ` and id between ?::uuid and ?::uuid`;
      params.push(...v.idPrefixRange(opts.idPrefix));
    }
    if (cursor) {
      where += ` and (updated_at, id) < (?::timestamptz, ?::uuid)`;
      params.push(new Date(cursor[0] as number).toISOString(), cursor[1]);
    }
    params.push(limit + 1);
    const found = await rows<SummaryRow>(
      this.#em(),
      `select ${SUMMARY_COLUMNS} from notes where ${where} order by updated_at desc, id desc limit ?`,
      params,
    );
    return page(
      found.slice(0, limit).map(toSummary),
      found.length > limit,
      limit,
      clampedFrom,
      (last) => [Date.parse(last.updated_at), last.id],
      list,
    );
  }

  async get(p: Principal, id: string): Promise<Note> {
    if (!v.isUuid(id)) throw notFound();
    const [row] = await rows<NoteRow>(this.#em(), `select ${NOTE_COLUMNS} from notes where id = ? and owner_id = ?`, [id, p.user.id]);
    if (!row) throw notFound();
    return toNote(row);
  }

  async tags(p: Principal): Promise<Array<{ tag: string; count: number }>> {
    const found = await rows<{ tag: string; count: number }>(
      this.#em(),
      `select tag, live_count as count from note_tag_stats where owner_id = ? and live_count > 0 order by live_count desc, tag collate "C"`,
      [p.user.id],
    );
    return found.map((r) => ({ tag: r.tag, count: r.count }));
  }

  /** Two primary-key reads of per-user counters kept by every write: constant time at any size. */
  async summary(userId: string): Promise<NotesSummary> {
    if (!v.isUuid(userId)) return { count: 0, tags: {} };
    const [row] = await rows<{ count: number | null; tags: Record<string, number> }>(
      this.#em(),
      `select (select live_count from note_stats where owner_id = ?) as count,
              (select coalesce(jsonb_object_agg(tag, live_count), '{}'::jsonb) from note_tag_stats where owner_id = ? and live_count > 0) as tags`,
      [userId, userId],
    );
    return { count: row?.count ?? 0, tags: row?.tags ?? {} };
  }

  async storageUse(p: Principal): Promise<StorageUse> {
    const u = await storageUsage(this.#em(), p.user.id, this.#storage);
    return { used: u.total, quota: u.quota, by_kind: { notes: 0, ...u.byKind } };
  }

  async search(p: Principal, opts: SearchOptions): Promise<Page<SearchHit>> {
    return searchNotes(this.#em(), p.user.id, opts);
  }

  // --- writes ------------------------------------------------------------------------------------

  async create(p: Principal, input: CreateNote): Promise<Note> {
    const content: Content = {
      title: v.title(input?.title),
      body: input.body === undefined ? '' : v.text(input.body, 'body', { allowEmpty: true }),
      tags: input.tags === undefined ? [] : v.tags(input.tags),
    };
    const source = v.source(input.source);
    return this.#insert(p.user.id, content, source);
  }

  /**
   * A note written by an import (core/domain/exchange): the same rules and quota as create, but it
   * keeps the times it had where it came from and takes the id the import chose (so links between
   * imported notes can be written before the notes are). Not on any public surface.
   */
  async importNote(p: Principal, input: CreateNote & { id: string; created_at: string; updated_at: string }): Promise<Note> {
    const content: Content = {
      title: v.title(input?.title),
      body: input.body === undefined ? '' : v.text(input.body, 'body', { allowEmpty: true }),
      tags: input.tags === undefined ? [] : v.tags(input.tags),
    };
    const created = Date.parse(input.created_at);
    const updated = Date.parse(input.updated_at);
    if (!v.isUuid(input.id)) throw v.bad('id', 'must be a UUID');
    if (!Number.isFinite(created) || !Number.isFinite(updated)) throw v.bad('created', 'created and updated must be dates');
    return this.#insert(p.user.id, content, v.source(input.source), {
      id: input.id,
      created: new Date(created).toISOString(),
      updated: new Date(Math.max(created, updated)).toISOString(),
    });
  }

  async #insert(
    ownerId: string,
    content: Content,
    source: Note['source'],
    at?: { id: string; created: string; updated: string },
  ): Promise<Note> {
    const id = at?.id ?? randomUUID();
    const d = derive(content);
    // The first revision is a snapshot.
    const stored = metaBytes(content.title, content.tags) + d.bodyBytes;
    return this.#em().transactional(async (em) => {
      const [r] = await rows<{ ts_ms: number; created_ms: number }>(
        em,
        `with n as (
           insert into notes (id, owner_id, title, body, tags, source, version, body_bytes, excerpt, open_items, search_vector, created_at, updated_at)
           select ?, ?, ?, ?, array[?]::text[], ?, 1, ?, ?, array[?]::text[], ?::tsvector, coalesce(?::timestamptz, c.ts), coalesce(?::timestamptz, c.ts)
             from (select ${NOW_MS} as ts) c
           returning *)
         insert into note_revisions (note_id, version, owner_id, title, body, tags, change, body_bytes, created_at, base_version, chain_bytes, stored_bytes)
         select n.id, n.version, n.owner_id, n.title, n.body, n.tags, 'create', n.body_bytes, n.updated_at, n.version, 0, ? from n
         returning ${ms('created_at', 'ts_ms')}, ${ms('(select created_at from n)', 'created_ms')}`,
        [
          id,
          ownerId,
          content.title,
          content.body,
          content.tags,
          source,
          d.bodyBytes,
          d.excerpt,
          d.openItems,
          d.vector,
          at?.created ?? null,
          at?.updated ?? null,
          stored,
        ],
      );
      await applyWordDelta(em, ownerId, wordDelta(new Set(), d.words));
      await applyStatsDelta(em, ownerId, tagDelta(null, content.tags), 1);
      await chargeStorage(em, ownerId, STORAGE_KIND, stored, this.#storage);
      await this.#changed(em, ownerId, [id]);
      const when = new Date(r!.ts_ms).toISOString();
      return { id, ...content, source, version: 1, created_at: new Date(r!.created_ms).toISOString(), updated_at: when, deleted_at: null };
    });
  }

  async update(p: Principal, id: string, input: UpdateNote): Promise<Note> {
    const expected = v.version(input?.expected_version, 'expected_version');
    const title = input.title === undefined ? undefined : v.title(input.title);
    const body = input.body === undefined ? undefined : v.text(input.body, 'body', { allowEmpty: true });
    const tags = input.tags === undefined ? undefined : v.tags(input.tags);
    if (title === undefined && body === undefined && tags === undefined) {
      throw v.bad('', 'need at least one of title, body, tags to update');
    }
    return this.#write(p, id, {
      change: 'update',
      expectedVersion: expected,
      mutate: (cur) => ({ title: title ?? cur.title, body: body ?? cur.body, tags: tags ?? cur.tags }),
    });
  }

  async append(p: Principal, id: string, input: AppendText): Promise<Note> {
    return this.#addText(p, id, input, 'append');
  }

  async prepend(p: Principal, id: string, input: AppendText): Promise<Note> {
    return this.#addText(p, id, input, 'prepend');
  }

  #addText(p: Principal, id: string, input: AppendText, change: 'append' | 'prepend'): Promise<Note> {
    const text = v.text(input?.text, 'text', { allowEmpty: false });
    const heading = input.heading === undefined ? undefined : headingArg(input.heading);
    return this.#write(p, id, {
      change,
      sizePath: 'text',
      mutate: (cur) => {
        let body: string;
        if (heading !== undefined) body = (change === 'append' ? appendUnderHeading : prependUnderHeading)(cur.body, heading, text);
        else body = (change === 'append' ? appendToBody : prependToBody)(cur.body, text);
        return { title: cur.title, body, tags: cur.tags };
      },
    });
  }

  async replaceSection(p: Principal, id: string, input: ReplaceSection): Promise<Note> {
    const expected = v.version(input?.expected_version, 'expected_version');
    const heading = headingArg(input.heading);
    const text = v.text(input.text, 'text', { allowEmpty: true });
    return this.#write(p, id, {
      change: 'replace_section',
      expectedVersion: expected,
      sizePath: 'text',
      mutate: (cur) => ({ title: cur.title, body: replaceUnderHeading(cur.body, heading, text), tags: cur.tags }),
    });
  }

  async trash(p: Principal, id: string, expectedVersion?: number): Promise<Note> {
    const expected = expectedVersion === undefined ? undefined : v.version(expectedVersion, 'expected_version');
    return this.#write(p, id, { change: 'trash', expectedVersion: expected });
  }

  async untrash(p: Principal, id: string): Promise<Note> {
    return this.#write(p, id, { change: 'untrash' });
  }

  async restoreRevision(p: Principal, id: string, version: number, expectedVersion?: number): Promise<Note> {
    const wanted = v.version(version, 'version');
    const expected = expectedVersion === undefined ? undefined : v.version(expectedVersion, 'expected_version');
    if (!v.isUuid(id)) throw notFound();
    const em = this.#em();
    const [rev] = await rows<RevisionRow>(
      em,
      `select ${REVISION_COLUMNS} from note_revisions where note_id = ? and owner_id = ? and version = ?`,
      [id, p.user.id, wanted],
    );
    if (!rev) throw new NotFound(`note ${id} has no version ${wanted}`);
    const body = await revisionBody(em, id, p.user.id, wanted);
    if (body === null) throw new NotFound(`note ${id} has no version ${wanted}`);
    return this.#write(p, id, {
      change: 'restore_revision',
      expectedVersion: expected,
      mutate: () => ({ title: rev.title, body, tags: rev.tags }),
    });
  }

  /** One write: lock the row, check state and version, apply, keep a revision, keep counters in step. */
  async #write(p: Principal, id: string, spec: WriteSpec): Promise<Note> {
    if (!v.isUuid(id)) throw notFound();
    const owner = p.user.id;
    return this.#em().transactional(async (em) => {
      const [cur] = await rows<NoteRow & { old_words: string[] }>(
        em,
        `select ${NOTE_COLUMNS}${spec.mutate ? `, ${VECTOR_WORDS_SQL('search_vector')} as old_words` : ''}
           from notes where id = ? and owner_id = ? for update`,
        [id, owner],
      );
      if (!cur) throw notFound();
      const trashed = cur.deleted_ms !== null;
      const { old_words: oldWords, ...current } = cur;
      if (spec.change === 'untrash' ? !trashed : trashed) {
        throw new Conflict(trashed ? 'the note is in the trash; untrash it first' : 'the note is not in the trash', toNote(current));
      }
      if (spec.expectedVersion !== undefined && spec.expectedVersion !== cur.version) {
        throw new Conflict(
          `the note is at version ${cur.version}, not ${spec.expectedVersion}: it changed since you read it; nothing was written`,
          toNote(current),
        );
      }
      let set: string;
      const params: unknown[] = [];
      let next: Content = { title: cur.title, body: cur.body, tags: cur.tags };
      if (spec.mutate) {
        next = spec.mutate(cur);
        v.checkBodySize(next.body, spec.sizePath ?? 'body');
        const d = derive(next);
        set = `title = ?, body = ?, tags = array[?]::text[], body_bytes = ?, excerpt = ?, open_items = array[?]::text[], search_vector = ?::tsvector`;
        params.push(next.title, next.body, next.tags, d.bodyBytes, d.excerpt, d.openItems, d.vector);
        await this.#afterContent(em, owner, oldWords ?? [], d.words);
      } else {
        set = spec.change === 'trash' ? `deleted_at = c.ts` : `deleted_at = null`;
      }
      // Read once the row is locked, in a statement of its own: a statement that waited for the lock
      // sees the note as its writer left it, but not that writer's revision.
      const chain = await chainState(em, id, cur.version);
      const rev = planRevision(cur.version + 1, chain, cur.body, next);
      const [r] = await rows<{ version: number; ts_ms: number }>(
        em,
        `with n as (
           update notes set ${set}, version = notes.version + 1, updated_at = c.ts
             from (select ${NOW_MS} as ts) c
            where notes.id = ? and notes.owner_id = ? returning notes.*)
         insert into note_revisions (note_id, version, owner_id, title, body, delta, tags, change, body_bytes, created_at, base_version, chain_bytes, stored_bytes)
         select n.id, n.version, n.owner_id, n.title, case when ?::boolean then n.body end, ?, n.tags, ?, n.body_bytes, n.updated_at, ?, ?, ? from n
         returning version, ${ms('created_at', 'ts_ms')}`,
        [...params, id, owner, rev.snapshot, rev.delta, spec.change, rev.base_version, rev.chain_bytes, rev.stored_bytes],
      );
      const liveBefore = trashed ? null : cur.tags;
      const liveAfter = spec.change === 'trash' ? null : next.tags;
      const live = spec.change === 'trash' ? -1 : spec.change === 'untrash' ? 1 : 0;
      await applyStatsDelta(em, owner, tagDelta(liveBefore, liveAfter), live);
      // Last, once every other lock of the write is held: the quota's per-user lock.
      await chargeStorage(em, owner, STORAGE_KIND, rev.stored_bytes, this.#storage);
      await this.#changed(em, owner, [id]);
      const at = new Date(r!.ts_ms).toISOString();
      return {
        ...toNote(current),
        ...next,
        version: r!.version,
        updated_at: at,
        deleted_at: spec.change === 'trash' ? at : null,
      };
    });
  }

  async #afterContent(em: EntityManager, owner: string, oldLexemes: string[], newWords: Set<string>): Promise<void> {
    await applyWordDelta(em, owner, wordDelta(wordsOf(oldLexemes), newWords));
  }

  async purge(p: Principal, id: string): Promise<void> {
    if (!v.isUuid(id)) throw notFound();
    const owner = p.user.id;
    await this.#em().transactional(async (em) => {
      const [cur] = await rows<NoteRow & { old_words: string[] }>(
        em,
        `select ${NOTE_COLUMNS}, ${VECTOR_WORDS_SQL('search_vector')} as old_words from notes where id = ? and owner_id = ? for update`,
        [id, owner],
      );
      if (!cur) throw notFound();
      const { old_words: oldWords, ...current } = cur;
      if (cur.deleted_ms === null) throw new Conflict('only a note in the trash can be purged; trash it first', toNote(current));
      const [freed] = await rows<{ bytes: number }>(
        em,
        `select coalesce(sum(stored_bytes), 0)::float8 as bytes from note_revisions where note_id = ? and owner_id = ?`,
        [id, owner],
      );
      await em.execute(`delete from notes where id = ? and owner_id = ?`, [id, owner]);
      await applyWordDelta(em, owner, wordDelta(wordsOf(oldWords), new Set()));
      await chargeStorage(em, owner, STORAGE_KIND, -(freed?.bytes ?? 0), this.#storage);
      await this.#changed(em, owner, [id]);
    });
  }

  /**
   * Purges every user's notes that went to the trash before `olderThan` (default: now minus the
   * retention). For the app's timer; not scoped to a principal. Works in small batches, skipping rows
   * another transaction holds. Returns how many notes were purged.
   */
  async purgeExpiredTrash(olderThan: Date = new Date(Date.now() - this.#retentionDays * 86_400_000)): Promise<number> {
    if (!(olderThan instanceof Date) || Number.isNaN(olderThan.getTime())) throw v.bad('/olderThan', 'must be a valid date');
    const batch = 100;
    let total = 0;
    for (;;) {
      const n = await this.#em().transactional(async (em) => {
        const found = await rows<{ id: string; owner_id: string; old_words: string[]; stored: number }>(
          em,
          `select id, owner_id, ${VECTOR_WORDS_SQL('search_vector')} as old_words,
                  (select coalesce(sum(r.stored_bytes), 0) from note_revisions r where r.note_id = notes.id)::float8 as stored
             from notes
            where deleted_at is not null and deleted_at < ?::timestamptz
            order by deleted_at limit ? for update skip locked`,
          [olderThan.toISOString(), batch],
        );
        if (found.length === 0) return 0;
        await em.execute(`delete from notes where id = any(array[?]::uuid[])`, [found.map((f) => f.id)]);
        const byOwner = new Map<string, { words: Map<string, number>; freed: number }>();
        for (const f of found) {
          const o = byOwner.get(f.owner_id) ?? { words: new Map<string, number>(), freed: 0 };
          wordDelta(wordsOf(f.old_words), new Set(), o.words);
          o.freed += f.stored;
          byOwner.set(f.owner_id, o);
        }
        const owners = [...byOwner.keys()].sort();
        for (const owner of owners) await applyWordDelta(em, owner, byOwner.get(owner)!.words);
        for (const owner of owners) await chargeStorage(em, owner, STORAGE_KIND, -byOwner.get(owner)!.freed, this.#storage);
        for (const owner of owners)
          await this.#changed(
            em,
            owner,
            found.filter((f) => f.owner_id === owner).map((f) => f.id),
          );
        return found.length;
      });
      total += n;
      if (n < batch) return total;
    }
  }

  // --- revisions ---------------------------------------------------------------------------------

  async revisions(p: Principal, id: string, opts: { limit?: number; cursor?: string } = {}): Promise<Page<RevisionSummary>> {
    const { limit, clampedFrom } = v.limit(opts.limit);
    const list = `revisions:${id}`;
    const cursor = v.decodeCursor(opts.cursor, 'v', list);
    if (!v.isUuid(id)) throw notFound();
    const em = this.#em();
    const params: unknown[] = [id, p.user.id];
    let where = 'note_id = ? and owner_id = ?';
    if (cursor) {
      where += ' and version < ?';
      params.push(Math.trunc(cursor[0] as number));
    }
    params.push(limit + 1);
    const found = await rows<RevisionRow>(
      em,
      `select ${REVISION_COLUMNS} from note_revisions where ${where} order by version desc limit ?`,
      params,
    );
    if (found.length === 0) {
      // A note always has its creation revision: no rows on a first page means not this caller's note.
      const known = cursor ? await rows(em, `select 1 from notes where id = ? and owner_id = ?`, [id, p.user.id]) : [];
      if (known.length === 0) throw notFound();
    }
    return page(found.slice(0, limit).map(toRevisionSummary), found.length > limit, limit, clampedFrom, (last) => [last.version], list);
  }

  async revision(p: Principal, id: string, version: number): Promise<Revision> {
    const wanted = v.version(version, 'version');
    if (!v.isUuid(id)) throw notFound();
    const em = this.#em();
    const [row] = await rows<RevisionRow>(
      em,
      `select ${REVISION_COLUMNS} from note_revisions where note_id = ? and owner_id = ? and version = ?`,
      [id, p.user.id, wanted],
    );
    const body = row ? await revisionBody(em, id, p.user.id, wanted) : null;
    if (!row || body === null) throw new NotFound(`no note ${id} with a version ${wanted}`);
    return toRevision({ ...row, body });
  }

  async diff(p: Principal, id: string, version: number): Promise<RevisionDiff> {
    const from = await this.revision(p, id, version);
    const to = await this.get(p, id);
    const render = (n: { title: string; tags: string[]; body: string }) =>
      `Title: ${n.title}\nTags: ${n.tags.join(', ')}\n\n${n.body}${n.body.endsWith('\n') || n.body === '' ? '' : '\n'}`;
    const { diff, coarse } = await this.#diffs.diff(render(from), render(to), `v${from.version}`, `v${to.version}`);
    return { from_version: from.version, to_version: to.version, diff, coarse };
  }

  // --- reports -----------------------------------------------------------------------------------

  async report(p: Principal, opts: ReportOptions): ReturnType<NotesService['report']> {
    return buildReport(
      {
        em: () => this.#em(),
        batchSize: this.#reportBatchSize,
        save: (content) => this.#insert(p.user.id, content, 'agent'),
        pool: this.#reportPool,
        slots: this.#reportSlots,
        baseUrl: this.#publicUrl,
      },
      p.user.id,
      opts,
    );
  }
}

function notFound(): NotFound {
  return new NotFound('no such note');
}

function headingArg(value: unknown): string {
  if (typeof value !== 'string' || value.replace(/^[\s#]+/, '').trim() === '')
    throw v.bad('heading', 'must be the text of a heading in the note');
  return value;
}

function page<T>(
  items: T[],
  more: boolean,
  limit: number,
  clampedFrom: number | undefined,
  key: (last: T) => Array<string | number>,
  list: string,
): Page<T> {
  const last = items[items.length - 1];
  const out: Page<T> = { items, next_cursor: more && last ? v.encodeCursor(key(last), list) : null, limit };
  if (clampedFrom !== undefined) out.limit_clamped_from = clampedFrom;
  return out;
}
