/**
 * `clef-web train` on small files of the project's own (data/tasks: written by hand, the test
 * part written apart from the training part), against the baselines a careful engineer tries
 * first, fitted on the same training file: multinomial naive Bayes on word counts and logistic
 * regression on word and word-pair counts (tools/bench/baselines.ts). The model is trained by
 * the product (`trainDecisionModel` on the plain text-and-label file, defaults) and judged
 * through its package (onnxruntime-node), on the test file only.
 *
 *   npx tsx tools/bench/train-small.ts [--tasks helpdesk,failing,gate,urgency,bikeshop,devices,agentgate,bistro]
 *       [--out bench/work/small] [--label NAME] [--threads N]
 *
 * Per task: accuracy over the test file; helpdesk and bikeshop also in-scope accuracy (the
 * queues, `other` left out of the argmax) and the AUROC of P(other) (bistro too), bikeshop its
 * contrast items; the ops tasks, devices, agentgate and bistro accuracy per kind (plain,
 * negation, minimal pairs) and the share of minimal pairs right on both sides. Calibrated (the package's calibration.json): the share of all answers
 * wrong at confidence ≥ 0.9, and how often the 90% prediction set holds the label. Prints a table and writes JSON to bench/results.
 * Beside each baseline: the items only the model got right and those only the baseline did, with
 * the exact sign test on them (how far chance explains the difference in accuracy).
 * The ops tasks' fresh negation items (data/tasks/ops/fresh.jsonl, written after the scope layer
 * was settled), fresh minimal pairs (fresh-pairs.jsonl, written before any contrasting
 * training line) and fresh negation items (fresh-negations.jsonl, session 19) are reported on
 * rows of their own and left out of every other figure.
 *
 * `--with-pairs` adds data/tasks/ops/train-pairs.jsonl (contrasting pairs, 15 a question) to the
 * ops tasks' training files, data/tasks/bikeshop/train-contrast.jsonl (lines that set another
 * team's business aside) to bikeshop's, and data/tasks/bistro/train-order.jsonl (lines that name
 * the fault first) to bistro's: what a user's file that shows the contrasts it turns on gives.
 *
 * `--repeat N` writes each task's training file N times over, as a file whose lines repeat: the
 * copies must not be judged by models fitted on each other (src/build/train/repeats.ts).
 * `--mark` writes every copy after the first with a "!" at its end: near-copies, as a user's
 * file holds them ("refund please" and "refund please!").
 *
 * `--cap LABEL=N[,LABEL=N…]` keeps only the first N training lines of each named label: a file
 * short of some labels, as users' files often are (the test files stay whole).
 *
 * `--typos RATE` writes each test line's words of four letters or more with a typo at that rate
 * (seeded: a dropped, doubled or swapped letter, or a neighbour on the keyboard): what people
 * type, judged against a training file spelled right. The training file stays as it is.
 *
 * `--augment-typos RATE` (a trial) adds to each training file a copy of every line typed with
 * typos at that rate (seeded apart from the test's): the copies are lines like any other, so they
 * are judged out of fold beside their originals, and the card's figures lean on them.
 *
 * `--order auto|on|off` passes train's own option (default `auto`, what a user gets): `on` fits
 * the order layer whatever its trial says, to measure what it would give where it is left out.
 *
 * `--clinc-draws N [--clinc-intents 6] [--clinc-per-label 40] [--clinc-seed 1]` adds N small
 * files of the helpdesk's shape drawn from CLINC150, a task nobody here wrote (small-tasks.ts
 * loadClincDraw), each judged like helpdesk, and prints the means over the draws and in how many
 * the model met the issue's bar. `--tasks ''` runs the draws alone.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { fitNaiveBayes, naiveBayesChoice } from '../../src/build/train/baseline.js';
import { trainDecisionModel } from '../../src/node/train/train.js';
import { ORDER_MODES, type OrderMode } from '../../src/build/train/fit.js';
import { formatProgress } from '../../src/node/train/cli.js';
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { logisticBaseline } from './baselines.js';
import { formatP, type Disagreements } from '../../src/build/train/baseline.js';
import {
  apart,
  disagreements,
  loadClincDraw,
  loadTask,
  summarise,
  type Scored,
  type Task,
} from './small-tasks.js';
import { writeResults } from './results-file.js';
import { withTypos } from './typos.js';
import { Rng } from '../../src/calibrate/prng.js';

const { values } = parseArgs({
  options: {
    tasks: {
      type: 'string',
      default: 'helpdesk,failing,gate,urgency,bikeshop,devices,agentgate,bistro',
    },
    out: { type: 'string', default: 'bench/work/small' },
    label: { type: 'string', default: 'train-small' },
    'with-pairs': { type: 'boolean', default: false },
    repeat: { type: 'string', default: '1' },
    mark: { type: 'boolean', default: false },
    cap: { type: 'string', default: '' },
    typos: { type: 'string', default: '0' },
    'augment-typos': { type: 'string', default: '0' },
    order: { type: 'string', default: 'auto' },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-intents': { type: 'string', default: '6' },
    'clinc-per-label': { type: 'string', default: '40' },
    'clinc-seed': { type: 'string', default: '1' },
    threads: { type: 'string' },
  },
});
if (!ORDER_MODES.includes(values.order as OrderMode)) {
  throw new Error(`--order must be one of ${ORDER_MODES.join(', ')}, not "${values.order}"`);
}

async function runTask(task: Task) {
  const work = join(values.out as string, task.name);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const started = Date.now();
  const result = await trainDecisionModel({
    texts: task.train.map((l) => JSON.stringify({ text: l.text, label: l.label })).join('\n'),
    plain: { format: 'jsonl', labelColumn: 'label' },
    question: { [task.questionId]: task.question },
    name: task.name,
    out: join(work, 'package'),
    order: values.order as OrderMode,
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) }),
    onProgress: (p) => process.stderr.write(`${task.name}: ${formatProgress(p)}\n`),
  });
  const trainMs = Date.now() - started;
  const engine = await loadNodePackage(result.packageDir);
  const model: Scored[] = [];
  const calibrated = { wrongConfident: 0, covered: 0, setSize: 0, n: 0 };
  // Where the calibrated misses lie: per kind of test item (plain, negation, pair; helpdesk's
  // in-scope and out-of-scope lines are all "plain"), answers, wrong at ≥ 0.9, and not covered.
  const byKind: Record<string, { n: number; wrongConfident: number; uncovered: number }> = {};
  try {
    for (const line of task.test) {
      const request = {
        model: task.name,
        state: line.text,
        questions: { [task.questionId]: task.question },
      };
      const d = await engine.decide(request, { calibration: true });
      const answer = d.response.answers[task.questionId] as {
        choice: string;
        probabilities: Record<string, number>;
      };
      // The response rounds probabilities to 4 decimals: where the top two tie there, the
      // engine's choice says which won (it is the answer the user gets).
      const p = new Map(Object.entries(answer.probabilities));
      const top = Math.max(...p.values());
      if ([...p.values()].filter((v) => v === top).length > 1)
        p.set(answer.choice, (p.get(answer.choice) as number) + 1e-9);
      model.push({ p, label: line.label, line });
      const c = d.calibrated?.questions[0];
      if (c !== undefined && c.calibrated) {
        if (!apart(line)) {
          calibrated.n++;
          if (c.top !== line.label && c.confidence >= 0.9) calibrated.wrongConfident++;
          if (c.set.includes(line.label)) calibrated.covered++;
          calibrated.setSize += c.set.length;
        }
        const k = (byKind[line.kind ?? 'plain'] ??= { n: 0, wrongConfident: 0, uncovered: 0 });
        k.n++;
        if (c.top !== line.label && c.confidence >= 0.9) k.wrongConfident++;
        if (!c.set.includes(line.label)) k.uncovered++;
      }
    }
  } finally {
    await engine.dispose();
  }
  // The baselines, fitted on the same training file.
  const examples = parseLabelledExamples(
    task.train
      .map((l) =>
        JSON.stringify({
          request: { model: 'm', state: l.text, questions: { [task.questionId]: task.question } },
          labels: { [task.questionId]: l.label },
        }),
      )
      .join('\n'),
    { validateRequest: (b) => validateRequest(b) },
  );
  const nb = fitNaiveBayes(examples, task.questionId);
  if (nb === null) throw new Error('naive Bayes fitted on nothing');
  const nbScored: Scored[] = task.test.map((line) => {
    // Naive Bayes' own posterior, for the AUROC: softmax of its log scores.
    const choice = naiveBayesChoice(nb, line.text) as string;
    const scores = nbPosterior(nb, line.text);
    return { p: scores, label: line.label, line: { ...line, text: choice } };
  });
  const lr = logisticBaseline(task.train);
  const lrScored: Scored[] = task.test.map((line) => {
    const p = lr.probabilities(line.text);
    return { p: new Map(lr.labels.map((l, i) => [l, p[i] as number])), label: line.label, line };
  });
  return {
    task: task.name,
    trainExamples: task.train.length,
    testExamples: task.test.filter((l) => !apart(l)).length,
    trainMs,
    selection: result.selection,
    crossFit: {
      model: result.heldOut.questions[0]?.accuracy ?? null,
      naiveBayes: result.baseline.questions[0]?.accuracy ?? null,
      // The card's own logistic regression (its C chosen out of fold, not as `logisticC` was).
      logisticRegression: result.baseline.questions[0]?.logistic?.accuracy ?? null,
    },
    model: summarise(task, model),
    naiveBayes: summarise(task, nbScored),
    logisticRegression: summarise(task, lrScored),
    logisticC: lr.c,
    signTest: {
      naiveBayes: disagreements(model, nbScored),
      logisticRegression: disagreements(model, lrScored),
    },
    calibrated: {
      answers: calibrated.n,
      wrongAtConfidence90: calibrated.n === 0 ? null : calibrated.wrongConfident / calibrated.n,
      setCoverage90: calibrated.n === 0 ? null : calibrated.covered / calibrated.n,
      meanSetSize: calibrated.n === 0 ? null : calibrated.setSize / calibrated.n,
      byKind,
    },
  };
}

function nbPosterior(nb: NonNullable<ReturnType<typeof fitNaiveBayes>>, text: string) {
  const scores = nb.logPrior.slice();
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) ?? [];
  for (const w of words) {
    const l = nb.logLikelihood.get(w) ?? nb.logUnseen;
    for (let o = 0; o < scores.length; o++) scores[o] = (scores[o] as number) + (l[o] as number);
  }
  const max = Math.max(...scores);
  const e = scores.map((v) => Math.exp(v - max));
  const s = e.reduce((a, b) => a + b, 0);
  return new Map(nb.options.map((o, i) => [o, (e[i] as number) / s]));
}

const pct = (x: number | null | undefined) =>
  x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`;
const machine = { cpus: cpus().length, model: cpus()[0]?.model, loadBefore: loadavg() };
const results = [];
/** A whole number in [min, max] from an option, or a message naming the option. */
function wholeOption(name: string, min: number, max: number): number {
  const v = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(v) || v < min || v > max)
    throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
  return v;
}
/** The training file written this many times over (a file whose lines repeat). */
const repeat = wholeOption('repeat', 1, 10);
const mark = values.mark as boolean;
const repeated = (task: Task): Task =>
  repeat === 1
    ? task
    : {
        ...task,
        name: `${task.name}x${repeat}${mark ? '!' : ''}`,
        train: Array.from({ length: repeat }, (_, k) =>
          k > 0 && mark ? task.train.map((l) => ({ ...l, text: `${l.text}!` })) : task.train,
        ).flat(),
      };
