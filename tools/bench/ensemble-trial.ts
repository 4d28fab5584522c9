/**
 * A trial of ensembling within the size budget (dev only), on the product's own model: the five
 * models of `train`'s cross-fit (its chosen layers and settings, each fitted without one fold)
 * combined, against the product (the same setup fitted on everything).
 *
 * - `soup`: the fold models' parameters averaged element by element: one model of the same shape,
 *   so a release holds it as it holds the product (every fit starts from the same point, so the
 *   five lie near each other);
 * - `ensemble`: the fold models' probabilities averaged: what ensembling gives at most, which a
 *   release of one model cannot compute exactly (its head takes one pooled vector through a
 *   cosine), shown as the bound on what the soup could gain.
 *
 * Neither is chosen by anything: the fold models' out-of-fold loss is the product's own (printed
 * as a check that the harness fits as `train` does), and the test files judge the rest.
 *
 *   npx tsx tools/bench/ensemble-trial.ts [--tasks ...] [--clinc-draws N --clinc-seed S] [--label NAME]
 */
import { parseArgs } from 'node:util';
import { MAX_ITERATIONS } from '../../src/build/train/layer-settings.js';
import { fitModel } from '../../src/build/train/learner.js';
import { scaledSoftmax } from '../../src/calibrate/softmax.js';
import type { CalibrationFile } from '../../src/calibrate/types.js';
import type { ModelExample, ModelParams } from '../../src/build/train/model.js';
import type { PairParams } from '../../src/build/train/pairs.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { assignFolds, FOLDS, score } from '../../src/build/train/select.js';
import { apart, type Task } from './small-tasks.js';
import { figuresLine, productFit, runTrial, trialTasks } from './product-fit.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency,devices,bikeshop' },
    label: { type: 'string', default: 'ensemble-trial' },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-seed': { type: 'string', default: '1' },
  },
});

const mean = (arrays: ReadonlyArray<ArrayLike<number>>): Float64Array => {
  const out = new Float64Array((arrays[0] as ArrayLike<number>).length);
  for (const a of arrays)
    for (let i = 0; i < a.length; i++)
      out[i] = (out[i] as number) + (a[i] as number) / arrays.length;
  return out;
};

/** The models' parameters averaged: every learned array element by element, the rest the first's. */
function soup(models: readonly ModelParams[]): ModelParams {
  const first = models[0] as ModelParams;
  const pairsOf = (m: ModelParams) => m.pairs as PairParams;
  return {
    ...first,
    theta: mean(models.map((m) => m.theta)),
    rho: mean(models.map((m) => m.rho)),
    rows: mean(models.map((m) => m.rows)),
    scaleLogit: models.reduce((a, m) => a + m.scaleLogit, 0) / models.length,
    logBias: models.reduce((a, m) => a + m.logBias, 0) / models.length,
    ...(first.emb === undefined ? {} : { emb: mean(models.map((m) => m.emb as Float64Array)) }),
    ...(first.pairs === undefined
      ? {}
      : {
          pairs: {
            ...first.pairs,
            u: mean(models.map((m) => pairsOf(m).u)),
            z: mean(models.map((m) => pairsOf(m).z)),
            zBias: mean(models.map((m) => pairsOf(m).zBias)),
            b: mean(models.map((m) => pairsOf(m).b)),
            bBias: mean(models.map((m) => pairsOf(m).bBias)),
            wo: mean(models.map((m) => pairsOf(m).wo)),
          },
        }),
  };
}

/**
 * The test figures, plus over the scored lines the NLL, the share wrong at ≥ 0.9 uncalibrated, and
 * the calibrated figures at `calibration`.
 */
function judged(
  fit: Awaited<ReturnType<typeof productFit>>,
  calibration: CalibrationFile,
  logitsOf: (e: ModelExample) => Float64Array,
) {
  const scored = fit.scoredFrom(logitsOf).filter((s) => !apart(s.line));
  let nll = 0;
  let confident = 0;
  for (const s of scored) {
    nll -= Math.log(Math.max(s.p.get(s.label) ?? 0, 1e-300));
    let top = s.label;
    for (const [o, v] of s.p) if (v > (s.p.get(top) ?? 0)) top = o;
    if ((s.p.get(top) as number) >= 0.9 && top !== s.label) confident++;
  }
  return {
    ...fit.figuresFrom(logitsOf),
    testNll: nll / scored.length,
    rawWrongAt90: confident / scored.length,
    calibrated: fit.calibratedFrom(calibration, logitsOf),
  };
}

async function runTask(task: Task) {
  const t0 = Date.now();
  const fit = await productFit(task);
  const { setup, model } = fit.product;
  const examples = fit.train;
  const k = Math.min(FOLDS, examples.length);
  const fold = assignFolds(examples, k, 1);
  const folds: ModelParams[] = [];
  const outOfFold = new Array<Float64Array[]>(examples.length);
  for (let f = 0; f < k; f++) {
    const fitted = await fitModel(
      setup,
      examples.filter((_, i) => fold[i] !== f),
      { settings: model.settings, maxIterations: MAX_ITERATIONS },
    );
    folds.push(fitted.params);
    examples.forEach((e, i) => {
      if (fold[i] === f) outOfFold[i] = modelLogits(fitted.params, e);
    });
  }
  const soupParams = soup(folds);
  // The product's own calibration (fitted on the fold models' out-of-fold logits), for all three.
  const calibration = fit.calibrationFrom(outOfFold);
  const logitsOf = (params: ModelParams) => (e: ModelExample) =>
    modelLogits(params, e)[0] as Float64Array;
  return {
    task: task.name,
    seconds: (Date.now() - t0) / 1000,
    layers: fit.summary().layers,
    settings: model.settings,
    outOfFold: { product: fit.outOfFold, foldModels: score(examples, outOfFold).logLoss },
    product: judged(fit, calibration, logitsOf(model.params)),
    soup: judged(fit, calibration, logitsOf(soupParams)),
    ensemble: judged(fit, calibration, (e) => {
      const ps = folds.map((m) => scaledSoftmax(logitsOf(m)(e)));
      return mean(ps).map((v) => Math.log(v));
    }),
  };
}

const tasks = trialTasks(values.tasks as string, {
  draws: values['clinc-draws'] as string,
  seed: values['clinc-seed'] as string,
});
await runTrial(values.label as string, tasks, runTask, (r) => {
  console.log(
    `\n${r.task} (${r.seconds.toFixed(0)} s; out of fold: product ${r.outOfFold.product.toFixed(4)}, fold models ${r.outOfFold.foldModels.toFixed(4)})`,
  );
  for (const which of ['product', 'soup', 'ensemble'] as const) {
    const { testNll, calibrated, ...figures } = r[which];
    console.log(
      `  ${which}: test NLL ${testNll.toFixed(3)}; calibrated: ${figuresLine(calibrated)}; ${figuresLine(figures)}`,
    );
  }
});
