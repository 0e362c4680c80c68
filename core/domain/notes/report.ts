// Reports over the notes a query, tag set or date range selects, grouped by day, ISO week or tag.
// Streams: the notes are read in keyset batches (reportBatchSize, default 500) as the consumer pulls,
// each batch rendered into one chunk on a worker thread (report-pool.ts: never on the event loop);
// no query ever returns more than one batch, and no batch is kept once rendered. Each user may have
// a few reports rendering at once (ReportSlots); one more is refused with too_many_reports. Only the group heads (label + count) are read up front, from one aggregate query.
// Each note is shown with its own Markdown (at most REPORT_BODY_CHARS characters of it, so a batch
// stays bounded in memory); the summary at the top (notes per period, most used tags, open and
// done action items) comes from aggregate queries before the first note is read.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Content } from './derived.ts';
import { fuzzyQuery, dateRange, parseSearchText, selectionSql, type Selection } from './search.ts';
import { toTsquery } from './query.ts';
import type { RenderEvent, RenderSession, ReportRenderPool, ReportSlots } from './report-pool.ts';
import { REPORT_BODY_CHARS, type ReportGroupHead, type ReportNote, type ReportSummary } from './report-render.ts';
import { ms, rows } from './rows.ts';
import type { Note, ReportFormat, ReportGroup, ReportOptions } from './types.ts';
import * as v from './validate.ts';
import { BadArguments } from '../../contract/errors.ts';

export interface ReportDeps {
  em: () => EntityManager;
  batchSize: number;
  save: (content: Content) => Promise<Note>;
  /** Where the report is rendered (worker threads). */
  pool: ReportRenderPool;
  /** How many reports each user may have rendering at once. */
  slots: ReportSlots;
  /** Folio's public URL, for links back to each note ('' when unknown: the links are paths). */
  baseUrl: () => string;
}

export interface ReportResult {
  contentType: string;
  filename: string;
  stream: AsyncIterable<Uint8Array>;
  saved_note_id?: Promise<string>;
}

const GROUPS: readonly ReportGroup[] = ['day', 'week', 'tag'];
const FORMATS: Record<ReportFormat, { contentType: string; ext: string }> = {
  markdown: { contentType: 'text/markdown; charset=utf-8', ext: 'md' },
  html: { contentType: 'text/html; charset=utf-8', ext: 'html' },
  pdf: { contentType: 'application/pdf', ext: 'pdf' },
};
const UNTAGGED = '(untagged)';

/** Day and ISO-week groups, computed by the database in UTC (date_trunc('week') starts on Monday). */
const PERIOD: Record<'day' | 'week', { trunc: string; label: string; ms: number }> = {
  day: { trunc: 'day', label: 'YYYY-MM-DD', ms: 86_400_000 },
  week: { trunc: 'week', label: 'IYYY-"W"IW', ms: 7 * 86_400_000 },
};

interface Head extends ReportGroupHead {
  /** The tag of a tag group ('' for the untagged group). */
  key: string;
  /** The start (epoch ms, UTC) of a day or week group. */
  startMs: number;
}

interface NoteRow {
  id: string;
  title: string;
  tags: string[];
  body: string;
  truncated: boolean;
  updated_ms: number;
}

