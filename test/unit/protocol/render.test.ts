import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRequestJson, pyNumber } from '../../../src/protocol/json.js';
import {
  compareCodePoints,
  NotJsonError,
  pythonFloatRepr,
  pythonJsonString,
  renderValue,
} from '../../../src/protocol/render.js';
import type { JsonValue } from '../../../src/protocol/types.js';

interface Golden {
  textCases: Array<[string, string]>;
  jsValueCases: Array<[string, string | null]>;
  floatRepr: Array<[string, string]>;
}
const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/render-golden.json', import.meta.url), 'utf8'),
) as Golden;

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

/** Render with the thrown error, if any, as the result (for readable failures). */
function tryRender(v: unknown): string | Error {
  try {
    return renderValue(v as JsonValue);
  } catch (e) {
    return e as Error;
  }
}

describe('renderValue against Python (golden file from tools/golden/render_golden.py)', () => {
  it(`renders ${golden.textCases.length} parsed JSON texts as json.dumps(json.loads(text))`, () => {
    let failures = 0;
    for (const [text, expected] of golden.textCases) {
      const got = tryRender(parseRequestJson(text));
      if (got !== expected) {
        failures++;
        if (failures <= 3) expect(got, text).toBe(expected);
      }
    }
    expect(failures).toBe(0);
  });

  it(`renders ${golden.jsValueCases.length} JS values as json.dumps(json.loads(JSON.stringify(v)))`, () => {
    let refused = 0;
    for (const [text, expected] of golden.jsValueCases) {
      const value: unknown = JSON.parse(text);
      if (expected === null) {
        // the value holds ±Infinity (an overflowing lexeme): not JSON
        expect(() => renderValue(value as JsonValue), text).toThrow(NotJsonError);
        refused++;
      } else {
        expect(tryRender(value), text).toBe(expected);
      }
    }
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(golden.jsValueCases.length / 2);
  });

  it(`writes ${golden.floatRepr.length} doubles as Python's repr`, () => {
    for (const [hex, repr] of golden.floatRepr) {
      expect(pythonFloatRepr(fromBits(hex)), hex).toBe(repr);
    }
  });
});

