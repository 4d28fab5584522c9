/**
 * What the word pairs add to the logistic-regression baseline (dev only): on each task, logistic
 * regression on word and word-pair counts (the baseline train-small.ts reports) against the same
 * on word counts alone, both with C cross-validated (baselines.ts), judged on the test file with
 * train-small.ts's figures. No model of ours is fitted.
 *
 *   npx tsx tools/bench/baseline-features.ts [--tasks ...] [--clinc-draws N --clinc-seed S] [--label NAME]
 */
import { parseArgs } from 'node:util';
import { logisticBaseline, wordFeatures, wordPairFeatures } from './baselines.js';
import { figuresLine, runTrial, trialTasks } from './product-fit.js';
import { summarise, type Scored, type Task } from './small-tasks.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency,devices,bikeshop,agentgate' },
    label: { type: 'string', default: 'baseline-features' },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-seed': { type: 'string', default: '1' },
  },
});

function judged(task: Task, featurize: typeof wordFeatures) {
  const lr = logisticBaseline(task.train, featurize);
  const scored: Scored[] = task.test.map((line) => {
    const p = lr.probabilities(line.text);
    return { p: new Map(lr.labels.map((l, i) => [l, p[i] as number])), label: line.label, line };
  });
  return { c: lr.c, figures: summarise(task, scored) };
}

const tasks = trialTasks(values.tasks as string, {
  draws: values['clinc-draws'] as string,
  seed: values['clinc-seed'] as string,
});
await runTrial(
  values.label as string,
  tasks,
  (task) => ({
    task: task.name,
    wordsAndPairs: judged(task, wordPairFeatures),
    words: judged(task, wordFeatures),
  }),
  (r) => {
    console.log(`\n${r.task}`);
    for (const which of ['wordsAndPairs', 'words'] as const)
      console.log(`  ${which} (C ${r[which].c}): ${figuresLine(r[which].figures)}`);
  },
);
