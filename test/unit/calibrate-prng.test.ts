/** The seeded split: a permutation, reproducible from its seed, sized by round(n · fraction). */
import { describe, expect, it } from 'vitest';
import { mulberry32, shuffledIndices, splitIndices } from '../../src/calibrate/index.js';

describe('seeded split', () => {
  it('mulberry32 is deterministic, in [0, 1), and roughly uniform', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const draws = Array.from({ length: 10_000 }, () => a());
    expect(Array.from({ length: 10_000 }, () => b())).toEqual(draws);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    // Mean of 10,000 uniforms: sd = sqrt(1/12/10000) ≈ 0.0029; allow 4 sd.
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(4 * 0.0029);
  });

  it('shuffles into a permutation that depends on the seed', () => {
    const p = shuffledIndices(100, 1);
    expect([...p].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(shuffledIndices(100, 1)).toEqual(p);
    expect(shuffledIndices(100, 2)).not.toEqual(p);
  });

  it('splits into disjoint, ascending parts of the stated sizes', () => {
    for (const [n, h] of [
      [10, 0.25],
      [38, 0.25],
      [1000, 0.3],
      [7, 0.5],
    ] as const) {
      const { fit, heldOut } = splitIndices(n, h, 3);
      expect(heldOut).toHaveLength(Math.round(n * h));
      expect([...fit, ...heldOut].sort((x, y) => x - y)).toEqual(
        Array.from({ length: n }, (_, i) => i),
      );
      expect(fit).toEqual([...fit].sort((x, y) => x - y));
      expect(heldOut).toEqual([...heldOut].sort((x, y) => x - y));
    }
  });

  it('holds out each record about as often as the fraction says, across seeds', () => {
    // 2000 seeds × 20 records at 0.25: each record is held out ~Binomial(2000, 0.25) times,
    // mean 500, sd ≈ 19.4; allow 5 sd for each of the 20 records.
    const counts = new Array<number>(20).fill(0);
    for (let seed = 0; seed < 2000; seed++) {
      for (const i of splitIndices(20, 0.25, seed).heldOut) counts[i]!++;
    }
    for (const c of counts) expect(Math.abs(c - 500)).toBeLessThan(5 * 19.4);
  });
});
