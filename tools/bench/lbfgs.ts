/**
 * The trainer's L-BFGS (src/build/train/lbfgs.ts, its passes over the parameters fused) against
 * the textbook loops it replaced (tools/train/lbfgs-textbook.ts), on an objective as cheap as a
 * small file's, so the method's own passes are what is timed. A fit of a 160-line file has
 * 28,000 to 56,000 parameters and history 8; the trainer's fits stop at 400 iterations.
 * Prints, for each size, the iterations run (at most `--iterations`; a run ends earlier where no
 * step lowers the objective in float64), the milliseconds an iteration spends in the method
 * itself each way (the objective's time taken out; the median of `--repeats` runs, taken in
 * turn), the ratio, and whether both gave the same minimum to the bit.
 *
 *   npx tsx tools/bench/lbfgs.ts [--sizes 28000,56000] [--iterations 400] [--repeats 5]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Rng } from '../../src/calibrate/prng.js';
import { minimize, type Objective } from '../../src/build/train/lbfgs.js';
import { textbookLbfgs } from '../train/lbfgs-textbook.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '28000,56000' },
    iterations: { type: 'string', default: '400' },
    repeats: { type: 'string', default: '5' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const iterations = Number(values.iterations);
const repeats = Number(values.repeats);

/** A smooth convex objective of O(n) cost: softplus terms, an L2 penalty and a chain coupling. */
function objectiveOf(n: number, seed: number): Objective {
  const rng = new Rng(seed);
  const a = Float64Array.from({ length: n }, () => rng.normal());
  const b = Float64Array.from({ length: n }, () => rng.normal());
  return (x, grad) => {
    let f = 0;
    for (let j = 0; j < n; j++) {
      const xj = x[j] as number;
      const z = (a[j] as number) * xj - (b[j] as number);
      const e = Math.exp(-Math.abs(z));
      f += Math.max(z, 0) + Math.log1p(e) + 0.005 * xj * xj;
      const p = z >= 0 ? 1 / (1 + e) : e / (1 + e);
      grad[j] = p * (a[j] as number) + 0.01 * xj;
    }
    for (let j = 0; j + 1 < n; j++) {
      const d = (x[j] as number) - (x[j + 1] as number);
      f += 2 * d * d;
      grad[j] = (grad[j] as number) + 4 * d;
      grad[j + 1] = (grad[j + 1] as number) - 4 * d;
    }
    return f;
  };
}

const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)] as number;

function sameBits(p: Float64Array, q: Float64Array): boolean {
  return Buffer.from(p.buffer).equals(Buffer.from(q.buffer));
}

console.log(`load average before: ${loadavg()[0]?.toFixed(2)}`);
console.log(
  '| parameters | iterations | textbook ms an iteration | fused ms an iteration | ratio | same minimum |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const n of sizes) {
  const objective = objectiveOf(n, n);
  const start = new Float64Array(n);
  const options = {
    maxIterations: iterations,
    history: 8,
    gradientTolerance: 0,
    relativeTolerance: 0,
  };
  // Each run's time in the method alone: its whole time less its objective's.
  const run = (method: typeof minimize) => {
    let inObjective = 0;
    let evaluations = 0;
    const t = performance.now();
    const got = method(
      (x, g) => {
        const s = performance.now();
        const f = objective(x, g);
        inObjective += performance.now() - s;
        evaluations++;
        return f;
      },
      start,
      options,
    );
    const total = performance.now() - t;
    return { got, evaluations, perIteration: (total - inObjective) / got.iterations };
  };
  const textbook: number[] = [];
  const fused: number[] = [];
  // One untimed run of each first, so both are compiled before either is timed.
  run(textbookLbfgs);
  let last = run(minimize);
  let same = true;
  for (let r = 0; r < repeats; r++) {
    const expected = run(textbookLbfgs);
    textbook.push(expected.perIteration);
    last = run(minimize);
    fused.push(last.perIteration);
    same &&=
      last.got.iterations === expected.got.iterations && sameBits(last.got.x, expected.got.x);
  }
  const tb = median(textbook);
  const fu = median(fused);
  console.log(
    `| ${n} | ${last.got.iterations} (${last.evaluations} evaluations) | ${tb.toFixed(3)} | ${fu.toFixed(3)} | ${(tb / fu).toFixed(2)}× | ${same ? 'yes' : 'NO'} |`,
  );
}
console.log(`load average after: ${loadavg()[0]?.toFixed(2)}`);
