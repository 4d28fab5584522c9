import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  isJsonNumberLexeme,
  JsonSyntaxError,
  MAX_JSON_DEPTH,
  parseRequestJson,
  pyNumber,
} from '../../../src/protocol/json.js';
import type { JsonValue } from '../../../src/protocol/types.js';

interface Golden {
  textCases: Array<[string, string]>;
  invalidTexts: Array<[string, number]>;
}
const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/render-golden.json', import.meta.url), 'utf8'),
) as Golden;

/**
 * Compare a lossless parse with JSON.parse, the independent reference for everything but key
 * order and number precision: same strings, numbers that read as the same double, the same
 * keys with the last value of a duplicate.
 */
function expectSameAsJsonParse(ours: JsonValue, theirs: unknown): void {
  if (ours instanceof Map) {
    expect(typeof theirs === 'object' && theirs !== null && !Array.isArray(theirs)).toBe(true);
    const obj = theirs as Record<string, unknown>;
    expect([...ours.keys()].sort()).toEqual(Object.keys(obj).sort());
    for (const [k, v] of ours) expectSameAsJsonParse(v, obj[k]);
  } else if (Array.isArray(ours)) {
    expect(Array.isArray(theirs)).toBe(true);
    const arr = theirs as unknown[];
    expect(ours.length).toBe(arr.length);
    ours.forEach((v, i) => expectSameAsJsonParse(v, arr[i]));
  } else if (typeof ours === 'object' && ours !== null && 'kind' in ours) {
    expect(Object.is(Number(ours.lexeme), theirs)).toBe(true);
  } else {
    expect(ours).toBe(theirs);
  }
}

describe('parseRequestJson against golden texts (json.loads accepts them)', () => {
  it(`parses all ${golden.textCases.length} texts to what JSON.parse reads`, () => {
    for (const [text] of golden.textCases) {
      expectSameAsJsonParse(parseRequestJson(text), JSON.parse(text));
    }
  });

  it(`rejects all ${golden.invalidTexts.length} texts json.loads rejects`, () => {
    let samePosition = 0;
    for (const [text, pythonPos] of golden.invalidTexts) {
      let error: unknown;
      try {
        parseRequestJson(text);
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(JsonSyntaxError);
      const position = (error as JsonSyntaxError).position;
      expect(position, text).toBeGreaterThanOrEqual(0);
      expect(position, text).toBeLessThanOrEqual(text.length);
      if (position === pythonPos) samePosition++;
    }
    // Positions need not match Python's (it blames "." in "1.", we blame the missing digit),
    // but most do: a sanity check that positions point where the text breaks.
    expect(samePosition / golden.invalidTexts.length).toBeGreaterThan(0.6);
  });
});

describe('parseRequestJson details', () => {
  it('keeps written key order, integer-like keys included', () => {
    const v = parseRequestJson('{"b":1,"2":2,"a":3,"1":4,"10":5,"0":6}') as Map<string, JsonValue>;
    expect([...v.keys()]).toEqual(['b', '2', 'a', '1', '10', '0']);
    // JSON.parse would have moved the integer-like keys first:
    expect(Object.keys(JSON.parse('{"b":1,"2":2}'))).toEqual(['2', 'b']);
  });

  it('keeps a duplicate key at its first position with its last value, like a Python dict', () => {
    const v = parseRequestJson('{"a":1,"b":2,"a":3}') as Map<string, JsonValue>;
    expect([...v.entries()]).toEqual([
      ['a', pyNumber('3')],
      ['b', pyNumber('2')],
    ]);
  });

  it('keeps number lexemes and their int/float kind', () => {
    expect(parseRequestJson('[1.0,12345678901234567890,-0,1E400,2e-5]')).toEqual([
      { kind: 'py-number', lexeme: '1.0', isInt: false },
      { kind: 'py-number', lexeme: '12345678901234567890', isInt: true },
      { kind: 'py-number', lexeme: '-0', isInt: true },
      { kind: 'py-number', lexeme: '1E400', isInt: false },
      { kind: 'py-number', lexeme: '2e-5', isInt: false },
    ]);
  });

  it('decodes strings as JSON.parse does: escapes, pairs, lone surrogates', () => {
    const text = String.raw`["\ud83d\ude00","\ud800","\uDC00x","\"\\\/\b\f\n\r\t","é😀"]`;
    const parsed = parseRequestJson(text);
    expect(parsed).toEqual(JSON.parse(text));
    expect((parsed as string[])[1]).toBe('\ud800');
  });

  it('refuses NaN, Infinity, a BOM and trailing data, with the position', () => {
    for (const [text, pos] of [
      ['NaN', 0],
      ['[Infinity]', 1],
      ['-Infinity', 1],
      ['\ufeff{}', 0],
      ['{} x', 3],
      ['[1,]', 3],
      ['"a\nb"', 2],
    ] as const) {
      expect(() => parseRequestJson(text), text).toThrow(JsonSyntaxError);
      try {
        parseRequestJson(text);
      } catch (e) {
        expect((e as JsonSyntaxError).position, text).toBe(pos);
        expect((e as Error).message).toContain(`position ${pos}`);
      }
    }
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, clearly`, () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    let value = parseRequestJson(nest(MAX_JSON_DEPTH));
    let depth = 0;
    for (; Array.isArray(value); depth++) value = value[0];
    expect(depth).toBe(MAX_JSON_DEPTH);
    expect(() => parseRequestJson(nest(MAX_JSON_DEPTH + 1))).toThrow(/nested deeper than 512/);
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(() => parseRequestJson(objects)).toThrow(JsonSyntaxError);
    // A huge nesting is a clean JsonSyntaxError, never a stack overflow.
    expect(() => parseRequestJson(nest(200_000))).toThrow(JsonSyntaxError);
  });

  it('pyNumber validates its lexeme', () => {
    expect(pyNumber('-1.5e+3')).toEqual({ kind: 'py-number', lexeme: '-1.5e+3', isInt: false });
    expect(pyNumber('42').isInt).toBe(true);
    for (const bad of ['', '01', '1.', '+1', ' 1', 'NaN', '0x1']) {
      expect(isJsonNumberLexeme(bad)).toBe(false);
      expect(() => pyNumber(bad)).toThrow(JsonSyntaxError);
    }
  });

  // Speed is measured by the benchmark, not asserted here: this checks a multi-megabyte body
  // parses (no stack overflow, nothing lost).
  it('parses a 5 MB body', () => {
    const record =
      '{"id":12345,"name":"caf\\u00e9 \\ud83d\\ude00 text","score":0.123456789,"tags":["a","b"],"ok":true}';
    const text = `[${Array.from({ length: Math.ceil(5_000_000 / record.length) }, () => record).join(',')}]`;
    expect(text.length).toBeGreaterThan(5_000_000);
    const parsed = parseRequestJson(text) as JsonValue[];
    expect(parsed.length).toBe((JSON.parse(text) as unknown[]).length);
    const last = parsed[parsed.length - 1] as Map<string, JsonValue>;
    expect(last.get('name')).toBe('café 😀 text');
  });
});
