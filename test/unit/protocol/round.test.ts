import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pythonRound } from '../../../src/protocol/round.js';

interface Golden {
  round: Array<[string, number, string]>;
}
const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/render-golden.json', import.meta.url), 'utf8'),
) as Golden;

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

const cases = golden.round.map(([x, n, r]) => ({ x: fromBits(x), n, expected: fromBits(r) }));
const fourDigitCases = cases.filter((c) => c.n === 4);

describe('pythonRound against CPython round(x, n) (golden file; exact: bit for bit)', () => {
  it(`matches all ${cases.length} cases, ${fourDigitCases.length} of them at 4 digits`, () => {
    expect(fourDigitCases.length).toBeGreaterThan(1000);
    for (const { x, n, expected } of cases) {
      // Object.is: same double, signed zeros told apart (round(-0.00001, 4) is -0.0).
      expect(Object.is(pythonRound(x, n), expected), `round(${x}, ${n})`).toBe(true);
    }
  });

  it('is sensitive: Math.round(x * 1e4) / 1e4 and toFixed(4) fail some golden cases', () => {
    const mathRoundMisses = fourDigitCases.filter(
      ({ x, expected }) => Math.round(x * 1e4) / 1e4 !== expected,
    );
    const toFixedMisses = fourDigitCases.filter(
      ({ x, expected }) => Number(x.toFixed(4)) !== expected,
    );
    expect(mathRoundMisses.length).toBeGreaterThan(10);
    expect(toFixedMisses.length).toBeGreaterThan(0);
  });
});

describe('pythonRound details (values from CPython 3.11)', () => {
  it('rounds exact binary ties to even and near-ties by their binary value', () => {
    expect(pythonRound(0.03125, 4)).toBe(0.0312); // 312.5 exactly: down to even
    expect(Math.round(0.03125 * 1e4) / 1e4).toBe(0.0313); // what the naive way gives
    expect(pythonRound(0.09375, 4)).toBe(0.0938); // 937.5 exactly: up to even
    expect(pythonRound(2.675, 2)).toBe(2.67); // 2.67499999... in binary
    expect(pythonRound(1.00005, 4)).toBe(1.0001); // 1.0000500000000001 in binary
    expect(pythonRound(2.5, 0)).toBe(2);
    expect(pythonRound(25, -1)).toBe(20);
  });

  it('keeps the sign of zero and passes non-finite values through', () => {
    expect(Object.is(pythonRound(-0.00001, 4), -0)).toBe(true);
    expect(Object.is(pythonRound(-0, 4), -0)).toBe(true);
    expect(Object.is(pythonRound(-5, -400), -0)).toBe(true);
    expect(pythonRound(Infinity, 4)).toBe(Infinity);
    expect(pythonRound(NaN, 4)).toBeNaN();
    expect(pythonRound(1e-320, 400)).toBe(1e-320);
  });

  it('raises where CPython raises', () => {
    expect(() => pythonRound(1.7976931348623157e308, -308)).toThrow(RangeError);
    expect(() => pythonRound(1, 1.5)).toThrow(TypeError);
  });
});
