// A report as an HTTP answer: its content type, a file name, and the body streamed as the service
// writes it. When the report is also saved as a note, the note's id should go in a header, but the
// service may only know it once the report is written: the first MiB is held back until the id is
// known; past that, the id goes in an HTTP trailer of the same name instead.
import type { NotesService } from '../types.ts';
import type { Reply } from '../../../contract/rest.ts';

export const SAVED_HEADER = 'Folio-Saved-Note-Id';
const HOLD_BYTES = 1 << 20;

type Report = Awaited<ReturnType<NotesService['report']>>;

function disposition(filename: string): string {
  const safe = filename.replace(/[^\w.-]+/g, '_').slice(0, 120) || 'report';
  return `inline; filename="${safe}"`;
}

export async function streamReport(report: Report): Promise<Reply> {
  const headers: Record<string, string> = { 'Content-Type': report.contentType, 'Content-Disposition': disposition(report.filename) };
  const it = report.stream[Symbol.asyncIterator]();
  if (!report.saved_note_id) return { status: 200, headers, stream: { [Symbol.asyncIterator]: () => it } };

  let id: string | undefined;
  let failed: { err: unknown } | undefined;
  const settled = report.saved_note_id.then(
    (v) => {
      id = v;
    },
    (err) => {
      failed = { err };
    },
  );
  const held: Uint8Array[] = [];
  let size = 0;
  let done = false;
  let pending: Promise<IteratorResult<Uint8Array>> | undefined;
  while (id === undefined && !failed && !done && size < HOLD_BYTES) {
    pending ??= it.next();
    const next = await Promise.race([pending.then((r) => ({ r })), settled.then(() => undefined)]);
    if (!next) break;
    pending = undefined;
    if (next.r.done) done = true;
    else {
      held.push(next.r.value);
      size += next.r.value.byteLength;
    }
  }
  if (done) await settled;
  if (failed) throw failed.err;

  let trailers: Reply['trailers'];
  if (id !== undefined) headers[SAVED_HEADER] = id;
  else {
    headers['Trailer'] = SAVED_HEADER;
    trailers = async () => {
      await settled;
      if (failed) throw failed.err;
      return { [SAVED_HEADER]: id! };
    };
  }
  const rest = pending;
  async function* body(): AsyncGenerator<Uint8Array> {
    let finished = done;
    try {
      yield* held;
      if (done) return;
      if (rest) {
        const r = await rest;
        if (r.done) return void (finished = true);
        yield r.value;
      }
      for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
      finished = true;
    } finally {
      // The client went away mid-report: let the service stop writing it.
      if (!finished) await it.return?.();
    }
  }
  return { status: 200, headers, stream: body(), ...(trailers ? { trailers } : {}) };
}
