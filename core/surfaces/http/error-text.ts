// Typed outcomes as plain text: the wording the curl surface answers with and the MCP surface puts
// in its isError results, so an agent reads the same text on either. Status and headers come from
// the error table (core/contract/errors.ts); this adds only what each outcome says below its first line.
import { newErrorId } from '../../contract/observe.ts';
import type { Logger } from 'pino';
import { BadArguments, Conflict, FolioError, FunctionFailed, REASON } from '../../contract/errors.ts';

/** An outcome as the curl surface words it. `aborted`: the caller is gone, nothing to say. */
export interface ErrorAnswer {
  status: number;
  text: string;
  headers: Record<string, string>;
  aborted?: true;
}

/**
 * Any error -> status, text and headers. Unknown errors become 500 + an error id (logged).
 * `mcpTool`: the text is for an MCP client calling this tool, so how to call the function names
 * the tool and its inputSchema, not a curl route.
 */
export function errorAnswer(err: unknown, log: Logger, mcpTool?: string): ErrorAnswer {
  if (!(err instanceof FolioError)) {
    const errorId = newErrorId();
    log.error({ errorId, err }, 'unexpected error');
    return {
      status: 500,
      text: `500 Internal Server Error: something failed on the server. error id: ${errorId} (quote it when you report this)`,
      headers: {},
    };
  }
  const { status, headers } = err;
  // The client is gone; nobody reads this, but keep the log honest.
  if (err.code === 'aborted') return { status, text: '', headers, aborted: true };
  const lines = [`${status} ${REASON[status] ?? 'Error'}: ${err.message}`];
  // What each outcome adds below its first line: the bad arguments and how to call the function,
  // the current state a write collided with, where the failure is in the log.
  if (err instanceof BadArguments) {
    for (const p of err.problems) lines.push(`  - ${p.path}: ${p.message}`);
    const signature = mcpTool ? err.signature?.replace(/^[a-z0-9_]+\.[a-z0-9_]+\(/, `${mcpTool}(`) : err.signature;
    if (signature) lines.push('', `signature: ${signature}`);
    if (err.help) lines.push(mcpTool ? `help: the inputSchema of ${mcpTool} (tools/list)` : `help: GET ${err.help}`);
  } else if (err instanceof Conflict && err.current !== undefined) {
    lines.push('', 'current:', JSON.stringify(err.current, null, 2));
  } else if (err instanceof FunctionFailed) {
    lines[0] += `. error id: ${err.errorId} (quote it when you report this; the details are in the server log)`;
  }
  return { status, text: lines.join('\n'), headers };
}