/** `--cap`: the most training lines each named label keeps. */
const caps = new Map(
  (values.cap as string)
    .split(',')
    .filter((c) => c !== '')
    .map((c) => {
      const [label, n] = c.split('=');
      if (label === undefined || !/^\d+$/.test(n ?? ''))
        throw new Error(`--cap takes LABEL=N[,LABEL=N…], not ${JSON.stringify(c)}`);
      return [label, Number(n)] as const;
    }),
);
const capped = (task: Task): Task => {
  if (caps.size === 0) return task;
  const kept = new Map<string, number>();
  const train = task.train.filter((l) => {
    const cap = caps.get(l.label);
    const n = (kept.get(l.label) ?? 0) + 1;
    kept.set(l.label, n);
    return cap === undefined || n <= cap;
  });
  const name = `${task.name}-cap-${[...caps].map(([l, n]) => `${l}${n}`).join('-')}`;
  return { ...task, name, train };
};
const typoRate = Number(values.typos);
if (!(typoRate >= 0 && typoRate <= 1)) throw new Error('--typos must be a rate from 0 to 1');
const augmentRate = Number(values['augment-typos']);
if (!(augmentRate >= 0 && augmentRate <= 1))
  throw new Error('--augment-typos must be a rate from 0 to 1');
/** `--typos` on the test lines, `--augment-typos` on the training lines. */
const withTypoOptions = (task: Task): Task => augmented(typedTest(task));
const augmented = (task: Task): Task =>
  augmentRate === 0
    ? task
    : {
        ...task,
        name: `${task.name}-augmented-${augmentRate}`,
        train: [
          ...task.train,
          ...task.train.map((l, i) => ({
            ...l,
            text: withTypos(l.text, augmentRate, new Rng(1_000_003 + i)),
          })),
        ],
      };
