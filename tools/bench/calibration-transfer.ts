/**
 * Where a small file's calibrated confident mistakes come from (dev only). `clef-web train`
 * calibrates a cross-fitted file on the out-of-fold answers of its five fold models, and ships
 * the calibration with the model fitted on every line. Two ways that could go wrong, measured on
 * the project's ops questions through the trainer's own function (modelLogits), at the layer and
 * λ `train` keeps on each:
 *
 *   1. The final model, fitted on a quarter more lines, is surer than the fold models whose
 *      answers calibrate it. Printed: its mean top-two logit margin on the test items over the
 *      fold models' (a ratio), and the temperature that fits the test items best for each,
 *      beside the one fitted out of fold; on every test item and on those that are not pairs.
 *   2. The calibration holds out a quarter of the answers for its own figures (calibrate/fit.ts).
 *      Printed: test.jsonl's share wrong at confidence ≥ 0.9 and the 90% sets' coverage, calibrated
 *      as `train` does (fitCalibration, seed 1) and on every out-of-fold answer.
 *   3. One temperature for every state, though the test files hold far more states of two clauses
 *      than the training files. Printed: the same figures with a temperature and threshold for
 *      each of two groups (group-conditional, "Mondrian", calibration): the states with a clause
 *      break or a negation cue, by the scope layer's marks (scope.ts), and the rest; each group
 *      fitted on its own out-of-fold answers, on all of them and as `train` does (a group too
 *      small for fitCalibration takes the whole file's).
 *
 *   npx tsx tools/bench/calibration-transfer.ts [--tasks failing,gate,urgency]
 *       [--layers failing=nominal-bare+pointer,gate=every-bare,urgency=every] [--lambda 10]
 *       [--label NAME]
 */
import { parseArgs } from 'node:util';
import { fitCalibration } from '../../src/calibrate/fit.js';
import { conformalThreshold, lacScore, predictionSet } from '../../src/calibrate/conformal.js';
import { meanNll, fitTemperature } from '../../src/calibrate/temperature.js';
import { argmax, scaledSoftmax } from '../../src/calibrate/softmax.js';
import { MAX_ITERATIONS, POINTER_PAIR_LAMBDA } from '../../src/build/train/layer-settings.js';
import { fitModel } from '../../src/build/train/learner.js';
import type { LayerChoice } from '../../src/build/train/learner-setup.js';
import type { ModelExample } from '../../src/build/train/model.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { pointerShape } from '../../src/build/train/pointer.js';
import { laterClauses, SCOPE_CUE, scopeKind, type ScopeCues } from '../../src/build/train/scope.js';
import { assignFolds, FOLDS } from '../../src/build/train/select.js';
import { loadTask, type Task } from './small-tasks.js';
import { prepareTrainerTask } from './trainer-task.js';
import { writeResults } from './results-file.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'failing,gate,urgency' },
    layers: {
      type: 'string',
      default: 'failing=nominal-bare+pointer,gate=every-bare,urgency=every',
    },
    lambda: { type: 'string', default: '10' },
    label: { type: 'string', default: 'calibration-transfer' },
  },
});
const layers = new Map(
  (values.layers as string).split(',').map((kv) => kv.split('=') as [string, string]),
);
const COVERAGE = 0.9;

/**
 * A state of two clauses or with a negation, by the scope layer's own marks (scope.ts, every
 * cue): a cue in it, or a word after a break (laterClauses), the template's tokens aside.
 */
function twoClausesOrCue(marks: Uint8Array, template: ReadonlySet<number>, e: ModelExample) {
  const state = e.bag.filter((t) => !template.has(t));
  return (
    state.some((t) => scopeKind(marks[t] as number) === SCOPE_CUE) ||
    laterClauses(marks, state).includes(1)
  );
}

interface Answer {
  logits: Float64Array;
  label: number;
}

const round = (v: number) => Number(v.toPrecision(3));
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const margin = (z: ArrayLike<number>) => {
  const s = Array.from(z).sort((a, b) => b - a);
  return (s[0] as number) - (s[1] as number);
};