describe('renderValue details (expected values written from Python semantics)', () => {
  it('passes strings through unchanged, at the top level only', () => {
    expect(renderValue('a "quoted"\n\u0000 string')).toBe('a "quoted"\n\u0000 string');
    expect(renderValue(['a"\n'])).toBe('["a\\"\\n"]');
  });

  it('escapes only quote, backslash and C0 controls (ensure_ascii=False)', () => {
    expect(pythonJsonString('\u0000\u0008\u000c\u001f\u007f\u2028é😀/')).toBe(
      '"\\u0000\\b\\f\\u001f\u007f\u2028é😀/"',
    );
    // JSON.stringify would escape the lone surrogate; Python with ensure_ascii=False keeps it.
    expect(renderValue(['\ud800'])).toBe('["\ud800"]');
  });

  it('sorts keys by code point, not by UTF-16 unit', () => {
    const v = { '\u{1F600}': 1, '\uE000': 2, b: 3, B: 4, '10': 5, '9': 6, '': 7 };
    expect(renderValue(v)).toBe('{"":7,"10":5,"9":6,"B":4,"b":3,"\uE000":2,"\u{1F600}":1}');
    expect(['\u{1F600}', '\uE000'].sort()).toEqual(['\u{1F600}', '\uE000']); // the trap
    expect(compareCodePoints('\u{1F600}', '\uE000')).toBeGreaterThan(0);
    // a lone high surrogate (U+D83D) sorts before the pair that starts with it (U+1F600)
    expect(compareCodePoints('\ud83dx', '\u{1F600}')).toBeLessThan(0);
    expect(compareCodePoints('a\ud83d', 'a\ud83d\ude00')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
  });

  it('renders JS numbers as Python renders json.loads(JSON.stringify(x))', () => {
    const cases: Array<[number, string]> = [
      [1.0, '1'],
      [-0, '0'],
      [2 ** 53 + 2, '9007199254740994'],
      [2 ** 66, '73786976294838210000'], // JSON.stringify's digits, not 73786976294838206464
      [1e21, '1e+21'],
      [-1e21, '-1e+21'],
      [999999999999999900000, '999999999999999900000'],
      [1e-5, '1e-05'],
      [1.5e16 + 0.5, '15000000000000000'], // an integer after rounding
      [0.1, '0.1'],
      [1e-7, '1e-07'],
      [123.456, '123.456'],
      [5e-324, '5e-324'],
    ];
    for (const [x, expected] of cases) expect(renderValue([x]), String(x)).toBe(`[${expected}]`);
  });

  it('renders parsed numbers by their lexeme', () => {
    const cases: Array<[string, string]> = [
      ['1.0', '1.0'],
      ['1e5', '100000.0'],
      ['1E400', 'Infinity'],
      ['-1e400', '-Infinity'],
      ['1e-400', '0.0'],
      ['-0.0', '-0.0'],
      ['-0', '0'],
      ['12345678901234567890', '12345678901234567890'],
      ['1.5e16', '1.5e+16'],
      ['1e16', '1e+16'],
      ['1e15', '1000000000000000.0'],
      ['0.00001', '1e-05'],
      ['0.0001', '0.0001'],
    ];
    for (const [lexeme, expected] of cases) {
      expect(renderValue([pyNumber(lexeme)]), lexeme).toBe(`[${expected}]`);
    }
  });

  it('mixes plain objects, Maps and PyNumbers', () => {
    const semantics = {
      option_id: 'x',
      description: parseRequestJson('{"b":1.0,"a":[2,true,null]}'),
    };
    expect(renderValue(semantics)).toBe(
      '{"description":{"a":[2,true,null],"b":1.0},"option_id":"x"}',
    );
  });

  it('follows JSON.stringify for toJSON, boxed primitives, sparse arrays and __proto__', () => {
    expect(renderValue({ d: new Date(0) } as unknown as JsonValue)).toBe(
      '{"d":"1970-01-01T00:00:00.000Z"}',
    );
    expect(
      renderValue([new Number(1.5), new String('s'), new Boolean(false)] as unknown as JsonValue),
    ).toBe('[1.5,"s",false]');
    // eslint-disable-next-line no-sparse-arrays
    expect(renderValue([1, , 3] as unknown as JsonValue)).toBe('[1,null,3]');
    expect(renderValue(JSON.parse('{"__proto__":{"x":1},"a":2}') as JsonValue)).toBe(
      '{"__proto__":{"x":1},"a":2}',
    );
  });

  it('refuses what is not JSON with NotJsonError and its path', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cases: Array<[unknown, Array<string | number>]> = [
      [NaN, []],
      [{ a: [1, Infinity] }, ['a', 1]],
      [{ a: -Infinity }, ['a']],
      [{ a: undefined }, ['a']],
      [[() => 1], [0]],
      [{ n: 10n }, ['n']],
      [[Symbol('s')], [0]],
      [cyclic, ['self']],
      [new Map<unknown, JsonValue>([[1, 'x']]), []],
      [[{ kind: 'py-number', lexeme: 'NaN', isInt: false }], [0]],
    ];
    for (const [value, path] of cases) {
      const error = tryRender(value);
      expect(error).toBeInstanceOf(NotJsonError);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as NotJsonError).path).toEqual(path);
    }
  });

  it('refuses values nested deeper than 512 levels without overflowing the stack', () => {
    let v: JsonValue = [];
    for (let i = 1; i < 512; i++) v = [v];
    expect(renderValue(v)).toBe('['.repeat(512) + ']'.repeat(512));
    expect(() => renderValue([v])).toThrow(NotJsonError);
  });
});
