// Turns what a plugin exports into a registry entry, or says precisely why it cannot.
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Caller, FunctionAnnotations, FunctionDefinition, PromptArgument, PromptDefinition } from '../sdk/index.ts';

type JsonSchema = Record<string, any>;
import { signature } from './describe.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const NAMESPACE_RE = /^[a-z](?:[a-z0-9]|_(?!_)){0,31}$/;
/** Short enough that `{namespace}__{function}` stays within 64 characters for MCP clients. */
export const FUNCTION_RE = /^[a-z](?:[a-z0-9]|_(?!_)){0,29}$/;
export const SKILL_RE = /^[a-z0-9](?:[a-z0-9]|[-_](?![-_])){0,63}$/;

const PLUGIN_KEYS = new Set(['namespace', 'description', 'version', 'catalogue', 'visible', 'functions', 'prompts']);
const PROMPT_KEYS = new Set(['title', 'description', 'arguments', 'render']);
const PROMPT_ARG_RE = /^[a-z][a-z0-9_]{0,31}$/;
const FUNCTION_KEYS = new Set(['title', 'annotations', 'description', 'args', 'returns', 'examples', 'requires', 'maxBytes', 'handler']);
/** Argument names the server supplies or takes for itself. */
export const RESERVED_ARGS = new Set(['user', 'caller', 'max_bytes_llm']);

const ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface FunctionEntry {
  namespace: string;
  name: string;
  title: string | undefined;
  annotations: FunctionAnnotations;
  description: string;
  args: JsonSchema;
  returns: JsonSchema | undefined;
  examples: Array<{ args: Record<string, unknown>; description?: string }>;
  requires: { roles?: string[]; scopes?: string[] };
  maxBytes: number | undefined;
  signature: string;
  validate: ValidateFunction;
  handler: FunctionDefinition['handler'];
}

export interface PromptEntry {
  namespace: string;
  name: string;
  title: string | undefined;
  description: string;
  arguments: PromptArgument[];
  render: PromptDefinition['render'];
}

export interface PluginEntry {
  namespace: string;
  description: string;
  version: string;
  catalogue: 'public' | 'unlisted';
  visible: ((caller: Caller) => boolean | Promise<boolean>) | undefined;
  functions: Map<string, FunctionEntry>;
  prompts: Map<string, PromptEntry>;
}

export class ManifestError extends Error {}

function fail(msg: string): never {
  throw new ManifestError(msg);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown, where: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) fail(`${where} must be an array of non-empty strings`);
  return v as string[];
}

/** A JSON copy of a schema (TypeBox values are plain JSON Schema), so a plugin cannot mutate it later. */
function schemaCopy(v: unknown, where: string): JsonSchema {
  if (!isPlainObject(v)) fail(`${where} must be a JSON Schema object`);
  try {
    return JSON.parse(JSON.stringify(v)) as JsonSchema;
  } catch (err) {
    fail(`${where} is not JSON-serialisable: ${(err as Error).message}`);
  }
}

const AJV_OPTIONS = {
  allErrors: true,
  useDefaults: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
} as const;

/**
 * Draft-07 by default (what TypeBox emits); a schema that declares `$schema` 2020-12 (MCP's
 * default dialect) gets a 2020-12 validator. Each load makes its own, dropped with its version.
 */
function validators(): { for(schema: JsonSchema): Ajv } {
  let draft7: Ajv | undefined;
  let draft2020: Ajv | undefined;
  return {
    for(schema) {
      if (typeof schema.$schema === 'string' && schema.$schema.includes('2020-12'))
        return (draft2020 ??= addFormats(new Ajv2020(AJV_OPTIONS)));
      return (draft7 ??= addFormats(new Ajv(AJV_OPTIONS)));
    },
  };
}

/**
 * Validates a plugin's default export. `fallbackVersion` is used when neither the plugin nor its
 * package.json names one. Each load gets its own Ajv, so compiled validators are dropped with the
 * version they belong to.
 */
