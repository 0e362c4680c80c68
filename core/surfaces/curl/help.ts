// Plain-text renderings of the registry for the curl surface, written for a reader that is a
// language model: short, ids first, and always the next route to try.
import type { Principal } from '../../domain/identity/types.ts';
import type { FunctionEntry } from '../../kernel/manifest.ts';
import type { NamespaceEntry } from '../../kernel/registry.ts';
import { describeFunction, type Describable } from '../../kernel/describe.ts';

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export function curlCommand(base: string, fn: { namespace: string; name: string }, args: Record<string, unknown>): string {
  const body = Object.keys(args).length ? ` -d ${shellQuote(JSON.stringify(args))}` : '';
  return `curl -s -X POST ${base}/curl/call/${fn.namespace}/${fn.name} -H "Authorization: Bearer $FOLIO_TOKEN" -H 'Content-Type: application/json'${body}`;
}

export function startText(base: string, version: string): string {
  return `Folio ${version}: your notes, files and tools over plain HTTP. Every function is one POST.

GET  ${base}/curl/whoami                      who you are, what you can reach, which server answers
GET  ${base}/curl/help                        namespaces you can use
GET  ${base}/curl/help/{namespace}            functions in a namespace
GET  ${base}/curl/help/{namespace}/{function} signature and documentation (?examples=true for commands)
GET  ${base}/curl/skill                       guides, by namespace
GET  ${base}/curl/skill/{namespace}/{name}    one guide (start with how_it_works where there is one)
POST ${base}/curl/call/{namespace}/{function} call it; the JSON body is the keyword arguments
GET  ${base}/curl/openapi.json                machine description (no token needed)

Send your token as: Authorization: Bearer <token>
Shapes change without notice: read a function's help before you call it.
`;
}

export function whoamiText(principal: Principal, namespaces: NamespaceEntry[], version: string, tokenExpiresAt: Date | null): string {
  const u = principal.user;
  return [
    `user: ${u.email}${u.name ? ` (${u.name})` : ''}`,
    `id: ${u.id}`,
    `roles: ${u.roles.join(', ') || '(none)'}`,
    `token: ${principal.tokenKind}${tokenExpiresAt ? `, expires ${tokenExpiresAt.toISOString()}` : ''}`,
    `scopes: ${principal.scopes.join(' ') || '(none)'}`,
    `namespaces: ${namespaces.map((n) => n.name).join(', ') || '(none)'}`,
    `server: folio ${version}`,
  ].join('\n');
}

export function namespacesText(namespaces: NamespaceEntry[], pluginErrors: Array<{ dir: string; error: string }>): string {
  const withFns = namespaces.filter((n) => n.functions.size > 0);
  const width = Math.max(0, ...withFns.map((n) => n.name.length));
  const lines = [
    'NAMESPACES',
    ...withFns.map(
      (n) => `  ${n.name.padEnd(width)}  ${n.description}  (${n.functions.size} ${n.functions.size === 1 ? 'function' : 'functions'})`,
    ),
  ];
  if (withFns.length === 0) lines.push('  (none)');
  lines.push('', 'Next: GET /curl/help/{namespace} for its functions.');
  if (pluginErrors.length > 0) {
    lines.push('', 'PLUGIN ERRORS (shown to admins; the last good version of each keeps serving)');
    for (const e of pluginErrors) lines.push(`  ${e.dir}: ${e.error}`);
  }
  return lines.join('\n');
}

/** What a function needs, in words: "role admin, scope notes:write". */
function requirementsText(fn: FunctionEntry): string {
  return [...(fn.requires.roles ?? []).map((r) => `role ${r}`), ...(fn.requires.scopes ?? []).map((s) => `scope ${s}`)].join(', ');
}

/** `callable`: may this caller call it? Those they may not are listed with what they lack (MCP leaves them out). */
export function namespaceText(ns: NamespaceEntry, callable: (fn: FunctionEntry) => boolean = () => true): string {
  const lines = [`${ns.name}: ${ns.description}`, '', 'FUNCTIONS'];
  for (const fn of [...ns.functions.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const effect = fn.annotations.readOnlyHint ? ' [read-only]' : fn.annotations.destructiveHint ? ' [destructive]' : '';
    lines.push(`  ${fn.signature}${effect}`, `      ${firstSentence(fn.description)}`);
    if (!callable(fn)) lines.push(`      Not callable by you (403): needs ${requirementsText(fn)}.`);
  }
  if (ns.functions.size === 0) lines.push('  (none)');
  lines.push('', `Next: GET /curl/help/${ns.name}/{function} for one function's documentation.`);
  if (ns.skills.size > 0) lines.push(`Guides: GET /curl/skill/${ns.name}`);
  return lines.join('\n');
}

export function functionText(fn: FunctionEntry, ceiling: number, base: string, withExamples: boolean, callable = true): string {
  const d: Describable = { ...fn, ceiling };
  return (
    describeFunction(d, {
      budgetHint: 'add "max_bytes_llm": N to the body',
      ...(withExamples ? { example: (f: Describable, args: Record<string, unknown>) => curlCommand(base, f, args) } : {}),
    }) +
    `\nCALL\n  POST ${base}/curl/call/${fn.namespace}/${fn.name} with the arguments as a JSON object body.` +
    (callable ? '' : `\n  Not callable by you: it needs ${requirementsText(fn)}, and a call answers 403.`) +
    (withExamples || fn.examples.length === 0 ? '' : `\n  Runnable examples: GET /curl/help/${fn.namespace}/${fn.name}?examples=true`)
  );
}

export function skillNamespacesText(namespaces: NamespaceEntry[]): string {
  const withSkills = namespaces.filter((n) => n.skills.size > 0);
  const lines = ['SKILL NAMESPACES', ...withSkills.map((n) => `  ${n.name}  (${[...n.skills.keys()].join(', ')})`)];
  if (withSkills.length === 0) lines.push('  (none)');
  lines.push('', 'Next: GET /curl/skill/{namespace} to see what each guide is for.');
  return lines.join('\n');
}

export function skillsText(ns: NamespaceEntry): string {
  const lines = [`${ns.name}: guides`, ''];
  for (const s of [...ns.skills.values()].sort((a, b) => a.name.localeCompare(b.name))) lines.push(`  ${s.name}: ${s.description}`);
  if (ns.skills.size === 0) lines.push('  (none)');
  lines.push('', `Next: GET /curl/skill/${ns.name}/{name} to read one.`);
  return lines.join('\n');
}

function firstSentence(s: string): string {
  const m = /^(.+?[.!?])(\s|$)/s.exec(s.trim());
  return (m?.[1] ?? s.trim()).replace(/\s+/g, ' ');
}
