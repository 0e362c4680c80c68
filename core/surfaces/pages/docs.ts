// A page that fetches an OpenAPI description in the browser and renders it. Its script and
// style are served by Folio itself from the swagger-ui-dist package: no CDN, works offline.
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import { esc } from './html.ts';

const SWAGGER_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

export const ASSET_PREFIX = '/assets/swagger-ui';

export function docsHtml(title: string, specUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><link rel="stylesheet" href="${ASSET_PREFIX}/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="${ASSET_PREFIX}/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#docs', deepLinking: true });</script>
</body></html>`;
}

/** Serves the few files the docs page needs, by name from a fixed list (no path from the URL). */
export function mountDocAssets(router: Router): void {
  router.get(`${ASSET_PREFIX}/:file`, (ctx) => {
    const type = ASSETS[ctx.params.file ?? ''];
    if (!type) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = '404 Not Found\n';
      return;
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(path.join(SWAGGER_DIR, ctx.params.file!));
  });
}
