/**
 * `render(v)` of clef-recipe.md §2: a string as it is; anything else as Python's
 * `json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)` writes it.
 *
 * Two kinds of input (system-one.md, "How values are rendered into the prompt"), mixable freely:
 * - plain JS values (page scripts): rendered as Python renders `json.loads(JSON.stringify(v))`;
 * - values from `parseRequestJson` (`Map`s, `PyNumber`s): rendered as Python renders
 *   `json.loads(text)`.
 *
 * Lone surrogates: Python's `json.loads` keeps a lone surrogate (JSON.stringify writes it as a
 * `\udXXX` escape) and `json.dumps(..., ensure_ascii=False)` writes it unescaped, so the output
 * keeps it as a raw code unit too. Whatever encodes the prompt decides what to do with it.
 */
import { isJsonNumberLexeme, MAX_JSON_DEPTH } from './json.js';
import { isPyNumber } from './json-value.js';
import type { JsonValue, PyNumber } from './types.js';

/** A value that JSON cannot carry (NaN, ±Infinity, undefined, a function, a bigint, a cycle). */
export class NotJsonError extends TypeError {
  /** Where in the value: keys and indexes from the root. */
  readonly path: Array<string | number>;
  constructor(message: string, path: Array<string | number>) {
    super(`${message} at ${path.length === 0 ? '(root)' : path.map(String).join('.')}`);
    this.name = 'NotJsonError';
    this.path = path;
  }
}

export function renderValue(v: JsonValue): string {
  if (typeof v === 'string') return v;
  const renderer = new Renderer();
  renderer.value(v, '');
  return renderer.parts.join('');
}

/**
 * Python's `repr(float)`: the shortest digits that read back to `x` (the same digits JS's
 * `Number.prototype.toString` picks), in exponent form when the decimal exponent is below -4
 * or at least 16, with at least two exponent digits (`1e-05`, `1.5e+16`), `.0` on integral
 * values otherwise, and `inf`, `-inf`, `nan` for the non-finite.
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (x === 0) return `${sign}0.0`;
  const { digits, exponent } = shortestDigits(Math.abs(x));
  if (exponent < -4 || exponent >= 16) {
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    const expSign = exponent < 0 ? '-' : '+';
    return `${sign}${mantissa}e${expSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const intLength = exponent + 1;
  if (digits.length <= intLength)
    return `${sign}${digits}${'0'.repeat(intLength - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLength)}.${digits.slice(intLength)}`;
}

/**
 * Shortest round-trip digits of a finite x > 0, read off `String(x)` (ECMAScript's
 * Number::toString): value = 0.d1d2...dn × 10^(exponent + 1), i.e. d1 is at 10^exponent.
 */
function shortestDigits(x: number): { digits: string; exponent: number } {
  const text = String(x);
  const eAt = text.indexOf('e');
  const mantissa = eAt < 0 ? text : text.slice(0, eAt);
  let exponent = eAt < 0 ? 0 : Number(text.slice(eAt + 1));
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  let digits = intPart + (dot < 0 ? '' : mantissa.slice(dot + 1));
  exponent += intPart.length - 1;
  // Leading zeros ("0.000123") shift the exponent down; trailing zeros ("1200") carry nothing.
  const firstNonZero = digits.search(/[1-9]/);
  digits = digits.slice(firstNonZero).replace(/0+$/, '');
  exponent -= firstNonZero;
  return { digits, exponent };
}

/** Python's json.dumps of a float (allow_nan=True writes the non-finite as below). */
function pythonJsonFloat(x: number): string {
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (Number.isNaN(x)) return 'NaN';
  return pythonFloatRepr(x);
}

/** A plain JS number as Python renders `json.loads(JSON.stringify(x))`. */
function renderJsNumber(x: number, path: () => Array<string | number>): string {
  if (!Number.isFinite(x)) throw new NotJsonError(`${x} is not JSON`, path());
  // JSON.stringify writes integers below 1e21 as plain digits (-0 as "0"), which Python reads
  // as an int; everything else carries a '.' or an exponent and Python reads a float.
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return x === 0 ? '0' : String(x);
  return pythonFloatRepr(x);
}

/** A PyNumber as Python renders `json.loads` of its lexeme. */
function renderPyNumber(n: PyNumber): string {
  // The lexeme decides (as it does for Python), not a possibly hand-built isInt flag.
  // int(lexeme) prints as the lexeme itself: the JSON grammar allows no '+' and no leading
  // zeros, so only "-0" changes. float(lexeme) is the correctly rounded double in both
  // languages, overflowing to ±inf.
  if (!/[.eE]/.test(n.lexeme)) return n.lexeme === '-0' ? '0' : n.lexeme;
  return pythonJsonFloat(Number(n.lexeme));
}