export function buildPlugin(exported: unknown, fallbackVersion: string): PluginEntry {
  if (!isPlainObject(exported)) fail('the plugin must default-export an object (see docs/plugins.md)');
  const p = exported;
  for (const key of Object.keys(p)) if (!PLUGIN_KEYS.has(key)) fail(`unknown field '${key}' (allowed: ${[...PLUGIN_KEYS].join(', ')})`);
  const namespace = p.namespace;
  if (typeof namespace !== 'string' || !NAMESPACE_RE.test(namespace))
    fail(
      `namespace must match ${NAMESPACE_RE.source} (lowercase letters, digits, single underscores, up to 32); got ${JSON.stringify(namespace)}`,
    );
  if (typeof p.description !== 'string' || p.description.trim() === '') fail('description must be a non-empty string');
  if (p.version !== undefined && typeof p.version !== 'string') fail('version must be a string');
  const catalogue = p.catalogue ?? 'unlisted';
  if (catalogue !== 'public' && catalogue !== 'unlisted') fail(`catalogue must be 'public' or 'unlisted'`);
  if (p.visible !== undefined && typeof p.visible !== 'function') fail('visible must be a function (caller) => boolean');
  if (!isPlainObject(p.functions)) fail('functions must be an object of function definitions');

  const ajvs = validators();
  const functions = new Map<string, FunctionEntry>();
  for (const [name, def] of Object.entries(p.functions)) {
    const where = `functions.${name}`;
    if (!FUNCTION_RE.test(name)) fail(`${where}: function names must match ${FUNCTION_RE.source}`);
    if (!isPlainObject(def)) fail(`${where} must be an object`);
    for (const key of Object.keys(def))
      if (!FUNCTION_KEYS.has(key)) fail(`${where}: unknown field '${key}' (allowed: ${[...FUNCTION_KEYS].join(', ')})`);
    if (typeof def.description !== 'string' || def.description.trim() === '') fail(`${where}.description must be a non-empty string`);
    if (typeof def.handler !== 'function') fail(`${where}.handler must be a function`);

    const args = def.args === undefined ? { type: 'object', properties: {} } : schemaCopy(def.args, `${where}.args`);
    if (args.type !== 'object') fail(`${where}.args must be an object schema (type: 'object'); arguments are keywords`);
    // Unknown keywords are a typo more often than not: refuse them unless the author opted in.
    if (!('additionalProperties' in args)) args.additionalProperties = false;
    for (const reserved of RESERVED_ARGS)
      if (isPlainObject(args.properties) && reserved in args.properties)
        fail(`${where}.args must not declare '${reserved}': the server supplies it`);
    let validate: ValidateFunction;
    try {
      validate = ajvs.for(args).compile(args);
    } catch (err) {
      fail(`${where}.args is not a valid JSON Schema: ${(err as Error).message}`);
    }
    const returns = def.returns === undefined ? undefined : schemaCopy(def.returns, `${where}.returns`);
    if (returns) {
      try {
        ajvs.for(returns).compile(returns);
      } catch (err) {
        fail(`${where}.returns is not a valid JSON Schema: ${(err as Error).message}`);
      }
    }
    const examples = def.examples ?? [];
    if (!Array.isArray(examples) || examples.some((e) => !isPlainObject(e) || !isPlainObject(e.args)))
      fail(`${where}.examples must be an array of { args: {...}, description? }`);
    for (const [i, ex] of (examples as Array<{ args: unknown }>).entries()) {
      if (!validate(structuredClone(ex.args)))
        fail(`${where}.examples[${i}] does not match the args schema: ${ajvs.for(args).errorsText(validate.errors)}`);
    }
    let requires: FunctionEntry['requires'] = {};
    if (def.requires !== undefined) {
      if (!isPlainObject(def.requires)) fail(`${where}.requires must be { roles?, scopes? }`);
      for (const k of Object.keys(def.requires)) if (k !== 'roles' && k !== 'scopes') fail(`${where}.requires: unknown field '${k}'`);
      const roles = stringList(def.requires.roles, `${where}.requires.roles`);
      const scopes = stringList(def.requires.scopes, `${where}.requires.scopes`);
      requires = { ...(roles ? { roles } : {}), ...(scopes ? { scopes } : {}) };
    }
    if (def.title !== undefined && (typeof def.title !== 'string' || def.title.trim() === '' || def.title.length > 100))
      fail(`${where}.title must be a non-empty string of at most 100 characters`);
    const annotations: FunctionAnnotations = {};
    if (def.annotations !== undefined) {
      if (!isPlainObject(def.annotations))
        fail(`${where}.annotations must be { readOnlyHint?, destructiveHint?, idempotentHint?, openWorldHint? }`);
      for (const [k, v] of Object.entries(def.annotations)) {
        if (!(ANNOTATION_KEYS as readonly string[]).includes(k))
          fail(`${where}.annotations: unknown field '${k}' (allowed: ${ANNOTATION_KEYS.join(', ')})`);
        if (typeof v !== 'boolean') fail(`${where}.annotations.${k} must be true or false`);
        annotations[k as (typeof ANNOTATION_KEYS)[number]] = v;
      }
    }
    if (def.maxBytes !== undefined && !(Number.isInteger(def.maxBytes) && (def.maxBytes as number) > 0))
      fail(`${where}.maxBytes must be a positive integer`);
    functions.set(name, {
      namespace,
      name,
      title: typeof def.title === 'string' ? def.title.trim() : undefined,
      annotations,
      description: def.description,
      args,
      returns,
      examples: examples as FunctionEntry['examples'],
      requires,
      maxBytes: def.maxBytes as number | undefined,
      signature: signature(namespace, name, args, returns),
      validate,
      handler: def.handler as FunctionEntry['handler'],
    });
  }
  return {
    namespace,
    prompts: buildPrompts(namespace, p.prompts),
    description: p.description.trim(),
    version: p.version ?? fallbackVersion,
    catalogue,
    visible: p.visible as PluginEntry['visible'],
    functions,
  };
}

