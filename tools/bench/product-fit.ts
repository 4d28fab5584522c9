/**
 * A small task fitted as `clef-web train` fits it, for the trials of a change around the
 * product's own fit (dev only): the task's lines as labelled requests with its test file as the
 * held-out part, `train`'s own choice (fit.ts fitPhase: its layers and settings by 5-fold
 * cross-fitting, seed 1), that choice's out-of-fold loss, and the test file judged by a fitted
 * function with train-small.ts's figures.
 */
import { applyCalibration } from '../../src/calibrate/apply.js';
import { fitCalibration } from '../../src/calibrate/fit.js';
import { scaledSoftmax } from '../../src/calibrate/softmax.js';
import type { CalibrationFile } from '../../src/calibrate/types.js';
import { promptOptions } from '../../src/clef/prompt.js';
import { RMS_EPS } from '../../src/build/train/construct.js';
import { fitPhase } from '../../src/build/train/fit.js';
import type { ModelExample, ModelParams } from '../../src/build/train/model.js';
import { DEFAULT_CONTEXT } from '../../src/build/train/options.js';
import { prepare } from '../../src/build/train/prepare.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { score } from '../../src/build/train/select.js';
import { writeResults } from './results-file.js';
import {
  apart,
  loadClincDraw,
  loadTask,
  summarise,
  type Scored,
  type Task,
  type TaskLine,
} from './small-tasks.js';

function examplesOf(task: Task, lines: readonly TaskLine[]): string {
  return lines
    .map((l) =>
      JSON.stringify({
        request: {
          model: task.name,
          state: l.text,
          questions: { [task.questionId]: task.question },
        },
        labels: { [task.questionId]: l.label },
      }),
    )
    .join('\n');
}

export async function productFit(task: Task) {
  const prepared = prepare(
    {
      examples: examplesOf(task, task.train),
      heldOutExamples: examplesOf(task, task.test),
      out: '',
    },
    1,
    DEFAULT_CONTEXT,
    0.9,
    () => {},
    () => {},
  );
  const train = { examples: prepared.trainExamples, encoded: prepared.train };
  const heldOut = { examples: prepared.heldOutExamples, encoded: prepared.heldOut };
  const product = await fitPhase(prepared.data, prepared.questions, train, heldOut, {
    seed: 1,
    rmsEps: RMS_EPS,
  });
  const sel = product.selection;
  /** Each test line's probabilities under a function giving its logits. */
  const scoredFrom = (logitsOf: (e: ModelExample) => Float64Array) =>
    heldOut.encoded.map((e, i): Scored => {
      const p = scaledSoftmax(logitsOf(e));
      const q = (heldOut.examples[i] as (typeof heldOut.examples)[number]).valid.questions[0];
      const ids = promptOptions(q as Parameters<typeof promptOptions>[0]).map(([id]) => id);
      const line = task.test[i] as TaskLine;
      return {
        p: new Map(ids.map((id, o) => [id, p[o] as number])),
        label: line.label,
        line,
      };
    });
  /** The test file's figures (small-tasks.ts summarise) of a function giving each line's logits. */
  const figuresFrom = (logitsOf: (e: ModelExample) => Float64Array) =>
    summarise(task, scoredFrom(logitsOf));
  /** The test file's figures of the function with these parameters. */
  const figures = (params: ModelParams) =>
    figuresFrom((e) => modelLogits(params, e)[0] as Float64Array);
  const optionIds = (examples: typeof heldOut.examples, i: number) =>
    promptOptions(
      (examples[i] as (typeof examples)[number]).valid.questions[0] as Parameters<
        typeof promptOptions
      >[0],
    ).map(([id]) => id);
  /**
   * The calibration `train` fits on out-of-fold logits (its coverage 0.9, seed 1 and temperature
   * floor 1), from these logits of the training lines.
   */
  const calibrationFrom = (logits: readonly Float64Array[][]) =>
    fitCalibration(
      train.examples.map((_, i) => {
        const ids = optionIds(train.examples, i);
        const label = (train.encoded[i] as ModelExample).questions[0]?.label as number;
        return {
          questionId: task.questionId,
          type: 'choice' as const,
          optionIds: ids,
          logits: Array.from((logits[i] as Float64Array[])[0] as Float64Array),
          label,
        };
      }),
      { coverage: 0.9, seed: 1, minTemperature: 1 },
    ).calibration;
  /** Over the test lines train-small.ts counts: wrong at ≥ 0.9, 90% sets' cover and mean size. */
  const calibratedFrom = (
    calibration: CalibrationFile,
    logitsOf: (e: ModelExample) => Float64Array,
  ) => {
    let [wrong, covered, size, n] = [0, 0, 0, 0];
    heldOut.encoded.forEach((e, i) => {
      const line = task.test[i] as TaskLine;
      if (apart(line)) return;
      const c = applyCalibration(calibration, 'choice', logitsOf(e));
      const ids = optionIds(heldOut.examples, i);
      const label = ids.indexOf(line.label);
      if (c.top !== label && c.confidence >= 0.9) wrong++;
      if (c.set.includes(label)) covered++;
      size += c.set.length;
      n++;
    });
    return { wrongAt90: wrong / n, setsCover: covered / n, meanSetSize: size / n };
  };
  const outOfFold = score(train.encoded, product.outOfFold as Float64Array[][]).logLoss;
  const layers = {
    scope: sel.scopeCues,
    pointer: sel.pointer,
    clauseWeight: sel.clauseWeight,
    order: sel.order,
  };
  return {
    product,
    train: train.encoded,
    outOfFold,
    figures,
    figuresFrom,
    scoredFrom,
    calibrationFrom,
    calibratedFrom,
    /** What the results file keeps of the product's own fit. */
    summary: () => ({
      layers,
      settings: product.model.settings,
      outOfFold,
      figures: figures(product.model.params),
    }),
  };
}