export async function buildReport(deps: ReportDeps, owner: string, opts: ReportOptions): Promise<ReportResult> {
  if (!opts || typeof opts !== 'object') throw v.bad('', 'report options are required');
  const group = opts.group_by;
  if (!GROUPS.includes(group)) throw v.bad('group_by', `must be one of ${GROUPS.join(', ')}`);
  if (!FORMATS[opts.format]) throw v.bad('format', `must be one of ${Object.keys(FORMATS).join(', ')}`);
  const format: ReportFormat = opts.format;
  if (opts.save_as_note !== undefined && typeof opts.save_as_note !== 'boolean') throw v.bad('save_as_note', 'must be a boolean');
  const tags = v.optionalTags(opts.tags, 'tags');
  const range = dateRange(opts.from, opts.to);
  const em = deps.em();

  let tsquery: string | undefined;
  if (opts.q !== undefined) {
    const parsed = parseSearchText(opts.q);
    tsquery = toTsquery(parsed);
    // Same typo tolerance as search: when the words find nothing, use close words.
    const probe = selectionSql(owner, { tsquery, tags, ...range });
    const any = await rows(em, `select 1 from notes n where ${probe.where} limit 1`, probe.params);
    if (any.length === 0) {
      const fuzzy = await fuzzyQuery(em, owner, parsed);
      if (fuzzy) tsquery = toTsquery(fuzzy);
    }
  }
  const sel = selectionSql(owner, { tsquery, tags, ...range });
  const [totals] = await rows<{ total: number; open_items: number; done_items: number; lo_ms: number | null; hi_ms: number | null }>(
    em,
    `select count(*)::int as total, coalesce(sum(cardinality(n.open_items)), 0)::int as open_items,
            coalesce(sum((select count(*) from regexp_matches(n.body, '^[ \t]*([-*+]|[0-9]+[.)])[ \t]+\\[[xX]\\]', 'gm'))), 0)::int as done_items,
            ${ms('min(n.updated_at)', 'lo_ms')}, ${ms('max(n.updated_at)', 'hi_ms')}
       from notes n where ${sel.where}`,
    sel.params,
  );
  const heads = await groupHeads(em, sel, group);
  const summary = await summaryOf(em, sel, totals);

  const describe = [
    opts.q !== undefined ? `matching "${opts.q}"` : null,
    tags?.length ? `tagged ${tags.map((t) => `#${t}`).join(' ')}` : null,
    range.from ? `from ${range.from.toISOString().slice(0, 10)}` : null,
    range.to ? `to ${range.to.toISOString().slice(0, 10)}` : null,
  ].filter(Boolean);
  const now = new Date().toISOString();
  const title = opts.title === undefined ? `Notes report by ${group}, ${now.slice(0, 10)}` : v.title(opts.title);
  const meta = {
    title,
    selection: `Notes ${describe.length ? describe.join(', ') : '(all)'}, grouped by ${group === 'week' ? 'ISO week' : group}`,
    generatedAt: now,
    total: totals?.total ?? 0,
    openItems: totals?.open_items ?? 0,
    summary,
    groups: heads.map((h) => ({ label: h.label, count: h.count })),
  };

  const saving = opts.save_as_note === true ? new SavedMarkdown() : null;
  let settle: { resolve: (id: string) => void; reject: (err: unknown) => void } | undefined;
  const saved = saving
    ? new Promise<string>((resolve, reject) => {
        settle = { resolve, reject };
      })
    : undefined;
  saved?.catch(() => {}); // a caller that never awaits it must not see an unhandled rejection

  // Rendering happens on a worker thread (report-pool.ts); the events of each fetched batch go there
  // in one step, and the step's bytes come back as one chunk.
  async function* stream(): AsyncGenerator<Uint8Array> {
    let completed = false;
    let release: (() => void) | undefined;
    let session: RenderSession | undefined;
    try {
      // The user's slot is taken when the report starts, so a report never read holds none.
      release = deps.slots.take(owner);
      session = deps.pool.open(format, { markdownCopy: saving !== null, creationDate: now, baseUrl: deps.baseUrl() });
      const render = session;
      const pending: RenderEvent[] = [];
      const step = () => render.step(pending.splice(0));
      pending.push({ kind: 'start', meta });
      let out = await step();
      if (out.bytes) yield out.bytes;
      saving?.collect(out.markdown);
      for (const head of heads) {
        pending.push({ kind: 'group', head });
        for await (const batch of noteBatches(deps, sel, group, head)) {
          for (const note of batch) pending.push({ kind: 'note', note });
          out = await step();
          if (out.bytes) yield out.bytes;
          saving?.collect(out.markdown);
        }
      }
      pending.push({ kind: 'end' });
      out = await step();
      if (out.bytes) yield out.bytes;
      saving?.collect(out.markdown);
      completed = true;
      if (saving && settle) {
        const note = await deps.save({ title, body: saving.body(), tags: ['report'] });
        settle.resolve(note.id);
      }
    } catch (err) {
      settle?.reject(err);
      throw err;
    } finally {
      session?.close();
      release?.();
      if (!completed) settle?.reject(new Error('the report stream was not read to the end; nothing was saved'));
    }
  }

  return {
    contentType: FORMATS[format].contentType,
    filename: `report-${group}-${now.slice(0, 10)}.${FORMATS[format].ext}`,
    stream: stream(),
    ...(saved ? { saved_note_id: saved } : {}),
  };
}

async function groupHeads(em: EntityManager, sel: Selection, group: ReportGroup): Promise<Head[]> {
  if (group === 'tag') {
    const found = await rows<{ key: string | null; count: number }>(
      em,
      `select t.tag as key, count(*)::int as count
         from notes n cross join lateral unnest(case when cardinality(n.tags) = 0 then array[null]::text[] else n.tags end) as t(tag)
        where ${sel.where}
        group by t.tag order by t.tag collate "C" nulls last`,
      sel.params,
    );
    return found.map((r) => ({ key: r.key ?? '', label: r.key === null ? UNTAGGED : `#${r.key}`, count: r.count, startMs: 0 }));
  }
  const period = PERIOD[group];
  const found = await rows<{ label: string; start_ms: number; count: number }>(
    em,
    `select to_char(g.start, '${period.label}') as label, (extract(epoch from g.start) * 1000)::float8 as start_ms, count(*)::int as count
       from (select date_trunc('${period.trunc}', n.updated_at at time zone 'UTC') as start from notes n where ${sel.where}) g
      group by g.start order by g.start`,
    sel.params,
  );
  return found.map((r) => ({ key: r.label, label: r.label, count: r.count, startMs: r.start_ms }));
}

const DAY_MS = 86_400_000;
const UNIT: Record<ReportSummary['unit'], { trunc: string; label: string; step: string }> = {
  day: { trunc: 'day', label: 'YYYY-MM-DD', step: '1 day' },
  week: { trunc: 'week', label: 'IYYY-"W"IW', step: '7 days' },
  month: { trunc: 'month', label: 'YYYY-MM', step: '1 month' },
};

