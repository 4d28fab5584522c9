/**
 * The trainer's L-BFGS (src/build/train/lbfgs.ts) fuses its passes over the parameter vector; a
 * fit must still give the same bytes as the textbook's separate loops. The reference below is
 * that textbook form, written out here: the two-loop recursion as a dot product, then an axpy,
 * per pair, the scaling, the negation and the slope each a pass of its own. On fresh random
 * objectives every point the method asks to evaluate, and the minimum it returns, must equal
 * the reference's bit for bit (tolerance: none). The objectives are chosen to reach each branch:
 * a full history, a pair left out for its curvature (s·y ≤ 1e-12, on a non-convex objective),
 * and a run stopped by the gradient tolerance and by the relative one.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/calibrate/prng.js';
import { minimize, minimizeAsync, type LbfgsOptions } from '../../../../src/build/train/lbfgs.js';
import { testSeed } from '../../../support/seed.js';

type Objective = (x: Float64Array, grad: Float64Array) => number;

interface Branches {
  fullHistory: number;
  pairLeftOut: number;
  restarts: number;
}

/** The textbook L-BFGS with the trainer's line search and stopping rules, loop by loop. */
function reference(
  objective: Objective,
  start: Float64Array,
  options: LbfgsOptions,
  asked: Float64Array[],
  branches: Branches,
): { x: Float64Array; value: number; iterations: number } {
  const dot = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
    return s;
  };
  const axpy = (a: number, x: Float64Array, y: Float64Array) => {
    for (let i = 0; i < y.length; i++) y[i] = (y[i] as number) + a * (x[i] as number);
  };
  const scale = (x: Float64Array, a: number) => {
    for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) * a;
  };
  const maxAbs = (x: Float64Array) => {
    let m = 0;
    for (const v of x) m = Math.max(m, Math.abs(v));
    return m;
  };
  const evaluate = (x: Float64Array, g: Float64Array) => {
    asked.push(x.slice());
    return objective(x, g);
  };
  const n = start.length;
  const m = options.history ?? 8;
  const gtol = options.gradientTolerance ?? 1e-6;
  const rtol = options.relativeTolerance ?? 1e-7;
  let x = start.slice();
  let g = new Float64Array(n);
  let f = evaluate(x, g);
  const ss: Float64Array[] = [];
  const ys: Float64Array[] = [];
  const rhos: number[] = [];
  const alpha = new Float64Array(m);
  let iterations = 0;
  for (; iterations < options.maxIterations; iterations++) {
    if (maxAbs(g) < gtol) break;
    const d = g.slice();
    for (let k = ss.length - 1; k >= 0; k--) {
      const a = (rhos[k] as number) * dot(ss[k] as Float64Array, d);
      alpha[k] = a;
      axpy(-a, ys[k] as Float64Array, d);
    }
    if (ss.length > 0) {
      const last = ss.length - 1;
      const yy = dot(ys[last] as Float64Array, ys[last] as Float64Array);
      scale(d, 1 / ((rhos[last] as number) * yy));
    } else {
      scale(d, 1 / Math.max(1, Math.sqrt(dot(g, g))));
    }
    for (let k = 0; k < ss.length; k++) {
      const b = (rhos[k] as number) * dot(ys[k] as Float64Array, d);
      axpy((alpha[k] as number) - b, ss[k] as Float64Array, d);
    }
    scale(d, -1);
    let slope = dot(g, d);
    if (!(slope < 0)) {
      branches.restarts++;
      ss.length = 0;
      ys.length = 0;
      rhos.length = 0;
      d.set(g);
      scale(d, -1 / Math.max(1, Math.sqrt(dot(g, g))));
      slope = dot(g, d);
    }
    let step = 1;
    let fNext = Infinity;
    const next = new Float64Array(n);
    const gNext = new Float64Array(n);
    for (let tries = 0; tries < 30; tries++) {
      for (let i = 0; i < n; i++) next[i] = (x[i] as number) + step * (d[i] as number);
      fNext = evaluate(next, gNext);
      if (Number.isFinite(fNext) && fNext <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(fNext < f)) break;
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = (next[i] as number) - (x[i] as number);
      y[i] = (gNext[i] as number) - (g[i] as number);
    }
    const sy = dot(s, y);
    if (ss.length === m) {
      branches.fullHistory++;
      ss.shift();
      ys.shift();
      rhos.shift();
    }
    if (sy > 1e-12) {
      ss.push(s);
      ys.push(y);
      rhos.push(1 / sy);
    } else {
      branches.pairLeftOut++;
    }
    const improvement = (f - fNext) / Math.max(Math.abs(f), 1e-12);
    x = next;
    g = gNext;
    f = fNext;
    if (improvement < rtol) {
      iterations++;
      break;
    }
  }
  return { x, value: f, iterations };
}

/** A random smooth objective: a convex quadratic plus, where `wavy`, a non-convex sine term. */
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
    const total: Branches = { fullHistory: 0, pairLeftOut: 0, restarts: 0 };
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
      const branches: Branches = { fullHistory: 0, pairLeftOut: 0, restarts: 0 };
      const expected = reference(objective, start, options, expectedAsked, branches);
      total.fullHistory += branches.fullHistory;
      total.pairLeftOut += branches.pairLeftOut;
      total.restarts += branches.restarts;
      stops.add(expected.iterations === options.maxIterations ? 'iterations' : 'tolerance');
      const where = `seed ${seed}, trial ${trial} (n ${n}, history ${options.history})`;

      const asked: Float64Array[] = [];
      const got = minimize(
        (x, g) => {
          asked.push(x.slice());
          return objective(x, g);
        },
        start,
        options,
      );
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