const typedTest = (task: Task): Task =>
  typoRate === 0
    ? task
    : {
        ...task,
        name: `${task.name}-typos-${typoRate}`,
        test: task.test.map((l, i) => ({
          ...l,
          text: withTypos(l.text, typoRate, new Rng(i + 1)),
        })),
      };
const tasks: Array<() => Task> = (values.tasks as string)
  .split(',')
  .filter((name) => name !== '')
  .map(
    (name) => () =>
      withTypoOptions(repeated(capped(loadTask(name, values['with-pairs'] as boolean)))),
  );
// CLINC150 has 150 intents and 100 training queries each (and 100 out-of-scope ones).
const clincDraws = wholeOption('clinc-draws', 0, 1000);
const clinc = {
  intents: wholeOption('clinc-intents', 2, 150),
  perLabel: wholeOption('clinc-per-label', 1, 100),
  seed: wholeOption('clinc-seed', 0, 1_000_000),
};
for (let draw = 0; draw < clincDraws; draw++)
  tasks.push(() => withTypoOptions(loadClincDraw({ draw, ...clinc })));
for (const task of tasks) {
  const r = await runTask(task());
  results.push(r);
  const rows: Array<[string, (x: Record<string, number | null>) => number | null | undefined]> = [
    ['accuracy', (x) => x.accuracy],
    ['in-scope accuracy', (x) => x.inScopeAccuracy],
    ['AUROC P(other)', (x) => x.aurocOther],
    ['plain items', (x) => x.plainAccuracy],
    ['negation items', (x) => x.negationAccuracy],
    ['contrast items (bikeshop)', (x) => x.contrastAccuracy],
    ['minimal-pair items', (x) => x.pairAccuracy],
    ['pairs right on both sides', (x) => x.pairsBothRight],
    ['fresh negation items (written after the scope layer)', (x) => x.freshAccuracy],
    ['fresh negation items, session 19 (fresh-negations.jsonl)', (x) => x.freshNegationAccuracy],
    ['fresh minimal-pair items (fresh-pairs.jsonl)', (x) => x.freshPairAccuracy],
    ['fresh pairs right on both sides', (x) => x.freshPairsBothRight],
    ['sparing-verb pairs, session 21 (fresh-spare.jsonl)', (x) => x.freshSpareAccuracy],
    ['sparing-verb pairs right on both sides', (x) => x.freshSparePairsBothRight],
    ['negated-copula items, session 21 (fresh-copula.jsonl)', (x) => x.freshCopulaAccuracy],
    ['swapped pairs, session 24 (fresh-swaps.jsonl)', (x) => x.freshSwapAccuracy],
    ['swapped pairs right on both sides', (x) => x.freshSwapsBothRight],
    ['two-clause pairs, session 31 (fresh-binding.jsonl)', (x) => x.freshBindingAccuracy],
    ['two-clause pairs right on both sides', (x) => x.freshBindingPairsBothRight],
  ];
  console.log(`\n${r.task}: ${r.trainExamples} training, ${r.testExamples} test examples`);
  console.log('| measure | model | naive Bayes | logistic regression |');
  console.log('| --- | --- | --- | --- |');
  for (const [label, get] of rows) {
    const m = get(r.model);
    if (m === undefined) continue;
    const f = label.startsWith('AUROC')
      ? (x: number | null | undefined) => (x == null ? '—' : x.toFixed(3))
      : pct;
    console.log(
      `| ${label} | ${f(m)} | ${f(get(r.naiveBayes))} | ${f(get(r.logisticRegression))} |`,
    );
  }
  console.log(
    `calibrated: wrong at confidence ≥ 0.9 ${pct(r.calibrated.wrongAtConfidence90)} of answers, 90% sets cover ${pct(r.calibrated.setCoverage90)} (mean size ${r.calibrated.meanSetSize?.toFixed(2)}); cross-fit on the training file: model ${pct(r.crossFit.model)}, naive Bayes ${pct(r.crossFit.naiveBayes)}, logistic regression ${pct(r.crossFit.logisticRegression)}; trained in ${(r.trainMs / 1000).toFixed(1)} s`,
  );
  const alone = (d: Disagreements) =>
    `${d.modelOnly} to ${d.baselineOnly} (sign test p ${formatP(d.p)})`;
  console.log(
    `items only the model got right to those only the baseline did: naive Bayes ${alone(r.signTest.naiveBayes)}, logistic regression ${alone(r.signTest.logisticRegression)}`,
  );
  const kinds = Object.entries(r.calibrated.byKind).map(
    ([kind, k]) =>
      `${kind} ${k.n} answers: ${k.wrongConfident} wrong at ≥ 0.9, ${k.uncovered} outside the set`,
  );
  console.log(`calibrated, by kind of item: ${kinds.join('; ')}`);
}
const drawn = results.filter((r) => r.task.startsWith('clinc-draw-'));
if (drawn.length > 0) {
  // Over the CLINC150 draws: the mean of each figure, and in how many draws the model met the
  // issue's bar (naive Bayes + 3 points, and logistic regression) on in-scope accuracy.
  const mean = (get: (r: (typeof drawn)[number]) => number | null | undefined): number =>
    drawn.reduce((a, r) => a + (get(r) ?? NaN), 0) / drawn.length;
  const figure = (key: string) =>
    [
      mean((r) => r.model[key]),
      mean((r) => r.naiveBayes[key]),
      mean((r) => r.logisticRegression[key]),
    ] as const;
  console.log(`
CLINC150 draws (${drawn.length}), mean model / naive Bayes / logistic regression:`);
  for (const key of ['accuracy', 'inScopeAccuracy']) {
    const [m, nb, lr] = figure(key);
    console.log(`  ${key}: ${pct(m)} / ${pct(nb)} / ${pct(lr)}`);
  }
  const [am, anb, alr] = figure('aurocOther');
  console.log(`  aurocOther: ${am.toFixed(3)} / ${anb.toFixed(3)} / ${alr.toFixed(3)}`);
  for (const key of ['accuracy', 'inScopeAccuracy']) {
    const met = drawn.filter(
      (r) =>
        (r.model[key] as number) >= (r.naiveBayes[key] as number) + 0.03 &&
        (r.model[key] as number) >= (r.logisticRegression[key] as number),
    ).length;
    console.log(
      `  ${key} ≥ naive Bayes + 3 and ≥ logistic regression: ${met} of ${drawn.length} draws`,
    );
  }
  console.log(
    `  calibrated: wrong at ≥ 0.9 ${pct(mean((r) => r.calibrated.wrongAtConfidence90))}, sets cover ${pct(mean((r) => r.calibrated.setCoverage90))}`,
  );
}
writeResults(values.label as string, {
  machine,
  loadAfter: loadavg(),
  options: {
    tasks: values.tasks,
    order: values.order,
    withPairs: values['with-pairs'],
    repeat,
    mark,
    cap: values.cap,
    typos: typoRate,
    augmentTypos: augmentRate,
    clincDraws: values['clinc-draws'],
    clincIntents: values['clinc-intents'],
    clincPerLabel: values['clinc-per-label'],
    clincSeed: values['clinc-seed'],
    threads: values.threads ?? 'default',
  },
  results,
});
