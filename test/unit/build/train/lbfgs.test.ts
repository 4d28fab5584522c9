/**
 * The trainer's L-BFGS (src/build/train/lbfgs.ts) fuses its passes over the parameter vector; a
 * fit must still give the same bytes as the textbook's separate loops (tools/train/
 * lbfgs-textbook.ts: the two-loop recursion as a dot product, then an axpy, per pair, the
 * scaling, the negation and the slope each a pass of its own). On fresh random
 * objectives every point the method asks to evaluate, and the minimum it returns, must equal
 * the reference's bit for bit (tolerance: none). The objectives are chosen to reach each branch:
 * a full history, a pair left out for its curvature (s·y ≤ 1e-12, on a non-convex objective),
 * and a run stopped by the gradient tolerance and by the relative one.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/calibrate/prng.js';
import { minimize, minimizeAsync, type LbfgsOptions } from '../../../../src/build/train/lbfgs.js';
import { testSeed } from '../../../support/seed.js';
import { newBranches, textbookLbfgs } from '../../../../tools/train/lbfgs-textbook.js';

type Objective = (x: Float64Array, grad: Float64Array) => number;

/** A random smooth objective: a softplus loss with an L2 penalty (convex) and, where `wavy`, a sine term. */
function randomObjective(rng: Rng, n: number, wavy: boolean): Objective {
  const rows = 2 * n;
  const a = Float64Array.from({ length: rows * n }, () => rng.normal() / Math.sqrt(n));
  const b = Float64Array.from({ length: rows }, () => rng.normal());
  const lambda = 0.01 + rng.uniform();
  return (x, grad) => {
    let f = 0;
    grad.fill(0);
    for (let r = 0; r < rows; r++) {
      let z = -(b[r] as number);
      for (let j = 0; j < n; j++) z += (a[r * n + j] as number) * (x[j] as number);
      // Softplus of the residual: a logistic-regression-like loss, smooth and convex.
      const e = Math.exp(-Math.abs(z));
      f += Math.max(z, 0) + Math.log1p(e);
      const p = z >= 0 ? 1 / (1 + e) : e / (1 + e);
      for (let j = 0; j < n; j++) grad[j] = (grad[j] as number) + p * (a[r * n + j] as number);
    }
    for (let j = 0; j < n; j++) {
      const xj = x[j] as number;
      f += 0.5 * lambda * xj * xj;
      grad[j] = (grad[j] as number) + lambda * xj;
      if (wavy) {
        f += 3 * Math.sin(3 * xj);
        grad[j] = (grad[j] as number) + 9 * Math.cos(3 * xj);
      }
    }
    return f;
  };
}

/** `objective`, each point it is asked at copied into `asked`. */
function recording(objective: Objective, asked: Float64Array[]): Objective {
  return (x, grad) => {
    asked.push(x.slice());
    return objective(x, grad);
  };
}

function sameBits(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length * 2);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return false;
  return true;
}

describe('L-BFGS', () => {
  it('asks for the same points and returns the same minimum as the textbook loops, bit for bit', async () => {
    const seed = testSeed('lbfgs');
    const rng = new Rng(seed);
    const total = newBranches();
    const stops = new Set<string>();
    for (let trial = 0; trial < 60; trial++) {
      const n = 5 + rng.int(60);
      const wavy = trial % 2 === 1;
      const objective = randomObjective(rng, n, wavy);
      const start = Float64Array.from({ length: n }, () => rng.normal());
      // A third of the runs end at their iteration limit, the others at a tolerance.
      const options: LbfgsOptions =
        trial % 3 === 0
          ? {
              maxIterations: 3 + rng.int(12),
              history: 1 + rng.int(4),
              gradientTolerance: 0,
              relativeTolerance: 0,
            }
          : {
              maxIterations: 400,
              history: 1 + rng.int(10),
              ...(trial % 3 === 1 ? { gradientTolerance: 1e-4 } : { relativeTolerance: 1e-10 }),
            };
      const expectedAsked: Float64Array[] = [];
      const branches = newBranches();
      const expected = textbookLbfgs(recording(objective, expectedAsked), start, options, branches);
      total.fullHistory += branches.fullHistory;
      total.pairLeftOut += branches.pairLeftOut;
      stops.add(expected.iterations === options.maxIterations ? 'iterations' : 'tolerance');
      const where = `seed ${seed}, trial ${trial} (n ${n}, history ${options.history})`;

      const asked: Float64Array[] = [];
      const got = minimize(recording(objective, asked), start, options);
      expect(asked.length, where).toBe(expectedAsked.length);
      for (let i = 0; i < asked.length; i++)
        expect(
          sameBits(asked[i] as Float64Array, expectedAsked[i] as Float64Array),
          `${where}: evaluation ${i}`,
        ).toBe(true);
      expect(got.iterations, where).toBe(expected.iterations);
      expect(Object.is(got.value, expected.value), where).toBe(true);
      expect(sameBits(got.x, expected.x), where).toBe(true);

      const later = await minimizeAsync(async (x, g) => objective(x, g), start, options);
      expect(sameBits(later.x, expected.x), `${where}: async`).toBe(true);
    }
    // The comparison reached the branches it is meant to check.
    expect(total.fullHistory, `seed ${seed}`).toBeGreaterThan(0);
    expect(total.pairLeftOut, `seed ${seed}`).toBeGreaterThan(0);
    expect([...stops].sort(), `seed ${seed}`).toEqual(['iterations', 'tolerance']);
  });

  it('finds the minimum of a convex objective: its gradient there under 1e-6', () => {
    const seed = testSeed('lbfgs-minimum');
    const rng = new Rng(seed);
    const n = 40;
    const objective = randomObjective(rng, n, false);
    const got = minimize(objective, new Float64Array(n), {
      maxIterations: 2000,
      gradientTolerance: 1e-7,
      relativeTolerance: 0,
    });
    const grad = new Float64Array(n);
    objective(got.x, grad);
    const worst = Math.max(...Array.from(grad, Math.abs));
    // It stops at the tolerance, or earlier where no step lowers the objective in float64.
    expect(worst, `seed ${seed}`).toBeLessThan(1e-6);
  });
});
