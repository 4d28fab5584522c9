/**
 * The order layer's starts on the planted order task (dev only): for each seed, 480 draws to fit
 * on and 400 fresh ones of the next seed (as train-order.test.ts), the model with the order layer
 * fitted from each of ORDER_STARTS starts alone (learner.ts), and the one with the lowest objective,
 * the one `train` keeps (train-starts.test.ts proves fitModel keeps exactly that one). Prints each
 * start's objective and fresh-draw accuracy, the kept one's, and how many seeds fall under 99%.
 *
 *   npx tsx tools/bench/order-starts.ts --seeds 162627,400001,... [--label order-starts]
 */
import { parseArgs } from 'node:util';
import { RMS_EPS } from '../../src/build/train/construct.js';
import { learnerSetup } from '../../src/build/train/fit.js';
import { MAX_ITERATIONS, ORDER_SETTINGS } from '../../src/build/train/layer-settings.js';
import { fitModel, ORDER_STARTS } from '../../src/build/train/learner.js';
import { DEFAULT_PAIR_SHAPE } from '../../src/build/train/pairs.js';
import { binaryAccuracy, plantedData } from '../train/planted-fit.js';
import { orderJsonl } from '../train/planted.js';
import { numbers } from './product-fit.js';
import { writeResults } from './results-file.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '162627' },
    label: { type: 'string', default: 'order-starts' },
  },
});
const SEEDS = numbers('seeds', values.seeds as string);
const TARGET = 0.99;

interface Start {
  objective: number;
  iterations: number;
  fresh: number;
}
interface SeedResult {
  seed: number;
  starts: Start[];
  /** The kept start, counted from 1. */
  kept: number;
}

const results: SeedResult[] = [];
for (const seed of SEEDS) {
  // Prepared as train-order.test.ts prepares it.
  const { questions, data, encoded, freshEncoded, groups } = plantedData(
    orderJsonl(480, seed),
    orderJsonl(400, seed + 1),
  );
  const setup = learnerSetup(data, questions, groups, { rmsEps: RMS_EPS }, DEFAULT_PAIR_SHAPE);
  const starts: Start[] = [];
  for (let s = 0; s < ORDER_STARTS; s++) {
    const m = await fitModel(setup, encoded, {
      settings: ORDER_SETTINGS,
      maxIterations: MAX_ITERATIONS,
      seed: 1 + s,
    });
    starts.push({
      objective: m.objective,
      iterations: m.iterations,
      fresh: binaryAccuracy(m.params, freshEncoded),
    });
  }
  const kept = starts.reduce((a, b) => (b.objective < a.objective ? b : a));
  results.push({ seed, starts, kept: starts.indexOf(kept) + 1 });
  console.log(
    `seed ${seed}: ` +
      starts
        .map(
          (s, i) =>
            `start ${i + 1} objective ${s.objective.toFixed(5)} fresh ${(s.fresh * 100).toFixed(2)}%`,
        )
        .join(' | ') +
      ` → kept start ${starts.indexOf(kept) + 1}, ${(kept.fresh * 100).toFixed(2)}%`,
  );
}
const under = (pick: (r: SeedResult) => number) => results.filter((r) => pick(r) < TARGET).length;
const low = (pick: (r: SeedResult) => number) => Math.min(...results.map(pick)) * 100;
const first = (r: SeedResult) => (r.starts[0] as Start).fresh;
const keptOf = (r: SeedResult) => (r.starts[r.kept - 1] as Start).fresh;
console.log(
  `\n${results.length} seeds under 99% on fresh draws: the first start alone ${under(first)} ` +
    `(lowest ${low(first).toFixed(2)}%), the kept start ${under(keptOf)} (lowest ${low(keptOf).toFixed(2)}%)`,
);
writeResults(values.label as string, { starts: ORDER_STARTS, results });
