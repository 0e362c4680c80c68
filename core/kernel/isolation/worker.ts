// The thread an isolated plugin runs in. It evaluates the plugin's bundle, sends Folio what it
// exported (as data, for Folio to validate), then answers Folio's messages: calls, visible() checks, aborts, pings. ctx is
// rebuilt here with the same shape a plugin gets in-process: ctx.services, ctx.progress and
// ctx.log send messages back to Folio; ctx.signal fires when Folio says the call is over.
import { callRef } from '../describe.ts';
import { MessagePort, parentPort } from 'node:worker_threads';
import { isBytes, type Caller, type Context, type PromptContext, type Services } from '../../sdk/index.ts';
import { evaluateBundle } from '../plugin-eval.ts';
import { shapeOf, type CallId, type FromWorker, type ToWorker, type WireResult } from './protocol.ts';
import { fromWire, toWire } from './wire-error.ts';

const port = parentPort!;
// Once loaded, this module talks to Folio over a port of its own, which the plugin's code cannot
// reach (it can reach parentPort, where Folio now takes nothing from it): the calls' ids, which bind
// a service request to its caller, stay here. postMessage is taken before the plugin's code runs,
// so replacing MessagePort.prototype.postMessage does not show the plugin what is sent.
// eslint-disable-next-line @typescript-eslint/unbound-method -- bound to each port at the call, as call() does
const post = Function.prototype.call.bind(MessagePort.prototype.postMessage) as (p: MessagePort, m: FromWorker) => void;
let channel: MessagePort | undefined;
const send = (m: FromWorker): void => (channel ? post(channel, m) : port.postMessage(m));

interface Running {
  controller: AbortController;
  services: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  seq: number;
}
const running = new Map<CallId, Running>();

/** The plugin as exported; Folio validated its shape before sending anything but pings. */
type Plugin = {
  visible?: (caller: Caller) => unknown;
  functions: Record<string, { handler: (args: Record<string, unknown>, ctx: Context) => unknown }>;
  prompts?: Record<string, { render: (args: Record<string, string>, ctx: PromptContext) => unknown }>;
};

function freezeCaller(c: Caller): Caller {
  return Object.freeze({
    notes: Object.freeze({ count: c.notes.count, tags: Object.freeze({ ...c.notes.tags }) }),
    user: Object.freeze({ ...c.user, roles: Object.freeze([...c.user.roles]) as string[] }),
    scopes: Object.freeze([...c.scopes]) as string[],
    tokenKind: c.tokenKind,
  });
}

