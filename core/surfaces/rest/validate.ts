// Request validation: every schema of the route table compiled once, at start, by Ajv. Query and
// path values arrive as strings and are coerced ('5' -> 5, 'a' -> ['a']); bodies are JSON and are not.
// Ajv's errors are turned into one line per refused value, naming where it was.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from 'typebox';
import type { FieldProblem } from './problems.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const options = {
  allErrors: true,
  verbose: true,
  useDefaults: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
} as const;

export function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ ...options, ...(coerce ? { coerceTypes: 'array' as const } : {}) });
  addFormats(ajv);
  return ajv;
}

export type Checker = (value: unknown) => { ok: true; value: unknown } | { ok: false; problems: FieldProblem[] };

/** Compiles `schema` once; the checker validates a copy (Ajv fills defaults and coerces in place). */
export function checker(ajv: Ajv, schema: TSchema, where: FieldProblem['in']): Checker {
  const validate = ajv.compile(schema);
  return (value) => {
    const copy = value === undefined ? undefined : structuredClone(value);
    if (validate(copy)) return { ok: true, value: copy };
    return { ok: false, problems: describe(validate, where) };
  };
}

function describe(validate: ValidateFunction, where: FieldProblem['in']): FieldProblem[] {
  const errors = validate.errors ?? [];
  // An anyOf reports each branch's failure and then its own; keep only its own, worded once.
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath);
  const kept = errors.filter((e) => !unions.some((u) => e.schemaPath !== u && e.schemaPath.startsWith(`${u}/`)));
  const seen = new Set<string>();
  const out: FieldProblem[] = [];
  for (const e of kept) {
    const p = problemOf(e, where);
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}

function problemOf(e: ErrorObject, where: FieldProblem['in']): FieldProblem {
  // What Ajv puts in params for the two keywords read here (RequiredParams, AdditionalPropertiesParams).
  const params = e.params as { missingProperty: string; additionalProperty: string };
  switch (e.keyword) {
    case 'required':
      return { in: where, path: `${e.instancePath}/${escape(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties': {
      const known = Object.keys((e.parentSchema?.properties as object | undefined) ?? {});
      const what = where === 'query' ? 'a parameter' : 'a field';
      return {
        in: where,
        path: `${e.instancePath}/${escape(params.additionalProperty)}`,
        message: `is not ${what} this operation takes${known.length ? ` (it takes: ${known.join(', ')})` : ''}`,
      };
    }
    case 'anyOf': {
      // A format goes with its type ("string (uuid)"): "must be one of string, null" for "abc" would not say what is wrong.
      const alts = ((e.schema as Array<{ const?: unknown; type?: string | string[]; format?: string }> | undefined) ?? []).map((s) =>
        'const' in s ? JSON.stringify(s.const) : s.format ? `${String(s.type ?? 'string')} (${s.format})` : String(s.type ?? 'value'),
      );
      return { in: where, path: e.instancePath, message: `must be one of ${alts.join(', ')}` };
    }
    case 'minProperties':
      return { in: where, path: e.instancePath, message: 'must not be empty' };
    default:
      return { in: where, path: e.instancePath, message: e.message ?? 'is not valid' };
  }
}

const escape = (key: string) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');
