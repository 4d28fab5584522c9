/**
 * Choosing the fit's settings and knowing how the model does on text it never saw, without
 * spending examples: K-fold cross-fitting on the training part. Every candidate setting is fitted
 * on K−1 folds and scored on the fold it did not see; the setting with the lowest out-of-fold
 * cross-entropy wins, and its out-of-fold logits are what calibration is fitted on when the
 * held-out part is too small (a small file: every example is then both trained on, in the final
 * fit, and held out, in its fold).
 */
import { Rng } from '../../calibrate/prng.js';
import {
  fitModel,
  lowestStart,
  startSeeds,
  type FitOptions,
  type FitSettings,
  type FittedModel,
} from './learner.js';
import type { LearnerSetup } from './learner-setup.js';
import { shardCount, type ShardPool } from './shards.js';
import type { ModelExample, ModelParams } from './model.js';
import { modelLogits } from './readout.js';
import { exp, log } from './portable-math.js';

/** Folds of the cross-fit. */
export const FOLDS = 5;

/**
 * The candidate settings: λ is cross-fitted; the norm scale and the bias weight are fixed, as
 * cross-fitting them too predicted better out of fold but answered no better on text never seen
 * (docs/benchmarks.md, "The fit's fixed settings").
 */
export const DEFAULT_SETTINGS: Readonly<FitSettings> = Object.freeze({
  lambda: 0.1,
  normScale: 0.3,
  bias: 1,
});

export const CANDIDATES: readonly FitSettings[] = Object.freeze([
  { lambda: 0.01, normScale: 0.3, bias: 1 },
  { lambda: 0.1, normScale: 0.3, bias: 1 },
  { lambda: 1, normScale: 0.3, bias: 1 },
]);

export interface CandidateScore {
  settings: FitSettings;
  /** Mean out-of-fold cross-entropy of the labelled questions. */
  logLoss: number;
  /** Share of labelled questions whose top option is the label, out of fold. */
  accuracy: number;
  /** Folds it was judged on, when not all of them (the order layer's one-fold trial). */
  folds?: number;
  /**
   * The layer it was fitted with beside the bag, if any: `scope` (every cue), `scope-nominal`
   * (nominal cues only), `scope-every-bare` and `scope-nominal-bare` (their cues left out too),
   * each perhaps `+pointer`, or `order`.
   */
  layer?: ScopeLayerName | `${ScopeLayerName}+pointer` | 'order';
  /** The clause weight it was fitted with (model.ts clauseWeight), if any. */
  clauseWeight?: number;
}

export interface CrossFit {
  best: FitSettings;
  scores: CandidateScore[];
  /** Each training example's out-of-fold logits (per question, option order) under `best`. */
  outOfFold: Float64Array[][];
}

/**
 * Fold of each example: stratified by its first labelled option, seeded. With `firstCopy`
 * (repeats.ts firstCopies), only the first of the examples whose states read the same is dealt a
 * fold, and its copies take the same one: none is judged by a model fitted on another.
 */
