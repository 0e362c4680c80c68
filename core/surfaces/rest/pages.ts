// The REST API's public pages: the OpenAPI document, the swagger-ui explorer (assets shared with the
// curl docs, see pages/docs.ts), the redoc reference, and one page per problem code. Everything is
// served by Folio itself: no CDN, no telemetry; a CSP keeps the pages from talking to anyone else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { docsHtml } from '../pages/docs.ts';
import { esc, page } from '../pages/html.ts';
import { PROBLEM_CODES, type ProblemCode } from './problems.ts';

const REDOC_BUNDLE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('redoc/package.json')),
  'bundles',
  'redoc.standalone.js',
);
/** The one outside request redoc makes: its footer logo. An unloadable image instead; redoc then hides it. */
const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
let redocBundle: Buffer | undefined;
const redocJs = () => (redocBundle ??= Buffer.from(readFileSync(REDOC_BUNDLE, 'utf8').replaceAll(REDOC_LOGO, 'data:,'), 'utf8'));

/** The pages run inline scripts and styled-components' styles; they may fetch only from this server. */
const CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'";

function html(ctx: Context, body: string): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

export function redocHtml(title: string, specUrl: string, bundleUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>body{margin:0}</style></head>
<body><div id="redoc"></div>
<script src="${esc(bundleUrl)}"></script>
<script>Redoc.init(${JSON.stringify(specUrl)}, { hideDownloadButton: false, expandResponses: '200,201', jsonSampleExpandLevel: 2 }, document.getElementById('redoc'));</script>
</body></html>`;
}

export function mountRestPages(router: Router, openapi: Record<string, unknown>, base: (ctx: Context) => string): void {
  const body = JSON.stringify(openapi);
  router.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  });
  router.get('/docs', (ctx) => html(ctx, docsHtml('Folio REST API', '/api/v1/openapi.json')));
  router.get('/redoc', (ctx) =>
    html(ctx, redocHtml('Folio REST API reference', '/api/v1/openapi.json', '/api/v1/assets/redoc.standalone.js')),
  );
  router.get('/assets/redoc.standalone.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = redocJs();
  });
  router.get('/problems', (ctx) => html(ctx, problemsPage(base(ctx))));
  router.get('/problems/:code', (ctx, next) => {
    const code = ctx.params.code as ProblemCode;
    if (!Object.hasOwn(PROBLEM_CODES, code)) return next();
    html(ctx, problemsPage(base(ctx), code));
  });
}

function problemsPage(base: string, only?: ProblemCode): string {
  const codes = (Object.keys(PROBLEM_CODES) as ProblemCode[]).filter((c) => !only || c === only);
  const items = codes
    .map((c) => {
      const p = PROBLEM_CODES[c];
      return `<h2 id="${c}"><code>${c}</code> — ${p.status} ${esc(p.title)}</h2><p>${esc(p.about)}</p>`;
    })
    .join('\n');
  return page(
    only ? `Folio problem: ${only}` : 'Folio REST API problems',
    `<h1>${only ? `Problem <code>${only}</code>` : 'Problems'} of the Folio REST API</h1>
<p class="muted">Errors are RFC 9457 <code>application/problem+json</code>; branch on <code>code</code>. The type URL of each is ${esc(base)}/api/v1/problems/&lt;code&gt;.</p>
${items}
<p><a href="/api/v1/problems">All problem codes</a> · <a href="/api/v1/docs">API explorer</a> · <a href="/api/v1/redoc">Reference</a></p>`,
  );
}