function buildPrompts(namespace: string, prompts: unknown): Map<string, PromptEntry> {
  const out = new Map<string, PromptEntry>();
  if (prompts === undefined) return out;
  if (!isPlainObject(prompts)) fail('prompts must be an object of prompt definitions');
  for (const [name, def] of Object.entries(prompts)) {
    const where = `prompts.${name}`;
    if (!FUNCTION_RE.test(name)) fail(`${where}: prompt names must match ${FUNCTION_RE.source}`);
    if (!isPlainObject(def)) fail(`${where} must be an object`);
    for (const key of Object.keys(def))
      if (!PROMPT_KEYS.has(key)) fail(`${where}: unknown field '${key}' (allowed: ${[...PROMPT_KEYS].join(', ')})`);
    if (typeof def.description !== 'string' || def.description.trim() === '') fail(`${where}.description must be a non-empty string`);
    if (def.title !== undefined && (typeof def.title !== 'string' || def.title.trim() === ''))
      fail(`${where}.title must be a non-empty string`);
    if (typeof def.render !== 'function') fail(`${where}.render must be a function (args, ctx) => string`);
    const args = def.arguments ?? [];
    if (!Array.isArray(args)) fail(`${where}.arguments must be an array of { name, description?, required? }`);
    const seen = new Set<string>();
    const checked = args.map((a: unknown, i): PromptArgument => {
      if (!isPlainObject(a) || typeof a.name !== 'string' || !PROMPT_ARG_RE.test(a.name))
        fail(`${where}.arguments[${i}] needs a name matching ${PROMPT_ARG_RE.source}`);
      if (seen.has(a.name)) fail(`${where}.arguments: '${a.name}' twice`);
      seen.add(a.name);
      if (a.description !== undefined && typeof a.description !== 'string') fail(`${where}.arguments[${i}].description must be a string`);
      if (a.required !== undefined && typeof a.required !== 'boolean') fail(`${where}.arguments[${i}].required must be true or false`);
      const values = stringList(a.values, `${where}.arguments[${i}].values`);
      if (values && values.length > 100) fail(`${where}.arguments[${i}].values: at most 100`);
      if (a.suggest !== undefined && a.suggest !== 'tags') fail(`${where}.arguments[${i}].suggest must be 'tags'`);
      if (values && a.suggest !== undefined) fail(`${where}.arguments[${i}]: values or suggest, not both`);
      return {
        name: a.name,
        ...(typeof a.description === 'string' ? { description: a.description } : {}),
        ...(a.required === true ? { required: true } : {}),
        ...(values ? { values } : {}),
        ...(a.suggest === 'tags' ? { suggest: 'tags' as const } : {}),
      };
    });
    out.set(name, {
      namespace,
      name,
      title: typeof def.title === 'string' ? def.title.trim() : undefined,
      description: def.description.trim(),
      arguments: checked,
      render: def.render as PromptEntry['render'],
    });
  }
  return out;
}