/** The temperature with the lowest mean NLL on `answers`, on a fine grid (no bound hit here). */
function bestTemperature(answers: readonly Answer[]): number {
  let best = 1;
  let nll = Infinity;
  for (let t = 0.2; t < 8; t *= 1.01) {
    const v = meanNll(answers, t);
    if (v < nll) [best, nll] = [t, v];
  }
  return best;
}

/** Share of answers wrong at calibrated confidence ≥ 0.9, and the sets' coverage. */
function calibrated(answers: readonly Answer[], temperature: number, threshold: number) {
  let wrong = 0;
  let covered = 0;
  for (const a of answers) {
    const p = scaledSoftmax(a.logits, temperature);
    const top = argmax(p);
    if (top !== a.label && (p[top] as number) >= 0.9) wrong++;
    if (predictionSet(p, threshold).includes(a.label)) covered++;
  }
  return { wrongAt90: round(wrong / answers.length), coverage: round(covered / answers.length) };
}

async function run(task: Task, layerName: string) {
  const { encoded, encodedTest, setup: setupOf, options: optionIds } = prepareTrainerTask(task);
  const pointer = layerName.endsWith('+pointer');
  const cues = layerName.replace('+pointer', '');
  const layer: LayerChoice =
    cues === 'plain'
      ? null
      : pointer
        ? { cues: cues as ScopeCues, pairs: pointerShape(setupOf(null).classWidth) }
        : (cues as ScopeCues);
  const setup = setupOf(layer);
  const settings = {
    lambda: Number(values.lambda),
    normScale: 0.3,
    bias: 1,
    ...(pointer ? { pairLambda: POINTER_PAIR_LAMBDA } : {}),
  };
  const labelOf = (e: ModelExample) => (e.questions[0] as { label: number }).label;
  const fold = assignFolds(encoded, FOLDS, 1);
  const outOfFold: Answer[] = new Array(encoded.length);
  const foldTest: Answer[][] = [];
  for (let f = 0; f < FOLDS; f++) {
    const { params } = await fitModel(
      setup,
      encoded.filter((_, i) => fold[i] !== f),
      { settings, maxIterations: MAX_ITERATIONS },
    );
    encoded.forEach((e, i) => {
      if (fold[i] === f)
        outOfFold[i] = { logits: modelLogits(params, e)[0] as Float64Array, label: labelOf(e) };
    });
    foldTest.push(
      encodedTest.map((e) => ({
        logits: modelLogits(params, e)[0] as Float64Array,
        label: labelOf(e),
      })),
    );
  }
  const { params } = await fitModel(setup, encoded, { settings, maxIterations: MAX_ITERATIONS });
  const finalTest = encodedTest.map((e) => ({
    logits: modelLogits(params, e)[0] as Float64Array,
    label: labelOf(e),
  }));
  const fitted = fitTemperature(outOfFold).temperature;
  const kinds = task.test.map((l) => l.kind ?? '');
  const pick = <T>(answers: readonly T[], keep: (kind: string) => boolean) =>
    answers.filter((_, i) => keep(kinds[i] as string));
  const groups = {
    'every test item': () => true,
    'no pair items': (k: string) =>
      !k.includes('pair') && k !== 'fresh-swap' && k !== 'fresh-binding',
  };
  const transfer = Object.entries(groups).map(([group, keep]) => ({
    group,
    items: pick(finalTest, keep).length,
    marginFinalOverFolds: round(
      mean(pick(finalTest, keep).map((a) => margin(a.logits))) /
        mean(foldTest.flatMap((answers) => pick(answers, keep).map((a) => margin(a.logits)))),
    ),
    temperatureOutOfFold: round(fitted),
    bestTemperatureFinal: round(bestTemperature(pick(finalTest, keep))),
    bestTemperatureFolds: round(bestTemperature(foldTest.flatMap((a) => pick(a, keep)))),
  }));
  // test.jsonl's items (plain, negation, pair): the figures train-small.ts reports.
  const testFile = pick(finalTest, (k) => k === 'plain' || k === 'negation' || k === 'pair');
  // Calibrated as `train` calibrates a cross-fitted file (fitCalibration, seed 1).
  const likeTrain = (answers: readonly Answer[]) =>
    fitCalibration(
      answers.map((a) => ({
        questionId: task.questionId,
        type: 'choice' as const,
        optionIds: [...optionIds],
        logits: Array.from(a.logits),
        label: a.label,
      })),
      { coverage: COVERAGE, seed: 1 },
    ).calibration.types.choice;
  const asTrainDoes = likeTrain(outOfFold);
  const everyAnswer = conformalThreshold(
    outOfFold.map((a) => lacScore(scaledSoftmax(a.logits, fitted), a.label)),
    COVERAGE,
  );
  const calibration = {
    asTrainDoes: {
      temperature: round(asTrainDoes?.temperature ?? NaN),
      ...calibrated(testFile, asTrainDoes?.temperature ?? 1, asTrainDoes?.threshold ?? 1),
    },
    onEveryAnswer: {
      temperature: round(fitted),
      ...calibrated(testFile, fitted, everyAnswer),
    },
  };
  // 3. Group-conditional: each group's own temperature and threshold.
  const { scopeMarks: marks, frozen } = setupOf('every');
  const inGroup = (e: ModelExample) => (twoClausesOrCue(marks as Uint8Array, frozen, e) ? 0 : 1);
  const trainGroup = encoded.map(inGroup);
  const testGroup = pick(encodedTest.map(inGroup), (k) =>
    ['plain', 'negation', 'pair'].includes(k),
  );
  const groupFits = [0, 1].map((g) => {
    const answers = outOfFold.filter((_, i) => trainGroup[i] === g);
    const t = fitTemperature(answers).temperature;
    const every = {
      temperature: t,
      threshold: conformalThreshold(
        answers.map((a) => lacScore(scaledSoftmax(a.logits, t), a.label)),
        COVERAGE,
      ),
    };
    let own = {
      temperature: asTrainDoes?.temperature ?? 1,
      threshold: asTrainDoes?.threshold ?? 1,
    };
    let ownFit = false;
    try {
      const fit = likeTrain(answers);
      if (fit !== undefined) {
        own = fit;
        ownFit = true;
      }
    } catch {
      // Too few answers for a calibration of its own: the whole file's.
    }
    return { answers: answers.length, every, likeTrain: own, ownFit };
  });
  const byGroup = (
    pickFit: (g: (typeof groupFits)[number]) => { temperature: number; threshold: number },
  ) => {
    const parts = [0, 1].map((g) => {
      const items = testFile.filter((_, i) => testGroup[i] === g);
      const fit = pickFit(groupFits[g] as (typeof groupFits)[number]);
      return { items, figures: calibrated(items, fit.temperature, fit.threshold) };
    });
    const n = testFile.length;
    const sum = (k: 'wrongAt90' | 'coverage') =>
      round(parts.reduce((a, p) => a + p.figures[k] * p.items.length, 0) / n);
    return { wrongAt90: sum('wrongAt90'), coverage: sum('coverage') };
  };
  const mondrian = {
    statesOfTwoClausesOrACue: {
      training: groupFits[0]?.answers,
      test: testGroup.filter((g) => g === 0).length,
      temperatures: groupFits.map((g) => round(g.every.temperature)),
    },
    onEveryAnswer: byGroup((g) => g.every),
    asTrainDoes: { ownFits: groupFits.map((g) => g.ownFit), ...byGroup((g) => g.likeTrain) },
  };
  return { task: task.name, layer: layerName, transfer, calibration, groups: mondrian };
}

const results = [];
for (const name of (values.tasks as string).split(',')) {
  const layer = layers.get(name) ?? 'plain';
  const r = await run(loadTask(name), layer);
  console.log(`\n${r.task} (${layer}, λ ${values.lambda as string})`);
  for (const t of r.transfer) console.log(JSON.stringify(t));
  console.log(`calibrated, test.jsonl: ${JSON.stringify(r.calibration)}`);
  console.log(`by group: ${JSON.stringify(r.groups)}`);
  results.push(r);
}
writeResults(values.label as string, { results });
