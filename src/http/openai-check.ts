/**
 * Small helpers for checking OpenAI-shaped bodies. Bodies arrive either as the lossless parser's
 * output (objects are `Map`s in written order, numbers `PyNumber`s) or as plain JavaScript
 * values (a page script, a test); both read the same here. Every problem is collected with its
 * param path (`questions[2].choices[0].value`), in OpenAI's message style, so one 400 can list
 * them all.
 */
import { isPyNumber } from '../protocol/json-value.js';
import { CLEF_FLASH_LIMITS, type ModelLimits } from '../protocol/types.js';
import { invalidRequest, type OpenAiProblem } from './openai-errors.js';

/** Clef-flash's limits with the numeric overrides given. */
export function mergeLimits(overrides: Partial<ModelLimits> | undefined): ModelLimits {
  const limits: ModelLimits = { ...CLEF_FLASH_LIMITS };
  for (const key of Object.keys(limits) as Array<keyof ModelLimits>) {
    const v = overrides?.[key];
    if (typeof v === 'number') limits[key] = v;
  }
  return limits;
}

/** An object's members in order. */
export type Fields = Map<string, unknown>;

function isObjectLike(v: unknown): v is Map<unknown, unknown> | Record<string, unknown> {
  if (v instanceof Map) return true;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || isPyNumber(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** The members of an object (string keys only), or undefined for anything else. */
export function fieldsOf(v: unknown): Fields | undefined {
  if (!isObjectLike(v)) return undefined;
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  return new Map(entries.filter((e): e is [string, unknown] => typeof e[0] === 'string'));
}

/** The body's members; a body that is not an object is a 400 saying what it was instead. */
export function bodyFields(body: unknown): Fields {
  const f = fieldsOf(body);
  if (f !== undefined) return f;
  throw invalidRequest([
    {
      param: null,
      code: 'invalid_type',
      message: `The request body must be a JSON object, not ${describe(body)}.`,
    },
  ]);
}

function isNumberValue(v: unknown): boolean {
  return typeof v === 'number' || isPyNumber(v);
}

/** A JSON number's value as a double, or undefined when `v` is not a number. */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  return isPyNumber(v) ? Number(v.lexeme) : undefined;
}

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (isNumberValue(v)) return 'a number';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

export const at = (param: string, key: string): string => (param === '' ? key : `${param}.${key}`);
export const index = (param: string, i: number): string => `${param}[${i}]`;

/** Collects problems; each method reports one and returns whether the value passed. */
export class Checker {
  readonly problems: OpenAiProblem[] = [];

  add(param: string | null, code: string, message: string): void {
    this.problems.push({ param, code, message });
  }

  get ok(): boolean {
    return this.problems.length === 0;
  }

  invalidType(param: string, expected: string, got: unknown): void {
    this.add(
      param,
      'invalid_type',
      `Invalid type for '${param}': expected ${expected}, but got ${describe(got)} instead.`,
    );
  }

  invalidValue(param: string, why: string): void {
    this.add(param, 'invalid_value', `Invalid value for '${param}': ${why}.`);
  }

  /** A value OpenAI's API accepts but this model cannot honour. */
  unsupported(param: string, why: string): void {
    this.add(param, 'unsupported_value', `Unsupported value for '${param}': ${why}.`);
  }

  /** The object's members, or undefined after reporting that `v` is not an object. */
  object(v: unknown, param: string): Fields | undefined {
    const fields = fieldsOf(v);
    if (fields === undefined) this.invalidType(param, 'an object', v);
    return fields;
  }

  array(v: unknown, param: string): unknown[] | undefined {
    if (Array.isArray(v)) return v;
    this.invalidType(param, 'an array', v);
    return undefined;
  }

  /** Reports every member not in `allowed` (OpenAI's `unknown_parameter`). */
  keys(fields: Fields, allowed: readonly string[], param: string): void {
    for (const key of fields.keys()) {
      if (!allowed.includes(key)) {
        this.add(at(param, key), 'unknown_parameter', `Unknown parameter: '${at(param, key)}'.`);
      }
    }
  }

  /** Whether `key` is present; reports `missing_required_parameter` if not. */
  required(fields: Fields, key: string, param: string): boolean {
    if (fields.has(key)) return true;
    this.add(
      at(param, key),
      'missing_required_parameter',
      `Missing required parameter: '${at(param, key)}'.`,
    );
    return false;
  }

  string(v: unknown, param: string): v is string {
    if (typeof v === 'string') return true;
    this.invalidType(param, 'a string', v);
    return false;
  }

  /** An optional string member: absent or null passes (returns undefined), else a string. */
  optionalString(fields: Fields, key: string, param: string): string | undefined {
    const v = fields.get(key);
    if (v === undefined || v === null) return undefined;
    return this.string(v, at(param, key)) ? v : undefined;
  }

  /** An optional member that must be one of `values` (or absent / null). */
  optionalOneOf(fields: Fields, key: string, values: readonly unknown[], param: string): void {
    const v = fields.get(key);
    if (v === undefined || v === null || values.includes(v)) return;
    this.invalidValue(
      at(param, key),
      `expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}`,
    );
  }
}
