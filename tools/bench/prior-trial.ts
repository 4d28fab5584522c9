/**
 * A trial of a design on the product's own model (dev only): "priors from count statistics". The
 * word weights u (features.ts: θ_t = idf(w) · u[w] + its n-grams) are pulled toward γ times naive
 * Bayes' log-probability ratios on the same training part, divided by idf so that θ gets γ · NB,
 * instead of toward zero; the fit starts there. Nothing in src/ changes: the tool adds
 * λ(|u − c|² − |u|²) to the product's own objective (learner.ts fitObjective, whose first block
 * is u). On the product's own setup (its layers as `clef-web train` chose them), γ chosen by the
 * same 5-fold cross-fit (the same folds), kept where it beats the product's out-of-fold loss,
 * judged on the test files by the fitted function.
 *
 *   npx tsx tools/bench/prior-trial.ts [--tasks ...] [--with-pairs] [--priors 0.001,0.003,0.01]
 *     [--clinc-draws N --clinc-seed S] [--label NAME]
 */
import { parseArgs } from 'node:util';
import { MAX_ITERATIONS } from '../../src/build/train/layer-settings.js';
import { featureIdf } from '../../src/build/train/features.js';
import { minimizeAsync } from '../../src/build/train/lbfgs.js';
import { fitObjective, type FitSettings } from '../../src/build/train/learner.js';
import type { LearnerSetup } from '../../src/build/train/learner-setup.js';
import type { ModelExample } from '../../src/build/train/model.js';
import { log } from '../../src/build/train/portable-math.js';
import { scopedBag } from '../../src/build/train/scope.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { assignFolds, FOLDS, score } from '../../src/build/train/select.js';
import type { Task } from './small-tasks.js';
import { figuresLine, numbers, productFit, runTrial, trialTasks } from './product-fit.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency,devices,bikeshop' },
    label: { type: 'string', default: 'prior-trial' },
    'with-pairs': { type: 'boolean', default: false },
    priors: { type: 'string', default: '0.001,0.003,0.01' },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-seed': { type: 'string', default: '1' },
  },
});

const PRIORS = numbers('priors', values.priors as string);

/**
 * Naive Bayes' weights per word feature and class dim: log p(w | o) minus its mean over the
 * options, add-one smoothing over the words the part holds, every word of the state counted (the
 * baseline's way, negated words too). One question a file (these tasks).
 */
function naiveBayes(setup: LearnerSetup, examples: readonly ModelExample[]): Float64Array {
  const { features, classWidth: width } = setup;
  const counts = new Float64Array(features.words * width);
  const totals = new Float64Array(width);
  const seen = new Set<number>();
  for (const e of examples) {
    const q = e.questions[0];
    if (q === undefined || q.label < 0) continue;
    for (const t of e.bag) {
      const w = features.word[t] as number;
      if (w < 0) continue;
      seen.add(w);
      counts[w * width + q.label] = (counts[w * width + q.label] as number) + 1;
      totals[q.label] = (totals[q.label] as number) + 1;
    }
  }
  const out = new Float64Array(features.words * width);
  for (const w of seen) {
    let mean = 0;
    for (let d = 0; d < width; d++) {
      const lp = log(((counts[w * width + d] as number) + 1) / ((totals[d] as number) + seen.size));
      out[w * width + d] = lp;
      mean += lp / width;
    }
    for (let d = 0; d < width; d++) out[w * width + d] = (out[w * width + d] as number) - mean;
  }
  return out;
}

/** The product's fit with u pulled toward γ · NB / idf (γ 0: the product's fit itself). */
async function fitWithPrior(
  setup: LearnerSetup,
  train: readonly ModelExample[],
  settings: FitSettings,
  prior: number,
) {
  const fit = fitObjective(setup, train, { settings });
  try {
    const marks = setup.scopeMarks;
    const bags = train.map((e) => (marks === undefined ? e.bag : scopedBag(marks, e.bag)));
    const idf = featureIdf(setup.features, bags);
    const width = setup.classWidth;
    const center = naiveBayes(setup, train).map(
      (v, i) => (prior * v) / (idf.word[Math.floor(i / width)] as number),
    );
    const lambda = settings.lambda;
    const c2 = center.reduce((a, v) => a + v * v, 0);
    const start = fit.start.slice();
    start.set(center, 0);
    const result = await minimizeAsync(
      async (x, grad) => {
        let value = await fit.objective(x, grad);
        for (let i = 0; i < center.length; i++) {
          value -= 2 * lambda * (x[i] as number) * (center[i] as number);
          grad[i] = (grad[i] as number) - 2 * lambda * (center[i] as number);
        }
        return value + lambda * c2;
      },
      start,
      { maxIterations: MAX_ITERATIONS },
    );
    return fit.model(result);
  } finally {
    fit.close();
  }
}

/** 5-fold cross-fit of γ on the product's folds (select.ts assignFolds, seed 1). */
async function crossFitPrior(
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  settings: FitSettings,
  prior: number,
) {
  const k = Math.min(FOLDS, examples.length);
  const fold = assignFolds(examples, k, 1);
  const outOfFold = new Array<Float64Array[]>(examples.length);
  for (let f = 0; f < k; f++) {
    const fitted = await fitWithPrior(
      setup,
      examples.filter((_, i) => fold[i] !== f),
      settings,
      prior,
    );
    examples.forEach((e, i) => {
      if (fold[i] === f) outOfFold[i] = modelLogits(fitted.params, e);
    });
  }
  return score(examples, outOfFold);
}

async function runTask(task: Task) {
  const t0 = Date.now();
  const fit = await productFit(task);
  const settings = fit.product.model.settings;
  const tries = [];
  for (const prior of PRIORS) {
    const scored = await crossFitPrior(fit.product.setup, fit.train, settings, prior);
    tries.push({ prior, logLoss: scored.logLoss, accuracy: scored.accuracy });
    console.error(
      `${task.name}: γ ${prior}: out of fold ${scored.logLoss.toFixed(4)} (${(100 * scored.accuracy).toFixed(1)}%)`,
    );
  }
  const best = tries.reduce((a, b) => (b.logLoss < a.logLoss ? b : a));
  const fitted = await fitWithPrior(fit.product.setup, fit.train, settings, best.prior);
  return {
    task: task.name,
    seconds: (Date.now() - t0) / 1000,
    product: fit.summary(),
    prior: {
      kept: best.logLoss < fit.outOfFold,
      prior: best.prior,
      tries,
      outOfFold: best.logLoss,
      figures: fit.figures(fitted.params),
    },
  };
}

const tasks = trialTasks(values.tasks as string, {
  withPairs: values['with-pairs'],
  draws: values['clinc-draws'] as string,
  seed: values['clinc-seed'] as string,
});
await runTrial(values.label as string, tasks, runTask, (r) => {
  console.log(
    `\n${r.task} (${r.seconds.toFixed(0)} s; prior ${r.prior.kept ? 'kept' : 'not kept'})`,
  );
  for (const which of ['product', 'prior'] as const) {
    console.log(
      `  ${which}: out of fold ${r[which].outOfFold.toFixed(4)}; ${figuresLine(r[which].figures)}`,
    );
  }
});
