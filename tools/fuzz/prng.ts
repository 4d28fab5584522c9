/**
 * The draws the fuzz generator needs, on the project's one seeded PRNG. Seeded so a failing
 * case reproduces from `(seed, index)` alone: every case gets its own generator, mixed from both.
 */
import { uniforms } from '../../src/calibrate/prng.js';

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

export { uniforms };

/** A generator for case `index` of run `seed` (independent of every other case). */
export function caseRng(seed: number, index: number): Rng {
  // Mix the two so neighbouring (seed, index) pairs start far apart.
  const mixed = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  const next = uniforms(mixed);
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    chance: (p) => next() < p,
  };
  return rng;
}
