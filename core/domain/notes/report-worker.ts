// Worker thread of the report render pool (report-pool.ts): runs the renderers of report-render.ts
// for the reports assigned to it, one step (a fetched batch of events) at a time per report.
import { parentPort } from 'node:worker_threads';
import { MarkdownRenderer, type Renderer } from './report-render.ts';
import { rendererFor } from './report-renderers.ts';
import type { RenderEvent, RenderReply, RenderRequest } from './report-pool.ts';

if (!parentPort) throw new Error('report-worker.ts runs as a worker thread');
const port = parentPort;

const reports = new Map<number, { renderer: Renderer; copy: MarkdownRenderer | null }>();

function apply(r: Renderer, e: RenderEvent): void {
  if (e.kind === 'start') r.start(e.meta);
  else if (e.kind === 'group') r.group(e.head);
  else if (e.kind === 'note') r.note(e.note);
  else r.end();
}

/** One fresh buffer (never a slice of Node's shared pool), so it can be transferred, not copied. */
function joined(chunks: Uint8Array[]): Uint8Array | null {
  if (chunks.length === 0) return null;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

async function handle(msg: RenderRequest): Promise<void> {
  if (msg.type === 'open') {
    reports.set(msg.id, {
      renderer: rendererFor(msg.format, { creationDate: new Date(msg.creationDate), ...(msg.baseUrl ? { baseUrl: msg.baseUrl } : {}) }),
      copy: msg.markdownCopy ? new MarkdownRenderer(msg.baseUrl ? { baseUrl: msg.baseUrl } : {}) : null,
    });
    return;
  }
  if (msg.type === 'drop') {
    reports.delete(msg.id);
    return;
  }
  const report = reports.get(msg.id);
  if (!report) return void port.postMessage({ type: 'error', id: msg.id, message: 'no such report on this worker' } satisfies RenderReply);
  try {
    for (const e of msg.events) {
      apply(report.renderer, e);
      if (report.copy) apply(report.copy, e);
    }
    const bytes = joined(await report.renderer.take());
    const reply: RenderReply = { type: 'step', id: msg.id, bytes, markdown: report.copy?.takeText() ?? '' };
    port.postMessage(reply, bytes ? [bytes.buffer as ArrayBuffer] : []);
  } catch (err) {
    reports.delete(msg.id);
    port.postMessage({ type: 'error', id: msg.id, message: (err as Error).message } satisfies RenderReply);
  }
}

port.on('message', (msg: RenderRequest) => void handle(msg));
