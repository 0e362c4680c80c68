// The public HTML catalogue: namespaces marked `catalogue: 'public'`, their functions and
// skills, for a person with a browser. No token, so nothing per-user and nothing unlisted.
import type { Context } from 'koa';
import type { Snapshot, NamespaceEntry } from '../../kernel/registry.ts';
import { esc, page } from './html.ts';

// A browser asks for HTML by name; curl's Accept of any type and programs get text.
export function wantsHtml(ctx: Context): boolean {
  return /\btext\/html\b/i.test(ctx.get('accept')) && ctx.accepts('text/plain', 'text/html') === 'text/html';
}

function section(ns: NamespaceEntry): string {
  const fns = [...ns.functions.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => `<h3 id="${esc(ns.name)}.${esc(f.name)}"><code>${esc(f.signature)}</code></h3><p>${esc(f.description)}</p>`)
    .join('\n');
  const skills = [...ns.skills.values()].map((s) => `<li><code>${esc(s.name)}</code>: ${esc(s.description)}</li>`).join('\n');
  return `<h2 id="${esc(ns.name)}">${esc(ns.name)}</h2><p>${esc(ns.description)}</p>${fns}${skills ? `<h3>Skills</h3><ul>${skills}</ul>` : ''}`;
}

export function catalogueHtml(snapshot: Snapshot, path: string, version: string): string {
  const pub = [...snapshot.namespaces.values()].filter((n) => n.catalogue === 'public').sort((a, b) => a.name.localeCompare(b.name));
  // /curl/help/{ns}[/{fn}] and /curl/skill/{ns}[/{name}] narrow the page to one namespace.
  const wanted = /^\/curl\/(?:help|skill)\/([^/]+)/.exec(path)?.[1];
  const shown = wanted ? pub.filter((n) => n.name === wanted) : pub;
  const nav = pub.map((n) => `<a href="/curl/help/${esc(n.name)}">${esc(n.name)}</a>`).join('');
  const body = `<h1>Folio catalogue</h1>
<p class="muted">Folio ${esc(version)}. Public namespaces and their functions. Signed-in callers see their own
list, which may hold more, with <code>curl -H "Authorization: Bearer $FOLIO_TOKEN" http://HOST/curl/help</code>.
The machine description is at <a href="/curl/docs">/curl/docs</a>.</p>
<nav><a href="/curl/help">all</a>${nav}</nav>
${shown.length ? shown.map(section).join('\n') : '<p>No public namespace by that name.</p>'}`;
  return page('Folio catalogue', body);
}
