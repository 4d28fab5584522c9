/**
 * A trial of the fit's fixed settings on the product's own model (dev only). `clef-web train`
 * cross-fits λ (select.ts CANDIDATES) but fixes the norm scale (how much the state's L2 length
 * normalises its evidence) at 0.3 and the bias weight β at 1. Here, on the product's own setup and
 * λ (its layers as `train` chose them), each other norm scale and β is cross-fitted on the same
 * folds (select.ts crossFit, seed 1), the best kept where it beats the product's out-of-fold loss,
 * and judged on the test files by the fitted function. `--lambdas` cross-fits other λ too (each
 * with every norm scale and β given), at the layers `train` chose at its own λ.
 *
 *   npx tsx tools/bench/settings-trial.ts [--tasks ...] [--norm-scales 0.1,0.3,1] [--biases 1]
 *     [--lambdas 0.003,0.001] [--clinc-draws N --clinc-seed S] [--label NAME]
 */
import { parseArgs } from 'node:util';
import { MAX_ITERATIONS } from '../../src/build/train/layer-settings.js';
import { fitModel } from '../../src/build/train/learner.js';
import { crossFit } from '../../src/build/train/select.js';
import type { Task } from './small-tasks.js';
import { figuresLine, numbers, productFit, runTrial, trialTasks } from './product-fit.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency,devices,bikeshop' },
    label: { type: 'string', default: 'settings-trial' },
    'norm-scales': { type: 'string', default: '0.1,0.3,1' },
    biases: { type: 'string', default: '1' },
    lambdas: { type: 'string', default: '' },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-seed': { type: 'string', default: '1' },
  },
});
const NORM_SCALES = numbers('norm-scales', values['norm-scales'] as string);
const BIASES = numbers('biases', values.biases as string);
/** Other λ to cross-fit; none (the product's own λ alone) by default. */
const LAMBDAS = values.lambdas === '' ? [] : numbers('lambdas', values.lambdas as string);

async function runTask(task: Task) {
  const t0 = Date.now();
  const fit = await productFit(task);
  const settings = fit.product.model.settings;
  const candidates = [settings.lambda, ...LAMBDAS]
    .flatMap((lambda) =>
      NORM_SCALES.flatMap((normScale) =>
        BIASES.map((bias) => ({ ...settings, lambda, normScale, bias })),
      ),
    )
    .filter(
      (c) =>
        c.lambda !== settings.lambda ||
        c.normScale !== settings.normScale ||
        c.bias !== settings.bias,
    );
  const cross = await crossFit(fit.product.setup, fit.train, {
    candidates,
    seed: 1,
    maxIterations: MAX_ITERATIONS,
  });
  for (const c of cross.scores)
    console.error(
      `${task.name}: λ ${c.settings.lambda}, norm scale ${c.settings.normScale}, β ${c.settings.bias}: out of fold ${c.logLoss.toFixed(4)}`,
    );
  const best = cross.scores.reduce((a, b) => (b.logLoss < a.logLoss ? b : a));
  const kept = best.logLoss < fit.outOfFold;
  const fitted = kept
    ? await fitModel(fit.product.setup, fit.train, {
        settings: best.settings,
        maxIterations: MAX_ITERATIONS,
      })
    : fit.product.model;
  return {
    task: task.name,
    seconds: (Date.now() - t0) / 1000,
    product: fit.summary(),
    trial: {
      kept,
      settings: best.settings,
      tries: cross.scores,
      outOfFold: best.logLoss,
      figures: fit.figures(fitted.params),
    },
  };
}

const tasks = trialTasks(values.tasks as string, {
  draws: values['clinc-draws'] as string,
  seed: values['clinc-seed'] as string,
});
await runTrial(values.label as string, tasks, runTask, (r) => {
  const s = r.trial.settings;
  console.log(
    `\n${r.task} (${r.seconds.toFixed(0)} s; ${r.trial.kept ? `λ ${s.lambda}, norm scale ${s.normScale}, β ${s.bias} kept` : 'the product kept'})`,
  );
  for (const which of ['product', 'trial'] as const)
    console.log(
      `  ${which}: out of fold ${r[which].outOfFold.toFixed(4)}; ${figuresLine(r[which].figures)}`,
    );
});