const pct = (x: unknown): string =>
  typeof x === 'number' ? (x > 1 ? x.toFixed(3) : `${(100 * x).toFixed(1)}%`) : '—';

/**
 * A trial's run: `run` on each task in turn, each result printed as it comes, then all of them
 * written as bench/results/<today>-<label>.json.
 */
export async function runTrial<R>(
  label: string,
  tasks: ReadonlyArray<() => Task>,
  run: (task: Task) => Promise<R> | R,
  print: (result: R) => void,
): Promise<void> {
  const results: R[] = [];
  for (const load of tasks) {
    const result = await run(load());
    results.push(result);
    print(result);
  }
  writeResults(label, { results });
}

/** One line of figures, for a trial's console. */
export function figuresLine(figures: Record<string, number | null>): string {
  return Object.entries(figures)
    .map(([k, v]) => `${k} ${/Size$/.test(k) && typeof v === 'number' ? v.toFixed(2) : pct(v)}`)
    .join(', ');
}

/** A flag's comma-separated numbers; stops, naming the flag, at one that is not a number ≥ 0. */
export function numbers(flag: string, text: string): number[] {
  const out = text.split(',').map(Number);
  if (text === '' || out.some((v) => !Number.isFinite(v) || v < 0))
    throw new Error(`--${flag} takes numbers ≥ 0, comma-separated; got "${text}"`);
  return out;
}

/**
 * A trial's tasks: the named small tasks, then `draws` small files of the helpdesk's shape drawn
 * from CLINC150 (train-small.ts --clinc-draws), each loaded when its turn comes.
 */
export function trialTasks(
  names: string,
  options: { withPairs?: boolean; draws: string; seed: string },
): Array<() => Task> {
  const [draws, seed] = [
    numbers('clinc-draws', options.draws),
    numbers('clinc-seed', options.seed),
  ];
  if (
    draws.length !== 1 ||
    seed.length !== 1 ||
    !Number.isInteger(draws[0]) ||
    !Number.isInteger(seed[0])
  )
    throw new Error('--clinc-draws and --clinc-seed take one whole number each');
  const tasks = names
    .split(',')
    .filter((n) => n !== '')
    .map((name) => () => loadTask(name, options.withPairs));
  for (let draw = 0; draw < (draws[0] as number); draw++)
    tasks.push(() => loadClincDraw({ draw, intents: 6, perLabel: 40, seed: seed[0] as number }));
  return tasks;
}