/**
 * The picture of the period: notes per day (per ISO week over 45 days, per month over two years,
 * so the chart keeps at most ~100 bars, empty periods included), the eight most used tags, and the
 * action items open and done.
 */
async function summaryOf(
  em: EntityManager,
  sel: Selection,
  totals: { open_items: number; done_items: number; lo_ms: number | null; hi_ms: number | null } | undefined,
): Promise<ReportSummary> {
  const open = totals?.open_items ?? 0;
  const done = totals?.done_items ?? 0;
  if (!totals || totals.lo_ms === null || totals.hi_ms === null) return { unit: 'day', periods: [], tags: [], open, done };
  const span = totals.hi_ms - totals.lo_ms;
  const unit: ReportSummary['unit'] = span <= 45 * DAY_MS ? 'day' : span <= 730 * DAY_MS ? 'week' : 'month';
  const u = UNIT[unit];
  const periods = await rows<{ label: string; count: number }>(
    em,
    `with c as (select date_trunc('${u.trunc}', n.updated_at at time zone 'UTC') as p, count(*)::int as n
                  from notes n where ${sel.where} group by 1),
          b as (select min(p) as lo, max(p) as hi from c)
     select to_char(g, '${u.label}') as label, coalesce(c.n, 0)::int as count
       from b cross join generate_series(b.lo, b.hi, interval '${u.step}') g left join c on c.p = g
      order by g`,
    sel.params,
  );
  const tags = await rows<{ tag: string; count: number }>(
    em,
    `select t.tag, count(*)::int as count from notes n cross join lateral unnest(n.tags) as t(tag)
      where ${sel.where} group by t.tag order by count(*) desc, t.tag collate "C" limit 8`,
    sel.params,
  );
  return { unit, periods, tags, open, done };
}

/**
 * The notes of one group, oldest first, one keyset batch per query. Day and week groups are a time
 * range of the same ordered walk; a tag group is the notes carrying that tag.
 */
async function* noteBatches(deps: ReportDeps, sel: Selection, group: ReportGroup, head: Head): AsyncGenerator<ReportNote[]> {
  let after: { ms: number; id: string } | undefined;
  for (;;) {
    const params: unknown[] = [...sel.params];
    let where = sel.where;
    if (group === 'tag') {
      if (head.key === '') where += ` and cardinality(n.tags) = 0`;
      else {
        where += ` and n.tags @> array[?]::text[]`;
        params.push([head.key]);
      }
    } else {
      // A time range, so the walk uses the (owner_id, updated_at, id) index.
      where += ` and n.updated_at >= ?::timestamptz and n.updated_at < ?::timestamptz`;
      params.push(new Date(head.startMs).toISOString(), new Date(head.startMs + PERIOD[group].ms).toISOString());
    }
    if (after) {
      where += ` and (n.updated_at, n.id) > (?::timestamptz, ?::uuid)`;
      params.push(new Date(after.ms).toISOString(), after.id);
    }
    params.push(deps.batchSize);
    const found = await rows<NoteRow>(
      deps.em(),
      `select n.id, n.title, n.tags, left(n.body, ${REPORT_BODY_CHARS}) as body, length(n.body) > ${REPORT_BODY_CHARS} as truncated,
              ${ms('n.updated_at', 'updated_ms')}
         from notes n where ${where} order by n.updated_at, n.id limit ?`,
      params,
    );
    if (found.length === 0) return;
    yield found.map((r) => ({
      id: r.id,
      title: r.title,
      tags: r.tags,
      updated_at: new Date(r.updated_ms).toISOString(),
      body: r.body,
      truncated: r.truncated,
    }));
    if (found.length < deps.batchSize) return;
    const last = found[found.length - 1]!;
    after = { ms: last.updated_ms, id: last.id };
  }
}

/**
 * The Markdown copy of a report kept for save_as_note. A note holds at most 1 MiB: a report that
 * grows past it is refused as soon as it does (never saved cut short), while the caller can still
 * be told why: on the curl surface and MCP the answer is that error; the REST API holds the first
 * MiB of a saving report back, so there it is a problem answer too when the report's own format is
 * no larger than its Markdown.
 */
class SavedMarkdown {
  #parts: string[] = [];
  #bytes = 0;
  static readonly LIMIT = v.BODY_MAX_BYTES - 256;

  /** Adds the Markdown of one step (rendered on the worker beside the report's own format). */
  collect(text: string): void {
    if (!text) return;
    this.#bytes += Buffer.byteLength(text);
    if (this.#bytes > SavedMarkdown.LIMIT)
      throw new BadArguments(
        `this report is over ${SavedMarkdown.LIMIT} bytes as Markdown, more than a note can hold (1 MiB), so it cannot be saved as a note; nothing was saved. Narrow it (from, to, tags or q), or generate it without save_as_note.`,
        [{ path: 'save_as_note', message: 'the report is too large to save as a note; narrow it or drop save_as_note' }],
      );
    this.#parts.push(text);
  }

  body(): string {
    return this.#parts.join('');
  }
}
