/**
 * Limited-memory BFGS with a backtracking (Armijo) line search, for the trainer's smooth,
 * L2-regularised objective: no learning rate to tune, and the same answer for the same start
 * (one thread, one order of operations). Memory: 2 · `history` + 5 vectors of the parameter size,
 * allocated once (a fit on CLINC150 has 5 million parameters: 40 MB a vector).
 */

export interface LbfgsOptions {
  /** Iterations at most. */
  maxIterations: number;
  /** Pairs (s, y) kept. */
  history?: number;
  /** Stop when the largest |gradient| entry falls below this. */
  gradientTolerance?: number;
  /** Stop when an iteration improves the objective by less than this, relatively. */
  relativeTolerance?: number;
  onIteration?: (iteration: number, value: number) => void;
}

/** `evaluate(x, grad)` writes the gradient into `grad` and returns the objective. */
export type Objective = (x: Float64Array, grad: Float64Array) => number;
export type AsyncObjective = (x: Float64Array, grad: Float64Array) => Promise<number>;

/** A point to evaluate: the objective's value at `x` is sent back, its gradient written in `grad`. */
interface Ask {
  x: Float64Array;
  grad: Float64Array;
}

export type Minimum = { x: Float64Array; value: number; iterations: number };

/**
 * The method itself, as a generator that asks for each evaluation it needs: one algorithm for a
 * synchronous objective (minimize) and for one whose shards run elsewhere (minimizeAsync).
 */
function* search(start: Float64Array, options: LbfgsOptions): Generator<Ask, Minimum, number> {
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
      ss.shift();
      ys.shift();
      rhos.shift();
    }
    if (sy > 1e-12) {
      ss.push(s);
      ys.push(y);
      rhos.push(1 / sy);
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

export function minimize(
  objective: Objective,
  start: Float64Array,
  options: LbfgsOptions,
): Minimum {
  const steps = search(start, options);
  let step = steps.next();
  while (!step.done) step = steps.next(objective(step.value.x, step.value.grad));
  return step.value;
}

/** minimize with an objective that answers later (the same steps, so the same result). */
export async function minimizeAsync(
  objective: AsyncObjective,
  start: Float64Array,
  options: LbfgsOptions,
): Promise<Minimum> {
  const steps = search(start, options);
  let step = steps.next();
  while (!step.done) step = steps.next(await objective(step.value.x, step.value.grad));
  return step.value;
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
