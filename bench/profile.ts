// Reads a V8 CPU profile (.cpuprofile, from node:inspector or --cpu-prof) and says where the time
// went: self time by package / area, and inclusive time of Folio's own functions.
// Also usable alone: npx node bench/profile.ts some.cpuprofile
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Busy = not idle. */
  busyPct: number;
  /** Time by owner, grouped (database, logging, koa, ...). */
  families: Share[];
  /** Time by owner: npm package, Folio file, or Node area when no package is on the stack. */
  packages: Share[];
  /** Inclusive time of functions in Folio's own files (core/, plugins/). */
  folioFunctions: Share[];
  /** Self time, top functions anywhere. */
  topSelf: Share[];
}

const ROOT = path.resolve(import.meta.dirname, '..');

/** Where a frame's code lives: an npm package, a Folio file, a Node internal, or V8 itself. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(program)') return '(program: V8/native)';
    return '(builtins: JSON, RegExp, ...)';
  }
  if (url.startsWith('wasm://')) return '@electric-sql/pglite';
  let file = url;
  if (url.startsWith('file://')) {
    try {
      file = fileURLToPath(url);
    } catch {
      /* keep */
    }
  }
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (file.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(file);
    const mod = (m?.[1] ?? file).replace(/\.js$/, '');
    if (/http|llhttp/.test(mod)) return 'node:http';
    if (/^(net|stream|streams|stream_base_commons|tcp_wrap)/.test(mod)) return 'node:net/streams';
    if (/crypto/.test(mod)) return 'node:crypto';
    if (/timers|process|async_hooks|task_queues/.test(mod)) return 'node:timers/async';
    if (/events|event_target|abort_controller/.test(mod)) return 'node:events/abort';
    return `node:${mod}`;
  }
  if (file.startsWith(ROOT + '/')) {
    const rel = path.relative(ROOT, file);
    return rel.startsWith('core/') || rel.startsWith('plugins/') ? `folio:${rel}` : rel;
  }
  return file;
}

const FAMILIES: Array<[string, RegExp]> = [
  ['idle', /^\(idle\)$/],
  ['gc', /^\(gc\)$/],
  ['database: PGlite (WASM Postgres + socket server)', /^@electric-sql\//],
  ['database: pg driver', /^(pg|pg-[a-z-]+|pgpass|postgres-[a-z-]+|buffer-writer|packet-reader)$/],
  ['database: MikroORM / query builder', /^(@mikro-orm\/.*|kysely|knex|dataloader|reflect-metadata)$/],
  [
    'logging: pino, pino-http',
    /^(pino.*|@pinojs\/.*|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|safe-stable-stringify|on-exit-leak-free|atomic-sleep|real-require|fast-safe-stringify|process-warning)$/,
  ],
  [
    'koa + router + body',
    /^(koa.*|@koa\/.*|path-to-regexp|http-errors|statuses|accepts|negotiator|content-type|content-disposition|type-is|media-typer|mime-types|mime-db|cookies|keygrip|delegates|depd|destroy|encodeurl|escape-html|fresh|on-finished|ee-first|only|vary|http-assert|raw-body|bytes|iconv-lite|unpipe|debug|ms|toidentifier|setprototypeof|inherits|safer-buffer|co-body|qs)$/,
  ],
  ['ajv (argument validation)', /^ajv.*$/],
  ['folio core', /^folio:/],
  ['node: http', /^node:http$/],
  ['node: net/streams', /^node:net\/streams$/],
  ['node: crypto', /^node:crypto$/],
  ['node: other internals', /^node:/],
  ['V8 builtins / program (no JS caller)', /^\((builtins|program)/],
];

function familyOf(area: string): string {
  for (const [name, re] of FAMILIES) if (re.test(area)) return name;
  return 'other';
}

function shares(map: Map<string, number>, totalUs: number, top = Infinity): Share[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: Math.round(us / 1000), pct: Number(((us / totalUs) * 100).toFixed(1)) }));
}

export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfUs = new Map<number, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0; // time until the next sample is spent in this one
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt);
    totalUs += dt;
  }

  const byArea = new Map<string, number>();
  const byFamily = new Map<string, number>();
  const byFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let idleUs = 0;
  const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${areaOf(f).replace(/^folio:/, '')}:${f.lineNumber + 1}`;
  // The owner of a sample: the nearest frame on its stack that is npm or Folio code. Node
  // internals and native calls (a socket write, an fstat, JSON.parse) count for whoever called
  // them; only stacks with no such frame (the HTTP parser, timers) stay with Node.
  const isCode = (a: string) => !a.startsWith('(') && !a.startsWith('node:');
  const areaFor = (id: number): string => {
    const own = areaOf(byId.get(id)!.callFrame);
    if (isCode(own) || own === '(idle)' || own === '(gc)') return own;
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const a = areaOf(byId.get(cur)!.callFrame);
      if (isCode(a)) return a;
    }
    if (own.startsWith('(builtins')) {
      for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
        const a = areaOf(byId.get(cur)!.callFrame);
        if (a.startsWith('node:')) return a;
      }
    }
    return own;
  };
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const raw = areaOf(node.callFrame);
    const area = areaFor(id);
    if (raw === '(idle)') idleUs += us;
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const fam = familyOf(area);
    byFamily.set(fam, (byFamily.get(fam) ?? 0) + us);
    if (area !== '(idle)' && area !== '(program: V8/native)') byFn.set(label(node.callFrame), (byFn.get(label(node.callFrame)) ?? 0) + us);
    // Inclusive: every distinct Folio frame on this sample's stack gets the time once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!areaOf(f).startsWith('folio:')) continue;
      const key = label(f);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  return {
    totalMs: Math.round(totalUs / 1000),
    busyPct: Number((((totalUs - idleUs) / totalUs) * 100).toFixed(1)),
    families: shares(byFamily, totalUs),
    packages: shares(byArea, totalUs, 20),
    folioFunctions: shares(inclusive, totalUs, 15),
    topSelf: shares(byFn, totalUs, 20),
  };
}

export function formatProfile(s: ProfileSummary): string {
  const table = (title: string, rows: Share[]) =>
    [`  ${title}`, ...rows.map((r) => `    ${r.pct.toFixed(1).padStart(5)}%  ${String(r.ms).padStart(6)} ms  ${r.name}`)].join('\n');
  return [
    `  sampled ${s.totalMs} ms, busy ${s.busyPct}%`,
    table('time by owner (Node internals and native calls count for the npm package or Folio file that called them):', s.families),
    table('the same by package/file (top 20):', s.packages),
    table('inclusive time of Folio functions (sync parts and resumed async parts):', s.folioFunctions),
    table('self time, top functions:', s.topSelf),
  ].join('\n');
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: npx node bench/profile.ts file.cpuprofile\n');
    process.exit(2);
  }
  console.log(formatProfile(summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)));
}
