/**
 * One evaluation of the trainer's objective (loss and gradient over every training example: what
 * each L-BFGS step costs), on 1 thread and on worker threads (src/node/train/shard-pool.ts). By
 * default CLINC150 as `clef-web train` fits it (train + oos_train minus the 10% held out: 13,590
 * examples of 151 options, its default vocabulary); `--planted N` a small planted file instead.
 * Prints per thread count the wall and CPU time of one evaluation (the mean of `--evaluations`
 * at random points, after one at the start that is not counted), the load average beside it,
 * and whether every thread count gave the same loss and gradient to the bit.
 *
 *   npx tsx tools/bench/train-objective.ts [--threads 1,2] [--evaluations 3]
 *       [--planted N] [--order] [--shards K] [--rows N]
 *
 * `--shards K` sets the shard count (default: the trainer's own for the example count, shards.ts),
 * to see whether threads would pay on a file the trainer keeps in one shard.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { Rng } from '../../src/calibrate/prng.js';
import { RMS_EPS } from '../../src/build/train/construct.js';
import { checkExamples, encodeExamples, prepareTokenizer } from '../../src/build/train/data.js';
import { learnerSetup } from '../../src/build/train/fit.js';
import { ORDER_SETTINGS } from '../../src/build/train/layer-settings.js';
import { fitObjective } from '../../src/build/train/learner.js';
import { hiddenOf } from '../../src/build/train/learner-setup.js';
import { DEFAULT_PAIR_SHAPE } from '../../src/build/train/pairs.js';
import { defaultVocab, DEFAULT_HOLDOUT } from '../../src/build/train/options.js';
import { splitHoldout } from '../../src/build/train/prepare.js';
import { DEFAULT_SETTINGS } from '../../src/build/train/select.js';
import { shardCount, shardRanges } from '../../src/build/train/shards.js';
import { nodeShardPool } from '../../src/node/train/shard-pool.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { clincLine, intentsOf, NONE_OPTION, readClinc } from '../train/clinc-examples.js';
import { plantedJsonl } from '../train/planted.js';
import { assertSourceUnchanged, sourceDigest } from './source-guard.js';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1,2' },
    evaluations: { type: 'string', default: '3' },
    planted: { type: 'string' },
    order: { type: 'boolean', default: false },
    shards: { type: 'string' },
    rows: { type: 'string' },
  },
});
const threadCounts = (values.threads as string).split(',').map(Number);
const evaluations = Number(values.evaluations);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const seconds = (ms: number) => (ms / 1000).toFixed(2);

function clincText(): string {
  const data = readClinc();
  const options = [...intentsOf(data), NONE_OPTION];
  const rows = [...data.train, ...data.oos_train];
  // --rows N: every (15,100 / N)th row, for a quicker look (the tokenizer alone takes minutes).
  const step = values.rows === undefined ? 1 : rows.length / Number(values.rows);
  const picked = rows.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step));
  return picked.map(([q, i]) => clincLine(q, i, options)).join('\n');
}

const source = sourceDigest();
const prepStart = Date.now();
const planted = values.planted === undefined ? null : Number(values.planted);
const all = parseLabelledExamples(planted === null ? clincText() : plantedJsonl(planted, 11), {
  validateRequest: (b) => validateRequest(b),
});
// As the pipeline splits a file over 2,000 examples (the fit sees the training part only).
const examples = all.length > 2000 ? splitHoldout(all, DEFAULT_HOLDOUT, 1).train : all;
const questions = checkExamples(examples);
const pairs = values.order ? DEFAULT_PAIR_SHAPE : null;
const classes = questions.reduce((n, q) => n + q.options.length, 0);
const vocab = defaultVocab(hiddenOf(classes, undefined, pairs === null ? 0 : pairs.m));
const data = prepareTokenizer(examples, vocab);
const encoded = encodeExamples(examples, data, 4096, new Set(questions.map((q) => q.id)));
const setup = learnerSetup(data, questions, [{ examples, encoded }], { rmsEps: RMS_EPS }, pairs);
const shards = values.shards === undefined ? undefined : Number(values.shards);
const shardTotal = shardRanges(
  encoded.length,
  shards ?? shardCount(encoded.length, pairs !== null),
).length;
console.log(
  `${planted === null ? 'CLINC150' : `planted task`}: ${encoded.length} training examples, ${classes} options, ` +
    `vocabulary ${data.files.vocabSize}${pairs ? ', the order layer' : ''}, ${shardTotal} shard${shardTotal === 1 ? '' : 's'} ` +
    `(prepared in ${seconds(Date.now() - prepStart)} s)`,
);

const settings = pairs === null ? DEFAULT_SETTINGS : ORDER_SETTINGS;
const results: Array<{ threads: number; wall: number; cpu: number; hash: string }> = [];
for (const threads of threadCounts) {
  assertSourceUnchanged(source, `before the ${threads}-thread row`);
  const pool = threads > 1 ? nodeShardPool(threads) : undefined;
  try {
    const fit = fitObjective(setup, encoded, { settings, pool, shards });
    const grad = new Float64Array(fit.start.length);
    const hash = createHash('sha256');
    const rng = new Rng(5);
    const point = () => {
      const x = fit.start.slice();
      for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) + 0.01 * rng.normal();
      return x;
    };
    // The first evaluation starts the threads and sends them the examples: not counted.
    const startWall = Date.now();
    await fit.objective(fit.start, grad);
    const firstMs = Date.now() - startWall;
    let wall = 0;
    let cpu = 0;
    for (let e = 0; e < evaluations; e++) {
      const x = point();
      const c = process.cpuUsage();
      const t = performance.now();
      const loss = await fit.objective(x, grad);
      wall += performance.now() - t;
      const used = process.cpuUsage(c);
      cpu += (used.user + used.system) / 1000;
      hash.update(new Float64Array([loss])).update(grad);
    }
    fit.close();
    const digest = hash.digest('hex').slice(0, 16);
    results.push({ threads, wall: wall / evaluations, cpu: cpu / evaluations, hash: digest });
    const base = results[0] as (typeof results)[number];
    console.log(
      `threads ${threads}: one evaluation ${seconds(wall / evaluations)} s wall, ${seconds(cpu / evaluations)} s CPU` +
        ` (${(base.wall / (wall / evaluations)).toFixed(2)}× the first row's speed; the first, with the start, ${seconds(firstMs)} s)` +
        `; load ${load()}; loss and gradient sha256 ${digest}`,
    );
  } finally {
    await pool?.close();
  }
}
assertSourceUnchanged(source, 'during the run');
const same = results.every((r) => r.hash === results[0]?.hash);
console.log(`the same loss and gradient bits on every thread count: ${same ? 'yes' : 'NO'}`);
if (!same) process.exitCode = 1;
