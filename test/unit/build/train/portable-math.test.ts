/**
 * The trainer's exp, log, tanh and cosh (src/build/train/portable-math.ts) against the engine's
 * Math functions on fresh random inputs over the ranges a fit meets: within 2 ulp (relative
 * 4.5e-16; each side is within 1 ulp of the truth). A slip in a constant or the range reduction
 * shows as errors of 1e-10 or more. Special values exactly.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/calibrate/prng.js';
import { cosh, exp, log, tanh } from '../../../../src/build/train/portable-math.js';
import { seedLine, testSeed } from '../../../support/seed.js';

const ULP2 = 2 * Number.EPSILON;

function worstRelative(f: (x: number) => number, g: (x: number) => number, xs: number[]) {
  let worst = 0;
  let at = NaN;
  for (const x of xs) {
    const a = f(x);
    const b = g(x);
    const rel = a === b ? 0 : Math.abs(a - b) / Math.abs(b);
    if (rel > worst) [worst, at] = [rel, x];
  }
  return { worst, at };
}

describe('portable math', () => {
  it('matches Math.exp, Math.log, Math.tanh and Math.cosh within 2 ulp on fresh random inputs', () => {
    const SEED = testSeed('portable-math');
    const rng = new Rng(SEED);
    const wide = Array.from({ length: 20000 }, () => (rng.uniform() - 0.5) * 1400);
    const small = Array.from({ length: 20000 }, () => (rng.uniform() - 0.5) * 40);
    const positive = Array.from({ length: 20000 }, () => Math.exp((rng.uniform() - 0.5) * 1400));
    const near1 = Array.from({ length: 20000 }, () => 1 + (rng.uniform() - 0.5) * 1e-3);
    const cases: Array<[string, (x: number) => number, (x: number) => number, number[]]> = [
      ['exp (±700)', exp, Math.exp, wide],
      ['exp (±20)', exp, Math.exp, small],
      ['log', log, Math.log, positive],
      ['log near 1', log, Math.log, near1],
      ['tanh', tanh, Math.tanh, small],
      ['cosh', cosh, Math.cosh, small],
    ];
    const failures: string[] = [];
    for (const [name, f, g, xs] of cases) {
      const { worst, at } = worstRelative(f, g, xs);
      console.log(`[portable-math] ${name}: worst relative difference ${worst.toExponential(2)}`);
      // tanh and cosh are composed from exp: a few ulp.
      const bound = name === 'tanh' || name === 'cosh' ? 4 * ULP2 : ULP2;
      if (worst > bound) failures.push(`${name}: ${worst} at x = ${at}`);
    }
    expect(failures, seedLine('portable-math', SEED)).toEqual([]);
  });

  it('gives the special values', () => {
    expect(exp(0)).toBe(1);
    expect(exp(-Infinity)).toBe(0);
    expect(exp(Infinity)).toBe(Infinity);
    expect(exp(1000)).toBe(Infinity);
    expect(exp(-1000)).toBe(0);
    expect(Number.isNaN(exp(NaN))).toBe(true);
    expect(log(1)).toBe(0);
    expect(log(0)).toBe(-Infinity);
    expect(log(Infinity)).toBe(Infinity);
    expect(Number.isNaN(log(-1))).toBe(true);
    expect(log(5e-324)).toBeCloseTo(Math.log(5e-324), 10);
    expect(tanh(30)).toBe(1);
    expect(tanh(-30)).toBe(-1);
  });
});
