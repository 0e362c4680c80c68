// What the extraction child process runs (ChildRunner, core/domain/child-runner.ts): one file's bytes
// and type in, its text out. A document that cannot be read is an answer, not an error, so the
// parent can tell it from a crash.
import { extractText, UnreadableDocument, type ExtractedText, type ExtractOptions } from './extract.ts';

export interface ExtractRequest {
  bytes: Uint8Array;
  contentType: string;
  opts: ExtractOptions;
}

export type ExtractReply = { text: ExtractedText | null } | { unreadable: string };

export default async function extractInChild(req: ExtractRequest): Promise<ExtractReply> {
  try {
    return { text: await extractText(req.bytes, req.contentType, req.opts) };
  } catch (err) {
    if (err instanceof UnreadableDocument) return { unreadable: err.message };
    throw err;
  }
}
