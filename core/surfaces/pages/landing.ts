// The page a browser gets at `/`: what this server is, its version, where to go next. A program
// (no text/html in Accept) keeps the plain-text answer. No script, no outside request: a strict CSP.
import type { Context } from 'koa';
import { wantsHtml } from './catalogue.ts';
import { esc, page } from './html.ts';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function landingHtml(version: string, base: string): string {
  const mcpConfig = JSON.stringify(
    { mcpServers: { folio: { type: 'http', url: `${base}/mcp`, headers: { Authorization: 'Bearer folio_api_...' } } } },
    null,
    2,
  );
  const body = `<h1>Folio</h1>
<p>Folio ${esc(version)}: a notes service for people and their agents. Notes, files, search and transcription,
reachable over a curl surface, an MCP server and a REST API, all answering from one registry of tools.</p>
<nav aria-label="Start here"><ul>
<li><a href="/api/v1/docs">REST API explorer</a> (<a href="/api/v1/openapi.json">OpenAPI document</a>, <a href="/api/v1/redoc">reference</a>)</li>
<li><a href="/curl/help">The curl catalogue</a> of public namespaces and their functions (<a href="/curl/docs">machine description</a>)</li>
<li><a href="/admin">The console for admins</a> (coming; until then, the <code>admin</code> REST group and <code>folio admin</code>)</li>
</ul></nav>
<h2>Call it with curl</h2>
<pre><code>curl -H "Authorization: Bearer $FOLIO_TOKEN" ${esc(base)}/curl</code></pre>
<h2>Connect an MCP client</h2>
<p>Give the client the URL <code>${esc(base)}/mcp</code> (Streamable HTTP). A client that speaks OAuth signs you in
through this server; any other takes a personal API token in its configuration:</p>
<pre><code>${esc(mcpConfig)}</code></pre>
<p class="muted">Programs asking <code>/</code> without <code>Accept: text/html</code> get plain text.</p>`;
  return page(`Folio ${version}`, body);
}

/** `/` for a browser; anything else passes to what answers a program. */
export function landingRoute(version: string, base: (ctx: Context) => string) {
  return async (ctx: Context, next: () => Promise<unknown>) => {
    // One URL, two answers by Accept: a shared cache must keep them apart.
    ctx.vary('Accept');
    if (!wantsHtml(ctx)) return next();
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = landingHtml(version, base(ctx));
  };
}