/** ctx.services: any path (ctx.services.notes.get, ctx.services.pluginStatus) becomes one message to Folio. */
function servicesFor(id: CallId, run: Running): Services {
  const at = (path: string[]): unknown =>
    new Proxy(function () {}, {
      get: (_t, key) => (typeof key === 'string' && key !== 'then' ? at([...path, key]) : undefined),
      apply: (_t, _this, args: unknown[]) =>
        new Promise((resolve, reject) => {
          const seq = ++run.seq;
          run.services.set(seq, { resolve, reject });
          try {
            send({ type: 'service', id, seq, path, args });
          } catch (err) {
            run.services.delete(seq);
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        }),
    });
  return at([]) as Services;
}

function logFor(id: CallId): Context['log'] {
  const at =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (obj: object | string, msg?: string): void => {
      let data: unknown;
      try {
        data = structuredClone(obj);
      } catch {
        data = typeof obj === 'string' ? obj : Object.prototype.toString.call(obj);
      }
      send({ type: 'log', id, level, obj: data, msg });
    };
  return { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

function wireResult(v: unknown): WireResult {
  if (v === undefined) return { kind: 'undefined' };
  if (typeof v === 'string') return { kind: 'text', text: v };
  if (isBytes(v)) return { kind: 'bytes', data: v.data, contentType: v.contentType, filename: v.filename };
  // JSON here, as in-process encoding would: the same text, and a value that is not JSON fails as there.
  return { kind: 'json', json: JSON.stringify(v) };
}

async function call(plugin: Plugin, m: Extract<ToWorker, { type: 'call' }>): Promise<void> {
  const run: Running = { controller: new AbortController(), services: new Map(), seq: 0 };
  running.set(m.id, run);
  try {
    const fn = Object.hasOwn(plugin.functions, m.fn) ? plugin.functions[m.fn] : undefined;
    if (!fn) throw new Error(`no function '${m.fn}' in this version`);
    const ctx: Context = {
      caller: freezeCaller(m.caller),
      signal: run.controller.signal,
      log: logFor(m.id),
      services: servicesFor(m.id, run),
      progress: (progress, total, message) => {
        if (run.controller.signal.aborted || typeof progress !== 'number' || !Number.isFinite(progress)) return;
        send({
          type: 'progress',
          id: m.id,
          progress,
          ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
          ...(typeof message === 'string' ? { message } : {}),
        });
      },
      budget: m.budget,
      ref: (name, refArgs) => callRef(m.surface, name, refArgs),
    };
    const value = wireResult(await fn.handler(m.args, ctx));
    send({ type: 'result', id: m.id, ok: true, value });
  } catch (err) {
    send({ type: 'result', id: m.id, ok: false, error: toWire(err) });
  } finally {
    running.delete(m.id);
  }
}

async function visible(plugin: Plugin, m: Extract<ToWorker, { type: 'visible' }>): Promise<void> {
  try {
    const value: unknown = await plugin.visible!(freezeCaller(m.caller));
    // Anything but a boolean hides the namespace; it is sent as it is where it can be, for the log.
    let sent: unknown = value;
    try {
      structuredClone(value);
    } catch {
      sent = String(value);
    }
    send({ type: 'visible-result', id: m.id, ok: true, value: sent });
  } catch (err) {
    send({ type: 'visible-result', id: m.id, ok: false, error: toWire(err) });
  }
}

/** A prompt's render, here where the plugin lives; the text (or whatever it returned, for Folio to refuse) goes back. */
async function prompt(plugin: Plugin, m: Extract<ToWorker, { type: 'prompt' }>): Promise<void> {
  try {
    const def = plugin.prompts && Object.hasOwn(plugin.prompts, m.name) ? plugin.prompts[m.name] : undefined;
    if (!def) throw new Error(`no prompt '${m.name}' in this version`);
    const value: unknown = await def.render(
      { ...m.args },
      { caller: freezeCaller(m.caller), ref: (name, refArgs) => callRef(m.surface, name, refArgs) },
    );
    // Only text is a prompt; anything else is refused in Folio, named by its type as in-process.
    send({ type: 'prompt-result', id: m.id, ok: true, value: typeof value === 'string' ? { text: value } : { not: typeof value } });
  } catch (err) {
    send({ type: 'prompt-result', id: m.id, ok: false, error: toWire(err) });
  }
}

// A worker starts empty (a spare, made ahead of need) and loads the plugin its first message brings.
let plugin: Plugin | undefined;

function load(m: Extract<ToWorker, { type: 'load' }>): void {
  channel = m.port;
  channel.on('message', onMessage);
  try {
    const exported = evaluateBundle(m.bundle);
    plugin = exported as Plugin;
    send({ type: 'ready', shape: shapeOf(exported) });
  } catch (err) {
    // On parentPort: a message still queued on the private port may be lost when the thread exits.
    port.postMessage({ type: 'load-failed', error: toWire(err) } satisfies FromWorker);
    process.exit(0);
  }
}

/** A trial (of a plugin that will run in-process): evaluate it, say whether it loaded, keep nothing. */
function trial(m: Extract<ToWorker, { type: 'trial' }>): void {
  try {
    evaluateBundle(m.bundle);
    send({ type: 'trial-result', id: m.id, ok: true });
  } catch (err) {
    send({ type: 'trial-result', id: m.id, ok: false, error: toWire(err) });
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'load') return load(m);
  if (m.type === 'trial') return trial(m);
});

function onMessage(m: ToWorker): void {
  if (!plugin) return;
  switch (m.type) {
    case 'ping':
      send({ type: 'pong', seq: m.seq });
      break;
    case 'call':
      void call(plugin, m);
      break;
    case 'visible':
      void visible(plugin, m);
      break;
    case 'prompt':
      void prompt(plugin, m);
      break;
    case 'abort':
      running.get(m.id)?.controller.abort(new Error(m.reason));
      break;
    case 'service-result': {
      const run = running.get(m.id);
      const pending = run?.services.get(m.seq);
      if (!run || !pending) break;
      run.services.delete(m.seq);
      if (m.ok) pending.resolve(m.value);
      else pending.reject(fromWire(m.error));
      break;
    }
  }
}
