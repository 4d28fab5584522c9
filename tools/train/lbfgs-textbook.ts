/**
 * The textbook L-BFGS, loop by loop: the two-loop recursion as a dot product and then an axpy per
 * pair, the scaling, the negation and the slope each a pass of its own, with the trainer's line
 * search and stopping rules. It is src/build/train/lbfgs.ts as it was before its passes were
 * fused, with counters for the branches it takes; the trainer must equal it bit for bit
 * (test/unit/build/train/lbfgs.test.ts), and is timed against it (tools/bench/lbfgs.ts). Dev only.
 */
import type { LbfgsOptions, Minimum, Objective } from '../../src/build/train/lbfgs.js';

/** How often each rare branch was taken. */
export interface Branches {
  /** A pair left the full history. */
  fullHistory: number;
  /** A pair was not kept: s·y ≤ 1e-12. */
  pairLeftOut: number;
  /** The direction was not a descent one: the history was cleared. */
  restarts: number;
}

export function newBranches(): Branches {
  return { fullHistory: 0, pairLeftOut: 0, restarts: 0 };
}

/** Minimises `objective` from `start`, counting the branches taken into `branches`. */
export function textbookLbfgs(
  objective: Objective,
  start: Float64Array,
  options: LbfgsOptions,
  branches: Branches = newBranches(),
): Minimum {
  const steps = search(start, options, branches);
  let step = steps.next();
  while (!step.done) step = steps.next(objective(step.value.x, step.value.grad));
  return step.value;
}

function* search(
  start: Float64Array,
  options: LbfgsOptions,
  branches: Branches,
): Generator<{ x: Float64Array; grad: Float64Array }, Minimum, number> {
  const n = start.length;
  const m = options.history ?? 8;
  const gtol = options.gradientTolerance ?? 1e-6;
  const rtol = options.relativeTolerance ?? 1e-7;
  let x = start.slice();
  let g = new Float64Array(n);
  let f = yield { x, grad: g };
  const ss: Float64Array[] = [];
  const ys: Float64Array[] = [];
  const rhos: number[] = [];
  const direction = new Float64Array(n);
  // The trial point and its gradient; swapped with x and g when the step is taken.
  let next = new Float64Array(n);
  let gNext = new Float64Array(n);
  const alpha = new Float64Array(m);
  let iterations = 0;
  for (; iterations < options.maxIterations; iterations++) {
    if (maxAbs(g) < gtol) break;
    // Two-loop recursion: direction = −H g.
    direction.set(g);
    for (let k = ss.length - 1; k >= 0; k--) {
      const a = (rhos[k] as number) * dot(ss[k] as Float64Array, direction);
      alpha[k] = a;
      axpy(-a, ys[k] as Float64Array, direction);
    }
    if (ss.length > 0) {
      const last = ss.length - 1;
      const yy = dot(ys[last] as Float64Array, ys[last] as Float64Array);
      scale(direction, 1 / ((rhos[last] as number) * yy));
    } else {
      scale(direction, 1 / Math.max(1, Math.sqrt(dot(g, g))));
    }
    for (let k = 0; k < ss.length; k++) {
      const b = (rhos[k] as number) * dot(ys[k] as Float64Array, direction);
      axpy((alpha[k] as number) - b, ss[k] as Float64Array, direction);
    }
    scale(direction, -1);
    let slope = dot(g, direction);
    if (!(slope < 0)) {
      // Not a descent direction (curvature went wrong): restart from steepest descent.
      branches.restarts++;
      ss.length = 0;
      ys.length = 0;
      rhos.length = 0;
      direction.set(g);
      scale(direction, -1 / Math.max(1, Math.sqrt(dot(g, g))));
      slope = dot(g, direction);
    }
    let step = 1;
    let fNext = Infinity;
    for (let tries = 0; tries < 30; tries++) {
      for (let i = 0; i < n; i++) next[i] = (x[i] as number) + step * (direction[i] as number);
      fNext = yield { x: next, grad: gNext };
      if (Number.isFinite(fNext) && fNext <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(fNext < f)) break; // no progress possible along this direction
    // A pair about to leave the history lends its arrays to the new one.
    const full = ss.length === m;
    const s = full ? (ss[0] as Float64Array) : new Float64Array(n);
    const y = full ? (ys[0] as Float64Array) : new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = (next[i] as number) - (x[i] as number);
      y[i] = (gNext[i] as number) - (g[i] as number);
    }
    const sy = dot(s, y);
    if (full) {
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
    [x, next] = [next, x];
    [g, gNext] = [gNext, g];
    f = fNext;
    options.onIteration?.(iterations + 1, f);
    if (improvement < rtol) {
      iterations++;
      break;
    }
  }
  return { x, value: f, iterations };
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function axpy(a: number, x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < y.length; i++) y[i] = (y[i] as number) + a * (x[i] as number);
}

function scale(x: Float64Array, a: number): void {
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) * a;
}

function maxAbs(x: Float64Array): number {
  let m = 0;
  for (const v of x) m = Math.max(m, Math.abs(v));
  return m;
}
