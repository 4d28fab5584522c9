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
 *
 * Where the objective is cheap (a small file's fit: 30-60 thousand parameters, 100-300 examples)
 * the passes over the parameter vector are a large part of a fit's time, so each pass does the
 * work of two: the two-loop recursion updates the direction and takes the next product in one
 * loop, and the pass that makes a pair takes its products and the gradient's largest entry.
 * Every value is computed by the same operations in the same order as the textbook's separate
 * loops (tools/train/lbfgs-textbook.ts; test/unit/build/train/lbfgs.test.ts compares every point
 * evaluated bit for bit), so a fit gives the same bytes as before: about 2× faster in the method
 * itself, 1.16-1.26× in `train` on small files (docs/benchmarks.md, "The fit's L-BFGS with its
 * passes fused").
 */
function* search(start: Float64Array, options: LbfgsOptions): Generator<Ask, Minimum, number> {
  const n = start.length;
  const m = options.history ?? 8;
  const gtol = options.gradientTolerance ?? 1e-6;
  const rtol = options.relativeTolerance ?? 1e-7;
  let x = start.slice();
  let g = new Float64Array(n);
  let f = yield { x, grad: g };
  let gMax = maxAbs(g);
  // The pairs (s, y), oldest first, with ρ = 1 / s·y and y·y (the first step's scale).
  const pairs: Pair[] = [];
  const direction = new Float64Array(n);
  // The trial point and its gradient; swapped with x and g when the step is taken.
  let next = new Float64Array(n);
  let gNext = new Float64Array(n);
  const alpha = new Float64Array(m);
  let iterations = 0;
  for (; iterations < options.maxIterations; iterations++) {
    if (gMax < gtol) break;
    let slope = twoLoop(g, pairs, direction, alpha);
    if (!(slope < 0)) {
      // Not a descent direction (curvature went wrong): restart from steepest descent.
      pairs.length = 0;
      slope = twoLoop(g, pairs, direction, alpha);
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
    const full = pairs.length === m;
    const oldest = full ? pairs.shift() : undefined;
    const s = oldest?.s ?? new Float64Array(n);
    const y = oldest?.y ?? new Float64Array(n);
    let sy = 0;
    let yy = 0;
    gMax = 0;
    for (let i = 0; i < n; i++) {
      const si = (next[i] as number) - (x[i] as number);
      const gi = gNext[i] as number;
      const yi = gi - (g[i] as number);
      s[i] = si;
      y[i] = yi;
      sy += si * yi;
      yy += yi * yi;
      gMax = Math.max(gMax, Math.abs(gi));
    }
    if (sy > 1e-12) pairs.push({ s, y, rho: 1 / sy, yy });
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

/** A step and the change of gradient it made: ρ = 1 / s·y, and y·y. */
interface Pair {
  s: Float64Array;
  y: Float64Array;
  rho: number;
  yy: number;
}

/**
 * The direction −H g by the two-loop recursion over `pairs` (steepest descent, scaled to at most
 * unit length, where there are none), written into `d`; returns its slope g·d. Each loop's
 * update of d is fused with the next pair's product, taken on the updated d as the separate loops
 * take it.
 */
function twoLoop(g: Float64Array, pairs: Pair[], d: Float64Array, alpha: Float64Array): number {
  const n = g.length;
  const count = pairs.length;
  if (count === 0) {
    let gg = 0;
    for (let i = 0; i < n; i++) gg += (g[i] as number) * (g[i] as number);
    const c = 1 / Math.max(1, Math.sqrt(gg));
    let slope = 0;
    for (let i = 0; i < n; i++) {
      const di = (g[i] as number) * c * -1;
      d[i] = di;
      slope += (g[i] as number) * di;
    }
    return slope;
  }
  // d = g, and the newest pair's s·d.
  const last = pairs[count - 1] as Pair;
  let product = 0;
  for (let i = 0; i < n; i++) {
    const gi = g[i] as number;
    d[i] = gi;
    product += (last.s[i] as number) * gi;
  }
  // Newest to oldest: a = ρ s·d, d −= a y; then the next older pair's s·d, or, after the oldest,
  // d scaled by 1 / (ρ y·y) of the newest and the oldest pair's y·d.
  const scaleBy = 1 / (last.rho * last.yy);
  for (let k = count - 1; k >= 0; k--) {
    const pair = pairs[k] as Pair;
    const a = pair.rho * product;
    alpha[k] = a;
    const minusA = -a;
    const y = pair.y;
    if (k > 0) {
      product = updateThenDot(d, minusA, y, (pairs[k - 1] as Pair).s);
    } else {
      // The oldest pair: its own y is the first the second loop takes.
      product = 0;
      for (let i = 0; i < n; i++) {
        const di = ((d[i] as number) + minusA * (y[i] as number)) * scaleBy;
        d[i] = di;
        product += (y[i] as number) * di;
      }
    }
  }
  // Oldest to newest: b = ρ y·d, d += (α − b) s; then the next newer pair's y·d, or, after the
  // newest, d negated and the slope g·d.
  let slope = 0;
  for (let k = 0; k < count; k++) {
    const pair = pairs[k] as Pair;
    const c = (alpha[k] as number) - pair.rho * product;
    const s = pair.s;
    if (k < count - 1) {
      product = updateThenDot(d, c, s, (pairs[k + 1] as Pair).y);
    } else {
      for (let i = 0; i < n; i++) {
        const di = ((d[i] as number) + c * (s[i] as number)) * -1;
        d[i] = di;
        slope += (g[i] as number) * di;
      }
    }
  }
  return slope;
}

/**
 * d += c·u, then w·d: one pass, the sum taken in index order as a separate axpy and dot take it.
 * Unrolled by four, one accumulator still: faster again in V8 (tools/bench/lbfgs.ts at 28,000
 * parameters, the objective's time included: 2.7 → 2.3 ms an iteration).
 */
function updateThenDot(d: Float64Array, c: number, u: Float64Array, w: Float64Array): number {
  let product = 0;
  const n = d.length;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const d0 = (d[i] as number) + c * (u[i] as number);
    const d1 = (d[i + 1] as number) + c * (u[i + 1] as number);
    const d2 = (d[i + 2] as number) + c * (u[i + 2] as number);
    const d3 = (d[i + 3] as number) + c * (u[i + 3] as number);
    d[i] = d0;
    d[i + 1] = d1;
    d[i + 2] = d2;
    d[i + 3] = d3;
    product += (w[i] as number) * d0;
    product += (w[i + 1] as number) * d1;
    product += (w[i + 2] as number) * d2;
    product += (w[i + 3] as number) * d3;
  }
  for (; i < n; i++) {
    const di = (d[i] as number) + c * (u[i] as number);
    d[i] = di;
    product += (w[i] as number) * di;
  }
  return product;
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

function maxAbs(x: Float64Array): number {
  let m = 0;
  for (const v of x) m = Math.max(m, Math.abs(v));
  return m;
}
