/**
 * The project's one seeded PRNG (xoshiro128** seeded through splitmix32) and the seeded split
 * on it: a permutation, reproducible from its seed, sized by round(n · fraction).
 */
import { describe, expect, it } from 'vitest';
import {
  Rng,
  shuffledIndices,
  splitCopies,
  splitIndices,
  uniforms,
} from '../../../src/calibrate/index.js';

describe('the PRNG and the seeded split', () => {
  it('is xoshiro128** seeded through splitmix32: the stream trained weights were made with', () => {
    // From an independent implementation (Python, the published algorithms); a change here
    // changes every trained package, fixture and verify request of a given seed.
    const first = (seed: number) => {
      const r = new Rng(seed);
      return Array.from({ length: 5 }, () => r.nextU32());
    };
    expect(first(1)).toEqual([2442144158, 3238099751, 3819917871, 2104621829, 2021136066]);
    expect(first(20261130)).toEqual([2468732522, 561393889, 2762010580, 3186905954, 2247318145]);
  });

  it('draws uniforms in (0, 1), the same for the same seed, roughly uniform', () => {
    const a = uniforms(7);
    const b = uniforms(7);
    const draws = Array.from({ length: 10_000 }, () => a());
    expect(Array.from({ length: 10_000 }, () => b())).toEqual(draws);
    expect(draws.every((x) => x > 0 && x < 1)).toBe(true);
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

  it('keeps copies on one side, and splits as splitIndices where nothing repeats', () => {
    for (let seed = 0; seed < 200; seed++) {
      const rng = new Rng(seed + 1);
      const n = 20 + rng.int(80);
      // Without copies (distinct keys, or none): the same split as splitIndices.
      const plain = splitIndices(n, 0.25, seed);
      expect(
        splitCopies(
          Array.from({ length: n }, (_, i) => `t${i}`),
          0.25,
          seed,
        ),
      ).toEqual(plain);
      expect(splitCopies(new Array<undefined>(n).fill(undefined), 0.25, seed)).toEqual(plain);
      // With copies: every key wholly in one part, and both parts non-empty.
      const keys = Array.from({ length: n }, () => `t${rng.int(Math.max(2, n >> 2))}`);
      const { fit, heldOut } = splitCopies(keys, 0.25, seed);
      expect([...fit, ...heldOut].sort((x, y) => x - y)).toEqual(
        Array.from({ length: n }, (_, i) => i),
      );
      const heldKeys = new Set(heldOut.map((i) => keys[i]));
      expect(
        fit.filter((i) => heldKeys.has(keys[i])),
        `seed ${seed}`,
      ).toEqual([]);
      expect(heldOut.length).toBeGreaterThan(0);
      expect(fit.length).toBeGreaterThan(0);
    }
  });
});