// What json.dumps escapes with ensure_ascii=False: quote, backslash and the C0 controls.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const HAS_ESCAPED_CHAR = /["\\\u0000-\u001f]/;
// eslint-disable-next-line no-control-regex -- the same set, for replace()
const ESCAPED_CHARS = /["\\\u0000-\u001f]/g;
const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** A JSON string as json.dumps(ensure_ascii=False) writes it: only `"`, `\` and C0 escaped. */
export function pythonJsonString(s: string): string {
  if (!HAS_ESCAPED_CHAR.test(s)) return `"${s}"`;
  const escaped = s.replace(
    ESCAPED_CHARS,
    (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}

/**
 * Compare by Unicode code point, as Python sorts str keys. Plain `<` compares UTF-16 code units,
 * which puts astral characters (surrogate pairs) before U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  const ca = a.charCodeAt(i);
  const cb = b.charCodeAt(i);
  if (ca < 0xd800 && cb < 0xd800) return ca - cb;
  // A shared high surrogate just before may start a pair in one string only: start there.
  // (Equal prefixes mean i-1 begins a code point whenever it holds a high surrogate.)
  if (i > 0 && isHighSurrogate(a.charCodeAt(i - 1))) i--;
  while (i < a.length && i < b.length) {
    const pa = a.codePointAt(i) as number;
    const pb = b.codePointAt(i) as number;
    if (pa !== pb) return pa - pb;
    i += pa > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Walks a value once, appending to `parts`; `keys` is kept for error messages only. */
class Renderer {
  /** The text so far, in pieces joined once at the end. */
  readonly parts: string[] = [];
  private readonly seen = new Set<object>();
  private readonly keys: Array<string | number> = [];

  private path = (): Array<string | number> => this.keys.slice(1);

  value(v: unknown, key: string | number): void {
    this.keys.push(key);
    this.dispatch(v);
    this.keys.pop();
  }

  private dispatch(v: unknown): void {
    switch (typeof v) {
      case 'string':
        this.parts.push(pythonJsonString(v));
        return;
      case 'number':
        this.parts.push(renderJsNumber(v, this.path));
        return;
      case 'boolean':
        this.parts.push(v ? 'true' : 'false');
        return;
      case 'object':
        if (v === null) this.parts.push('null');
        else this.object(v);
        return;
      default:
        // undefined, function, symbol, bigint: JSON.stringify drops or rejects them; we refuse.
        throw new NotJsonError(`${typeof v} is not JSON`, this.path());
    }
  }

  private object(v: object): void {
    if (isPyNumber(v)) {
      if (!isJsonNumberLexeme(v.lexeme)) {
        throw new NotJsonError(
          `PyNumber lexeme ${JSON.stringify(v.lexeme)} is not a JSON number`,
          this.path(),
        );
      }
      this.parts.push(renderPyNumber(v));
      return;
    }
    // Boxed primitives are unwrapped by JSON.stringify.
    if (v instanceof Number || v instanceof String || v instanceof Boolean) {
      this.dispatch(v.valueOf());
      return;
    }
    const toJSON: unknown = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      // What JSON.stringify sends for a Date and friends.
      this.dispatch(toJSON.call(v, String(this.keys[this.keys.length - 1])));
      return;
    }
    if (this.seen.has(v)) throw new NotJsonError('cyclic value is not JSON', this.path());
    if (this.keys.length > MAX_JSON_DEPTH) {
      throw new NotJsonError(`value nested deeper than ${MAX_JSON_DEPTH} levels`, this.path());
    }
    this.seen.add(v);
    if (Array.isArray(v)) this.array(v);
    else if (v instanceof Map) this.entries([...v.entries()]);
    else this.entries(Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]));
    this.seen.delete(v);
  }

  private array(items: unknown[]): void {
    this.parts.push('[');
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.parts.push(',');
      // JSON.stringify writes a hole of a sparse array as null.
      if (i in items) this.value(items[i], i);
      else this.parts.push('null');
    }
    this.parts.push(']');
  }

  private entries(entries: Array<[unknown, unknown]>): void {
    for (const [k] of entries) {
      if (typeof k !== 'string') throw new NotJsonError('object key is not a string', this.path());
    }
    const sorted = (entries as Array<[string, unknown]>).sort((x, y) =>
      compareCodePoints(x[0], y[0]),
    );
    this.parts.push('{');
    for (let i = 0; i < sorted.length; i++) {
      const [k, item] = sorted[i] as [string, unknown];
      if (i > 0) this.parts.push(',');
      this.parts.push(pythonJsonString(k) + ':');
      this.value(item, k);
    }
    this.parts.push('}');
  }
}