export function assignFolds(
  examples: readonly ModelExample[],
  k: number,
  seed: number,
  firstCopy?: readonly number[],
): number[] {
  const groups = new Map<string, number[]>();
  examples.forEach((e, i) => {
    if (firstCopy !== undefined && firstCopy[i] !== i) return;
    const q = e.questions.findIndex((x) => x.label >= 0);
    const key = q < 0 ? '' : `${q}:${(e.questions[q] as { label: number }).label}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push(i);
  });
  const rng = new Rng(seed ^ 0x5bd1e995);
  const fold = new Array<number>(examples.length).fill(0);
  let next = 0;
  for (const key of [...groups.keys()].sort()) {
    const members = [...(groups.get(key) as number[])];
    for (let i = members.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [members[i], members[j]] = [members[j] as number, members[i] as number];
    }
    // Round-robin continues across labels, so small labels do not all start at fold 0.
    for (const m of members) fold[m] = next++ % k;
  }
  firstCopy?.forEach((first, i) => (fold[i] = fold[first] as number));
  return fold;
}

/** One fit of a cross-fit: a candidate's settings, fitted on every fold but `fold`. */
export interface FoldJob {
  settings: FitSettings;
  fold: number;
}

/**
 * Runs a cross-fit's fits at once, or a model's starts (on the trainer's thread pool,
 * thread-pool.ts). Each fit is the one this thread would make (fitModel at `maxIterations`, one
 * start, no shards), so its answers are the same bits wherever it ran.
 */
export interface FoldRunner {
  fitFolds(
    setup: LearnerSetup,
    examples: readonly ModelExample[],
    /** Fold of each example (assignFolds). */
    folds: readonly number[],
    jobs: readonly FoldJob[],
    options: {
      maxIterations: number;
      /** After each job's fit, with its index: in the order they finish. */
      onFitted: (job: number) => void;
      /** Each L-BFGS iteration of the earliest job still under way. */
      onIteration?: (iteration: number) => void;
    },
  ): Promise<Float64Array[][][]>;
  /**
   * fitModel on every example from each of `seeds`, one start each, at once: the models in seed
   * order (fitModel's `starts` keeps the one of lowest objective: lowestStart).
   */
  fitStarts(
    setup: LearnerSetup,
    examples: readonly ModelExample[],
    settings: FitSettings,
    seeds: readonly number[],
    options: {
      maxIterations: number;
      /** After each start's fit, with its index: in the order they finish. */
      onFitted: (start: number) => void;
      /** Each L-BFGS iteration of the earliest start still under way. */
      onIteration?: (iteration: number) => void;
    },
  ): Promise<FittedModel[]>;
}

/** Threads for the fits' shards, and where it can, for a cross-fit's fits at once. */
export type TrainPool = ShardPool & Partial<FoldRunner>;

export interface CrossFitOptions {
  candidates?: readonly FitSettings[];
  folds?: number;
  /** The fold of each example, where the caller dealt them (else assignFolds with `seed`). */
  foldOf?: readonly number[];
  seed: number;
  maxIterations: number;
  /** After each fold of each candidate: done and total fits. */
  onFit?: (done: number, total: number) => void;
  /** Each L-BFGS iteration of the fit under way. */
  onIteration?: (iteration: number) => void;
  /**
   * Threads for the fits' shards (learner.ts FitOptions.pool); where each fit has one shard (a
   * small file), for the cross-fit's fits at once instead.
   */
  pool?: TrainPool;
}

export async function crossFit(
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  options: CrossFitOptions,
): Promise<CrossFit> {
  const candidates = options.candidates ?? CANDIDATES;
  const k = Math.min(options.folds ?? FOLDS, examples.length);
  const fold = options.foldOf ?? assignFolds(examples, k, options.seed);
  const total = candidates.length * k;
  let done = 0;
  const jobs = candidates.flatMap((settings) =>
    Array.from({ length: k }, (_, f): FoldJob => ({ settings, fold: f })),
  );
  const answers = await foldAnswers(setup, examples, fold, jobs, {
    ...options,
    onFitted: () => options.onFit?.(++done, total),
  });
  const results = candidates.map((settings, c) => {
    const outOfFold = new Array<Float64Array[]>(examples.length);
    for (let f = 0; f < k; f++) {
      const held = answers[c * k + f] as Float64Array[][];
      let next = 0;
      examples.forEach((_, i) => {
        if (fold[i] === f) outOfFold[i] = held[next++] as Float64Array[];
      });
    }
    return { settings, outOfFold, ...score(examples, outOfFold) };
  });
  const best = results.reduce((a, b) => (b.logLoss < a.logLoss ? b : a));
  return {
    best: best.settings,
    scores: results.map(({ settings, logLoss, accuracy }) => ({ settings, logLoss, accuracy })),
    outOfFold: best.outOfFold,
  };
}

/**
 * Each job's answers (logits) for the examples of the fold it leaves out, in example order: on
 * the pool's threads at once where every fit has one shard (more shards already use them), else
 * one fit after another on this thread.
 */
async function foldAnswers(
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  fold: readonly number[],
  jobs: readonly FoldJob[],
  options: CrossFitOptions & { onFitted: () => void },
): Promise<Float64Array[][][]> {
  const { pool, maxIterations, onIteration } = options;
  const runner = jobs.length > 1 ? foldRunnerFor(pool, setup, examples, fold) : null;
  if (runner !== null)
    return runner.fitFolds(setup, examples, fold, jobs, {
      maxIterations,
      onFitted: options.onFitted,
      onIteration,
    });
  const answers: Float64Array[][][] = [];
  for (const { settings, fold: f } of jobs) {
    const train = examples.filter((_, i) => fold[i] !== f);
    const fitted = await fitModel(setup, train, { settings, maxIterations, onIteration, pool });
    answers.push(heldAnswers(fitted.params, examples, fold, f));
    options.onFitted();
  }
  return answers;
}

/**
 * The pool as a FoldRunner for this setup's cross-fit, where it is one and every fit of it has one
 * shard (a fit of more shards runs them on the threads itself); else null.
 */
export function foldRunnerFor(
  pool: TrainPool | undefined,
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  fold: readonly number[],
): Pick<FoldRunner, 'fitFolds'> | null {
  // The largest training part of a fit: every example but the smallest fold's.
  const k = Math.max(...fold) + 1;
  const smallest = Math.min(
    ...Array.from({ length: k }, (_, f) => fold.filter((x) => x === f).length),
  );
  return runsWhole(pool, 'fitFolds', setup, examples.length - smallest) ? pool : null;
}

/**
 * Whether the pool runs fits of `count` examples whole, one a thread, through `method`: it has
 * that method and two threads or more, and such a fit has one shard (a fit of more runs its shards
 * on the threads).
 */
function runsWhole<M extends keyof FoldRunner>(
  pool: TrainPool | undefined,
  method: M,
  setup: LearnerSetup,
  count: number,
): pool is TrainPool & Pick<FoldRunner, M> {
  return (
    pool?.[method] !== undefined &&
    pool.threads >= 2 &&
    shardCount(count, setup.shape.pairs !== undefined) === 1
  );
}

/**
 * fitModel with its `starts`, the starts at once on the pool's threads where it is a FoldRunner of
 * two threads or more and the fit has one shard: each start is the one fitModel would make here,
 * and the same one is kept (lowestStart), so the model is the same bits.
 */
export async function fitStarts(
  setup: LearnerSetup,
  examples: readonly ModelExample[],
  options: Omit<FitOptions, 'onIteration' | 'pool'> & {
    starts: number;
    pool?: TrainPool;
    /** Each iteration of the earliest start under way. */
    onIteration?: (iteration: number) => void;
  },
): Promise<FittedModel> {
  const { pool, starts } = options;
  if (starts < 2 || !runsWhole(pool, 'fitStarts', setup, examples.length))
    return fitModel(setup, examples, options);
  const models = await pool.fitStarts(
    setup,
    examples,
    options.settings,
    startSeeds(starts, options.seed),
    {
      maxIterations: options.maxIterations,
      onFitted: (s) => options.onStartFitted?.(s),
      onIteration: options.onIteration,
    },
  );
  return lowestStart(models) as FittedModel;
}

/** The model's logits for the examples of fold `f`, in example order. */
export function heldAnswers(
  params: ModelParams,
  examples: readonly ModelExample[],
  fold: readonly number[],
  f: number,
): Float64Array[][] {
  return examples.filter((_, i) => fold[i] === f).map((e) => modelLogits(params, e));
}

/** Mean cross-entropy and accuracy of the labelled questions, given each example's logits. */
export function score(examples: readonly ModelExample[], logits: readonly Float64Array[][]) {
  let loss = 0;
  let right = 0;
  let n = 0;
  examples.forEach((e, i) => {
    e.questions.forEach((q, j) => {
      if (q.label < 0) return;
      const l = (logits[i] as Float64Array[])[j] as Float64Array;
      let max = -Infinity;
      let best = 0;
      l.forEach((v, o) => {
        if (v > max) {
          max = v;
          best = o;
        }
      });
      let sum = 0;
      for (const v of l) sum += exp(v - max);
      loss += log(sum) - ((l[q.label] as number) - max);
      if (best === q.label) right++;
      n++;
    });
  });
  return { logLoss: n === 0 ? 0 : loss / n, accuracy: n === 0 ? 0 : right / n };
}

/** A scope reading's name among the scores (layer-search.ts scopeLayerName). */
export type ScopeLayerName = 'scope' | 'scope-nominal' | 'scope-every-bare' | 'scope-nominal-bare';
