/**
 * A strict, lossless JSON parser (RFC 8259) for request bodies that arrive as text.
 *
 * Why not `JSON.parse`: it reorders integer-like object keys (`"2"` before `"b"`) and reads every
 * number as a double, while the model must see what Python's `json.loads` gives (written key
 * order; `1.0` a float, `12345678901234567890` an exact int). So objects become `Map`s in written
 * order and numbers become `PyNumber`s that keep their lexeme.
 *
 * Matches `json.loads` where JSON leaves room: a duplicate key keeps its first position and takes
 * the last value (what assigning into a Python dict does). Stricter than `json.loads` where it is
 * lenient: `NaN`, `Infinity` and `-Infinity` are refused (they are not JSON).
 */
import type { JsonMap, JsonValue, PyNumber } from './types.js';

/**
 * Deepest nesting of arrays/objects accepted. Python's `json.loads` itself fails near 1,000 levels
 * (recursion limit), so nothing a hosted model can read is lost; the cap keeps our recursive
 * parser and renderer far from the JS stack limit.
 */
export const MAX_JSON_DEPTH = 512;

export class JsonSyntaxError extends SyntaxError {
  /** Index (UTF-16 code unit) in the text where the problem was found. */
  readonly position: number;
  constructor(message: string, position: number) {
    super(`${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
    this.position = position;
  }
}

const NUMBER_LEXEME = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Whether `lexeme` is exactly one JSON number (RFC 8259 grammar, no surrounding space). */
export function isJsonNumberLexeme(lexeme: string): boolean {
  return NUMBER_LEXEME.test(lexeme);
}

/** A PyNumber for a JSON number lexeme; throws a JsonSyntaxError when it is not one. */
export function pyNumber(lexeme: string): PyNumber {
  if (!isJsonNumberLexeme(lexeme)) throw new JsonSyntaxError(`Not a JSON number: ${lexeme}`, 0);
  return makePyNumber(lexeme);
}

function makePyNumber(lexeme: string): PyNumber {
  // Python's json.loads gives an int exactly when there is no fraction and no exponent.
  const isInt = !/[.eE]/.test(lexeme);
  return { kind: 'py-number', lexeme, isInt };
}

// Character codes used by the scanner.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const SIMPLE_ESCAPES: Record<number, string> = {
  0x22: '"',
  0x5c: '\\',
  0x2f: '/',
  0x62: '\b',
  0x66: '\f',
  0x6e: '\n',
  0x72: '\r',
  0x74: '\t',
};

/** Parse a complete JSON text; throws JsonSyntaxError (with `position`) when it is not JSON. */
export function parseRequestJson(text: string): JsonValue {
  return new Parser(text).parseDocument();
}

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  parseDocument(): JsonValue {
    this.skipWhitespace();
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('Extra data after the JSON value');
    return value;
  }

  private fail(message: string, at: number = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      // JSON whitespace is exactly space, tab, LF and CR.
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
    this.pos = pos;
  }

  private parseValue(): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    if (c === QUOTE) return this.parseString();
    if (c === 0x7b) return this.parseObject();
    if (c === 0x5b) return this.parseArray();
    if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) return this.parseNumber();
    if (this.text.startsWith('true', this.pos)) return this.literal(4, true);
    if (this.text.startsWith('false', this.pos)) return this.literal(5, false);
    if (this.text.startsWith('null', this.pos)) return this.literal(4, null);
    return this.fail(this.pos >= this.text.length ? 'Unexpected end of JSON' : 'Expecting value');
  }

  private literal<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) {
      this.fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
  }

  private parseArray(): JsonValue[] {
    this.enter();
    this.pos++; // '['
    const items: JsonValue[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      this.depth--;
      return items;
    }
    for (;;) {
      this.skipWhitespace();
      items.push(this.parseValue());
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
      } else if (c === 0x5d) {
        this.pos++;
        this.depth--;
        return items;
      } else {
        this.fail("Expecting ',' or ']'");
      }
    }
  }

  private parseObject(): JsonMap {
    this.enter();
    this.pos++; // '{'
    const map: JsonMap = new Map();
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      this.depth--;
      return map;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== QUOTE) this.fail('Expecting a double-quoted key');
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("Expecting ':'");
      this.pos++;
      this.skipWhitespace();
      // Map.set on an existing key keeps its position and replaces the value, like a dict.
      map.set(key, this.parseValue());
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
      } else if (c === 0x7d) {
        this.pos++;
        this.depth--;
        return map;
      } else {
        this.fail("Expecting ',' or '}'");
      }
    }
  }

  private parseNumber(): PyNumber {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === MINUS) pos++;
    const first = text.charCodeAt(pos);
    if (first === DIGIT_0) {
      pos++;
    } else if (first > DIGIT_0 && first <= DIGIT_9) {
      pos = this.skipDigits(pos);
    } else {
      this.fail('Expecting a digit', pos);
    }
    if (text.charCodeAt(pos) === 0x2e) {
      const afterDot = this.skipDigits(pos + 1);
      if (afterDot === pos + 1) this.fail('Expecting a digit after the decimal point', afterDot);
      pos = afterDot;
    }
    const e = text.charCodeAt(pos);
    if (e === 0x65 || e === 0x45) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === 0x2b || sign === MINUS) pos++;
      const afterExp = this.skipDigits(pos);
      if (afterExp === pos) this.fail('Expecting a digit in the exponent', pos);
      pos = afterExp;
    }
    this.pos = pos;
    return makePyNumber(text.slice(start, pos));
  }

  private skipDigits(pos: number): number {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c >= DIGIT_0 && c <= DIGIT_9) pos++;
      else return pos;
    }
  }

  /** Parse a string starting at its opening quote; decodes escapes as JSON.parse does. */
  private parseString(): string {
    const text = this.text;
    const length = text.length;
    let pos = this.pos + 1;
    let chunkStart = pos;
    let out = '';
    for (;;) {
      if (pos >= length) this.fail('Unterminated string', this.pos);
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        out += text.slice(chunkStart, pos);
        this.pos = pos + 1;
        return out;
      }
      if (c < 0x20) this.fail('Invalid control character in string', pos);
      if (c !== BACKSLASH) {
        pos++;
        continue;
      }
      out += text.slice(chunkStart, pos);
      const kind = text.charCodeAt(pos + 1);
      const simple = SIMPLE_ESCAPES[kind];
      if (simple !== undefined) {
        out += simple;
        pos += 2;
      } else if (kind === 0x75) {
        // \uXXXX: one UTF-16 code unit; a lone surrogate stays as it is, like JSON.parse.
        const hex = text.slice(pos + 2, pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('Invalid \\uXXXX escape', pos);
        out += String.fromCharCode(parseInt(hex, 16));
        pos += 6;
      } else {
        this.fail('Invalid escape', pos);
      }
      chunkStart = pos;
    }
  }
}
