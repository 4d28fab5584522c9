/**
 * The fit phase: the learner set up for the trained questions, the settings chosen, the final
 * model fitted, and the logits every later phase needs to judge it on text it did not see.
 *
 * - A small training part (under CROSS_FIT_MAX labelled examples) is cross-fitted: each candidate
 *   setting on K folds (select.ts), the best refitted on everything (layer-search.ts, which also
 *   tries the layers beyond the bag). Its out-of-fold logits are the model's answers on unseen
 *   text, for the card, the baseline's comparison and calibration.
 * - A large one is judged on the held-out part: each candidate fitted once on the training part
 *   and the best kept (cross-fitting it would cost K times as much for little gain).
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import type { PreparedData, TrainedQuestion } from './data.js';
import { crossFittedSearch, type LayersTried } from './layer-search.js';
import { ITERATION_REPORT, MAX_ITERATIONS, orderSettings } from './layer-settings.js';
import { fitModel, startsFor, type FitSettings, type FittedModel } from './learner.js';
import { classDims, setupLearner, type LayerChoice, type LearnerSetup } from './learner-setup.js';
import type { ModelExample } from './model.js';
import { modelLogits } from './readout.js';
import { DEFAULT_PAIR_SHAPE } from './pairs.js';
import { CANDIDATES, DEFAULT_SETTINGS, score, type CandidateScore } from './select.js';
import type { TrainPool } from './select.js';
import { FitPlan, type FitReport } from './fit-progress.js';
import { firstCopies } from './repeats.js';

/** Largest training part that is cross-fitted; a larger one is judged on its held-out part. */
export const CROSS_FIT_MAX = 2000;
/**
 * A file above this many training examples gets one fit of the default settings, of at most
 * LARGE_MAX_ITERATIONS: an iteration costs about an objective evaluation over every example and
 * option (measured on CLINC150's 13,600 training queries of 151 options: ~10 s of CPU), so three
 * candidates of up to 400 iterations would take hours.
 */
export const LARGE_FILE = 5000;
export const LARGE_MAX_ITERATIONS = 100;

export interface FitPhaseOptions {
  /** Settings to use as they are (no selection), e.g. from `clef-web train --lambda`. */
  settings?: FitSettings;
  normDims?: number;
  /** The order layer: considered, forced or left out (default `auto`). */
  order?: OrderMode;
  seed: number;
  rmsEps: number;
  /** Threads for the fits' shards, or a small file's cross-fits (select.ts TrainPool). */
  pool?: TrainPool;
  /**
   * Progress (fit-progress.ts): on each fit done, and every ITERATION_REPORT iterations of the one
   * under way.
   */
  onFit?: (report: FitReport) => void;
}

export interface FitPhase {
  setup: LearnerSetup;
  model: FittedModel;
  /** How the settings were chosen, and which layers were tried and kept (layer-search.ts). */
  selection: {
    method: 'cross-fit' | 'held-out' | 'given';
    folds: number;
    scores: CandidateScore[];
  } & LayersTried;
  /**
   * Logits on unseen text for the card and calibration: out-of-fold logits of every training
   * example (cross-fit), or null (judged on the held-out part instead).
   */
  outOfFold: Float64Array[][] | null;
  /** Fold of each training example when cross-fitted (for the baseline's same folds). */
  folds: number[] | null;
}

/** Every distinct option span of the encoded examples, with the class dim of its option. */
function optionSpans(
  questions: readonly TrainedQuestion[],
  groups: ReadonlyArray<{ examples: readonly LabelledExample[]; encoded: readonly ModelExample[] }>,
) {
  const { dimOf, width } = classDims(questions.map((q) => q.options));
  const index = new Map(questions.map((q, k) => [q.id, k]));
  const spans: Array<{ tokens: Int32Array; dim: number }> = [];
  const seen = new Set<string>();
  for (const { examples, encoded } of groups) {
    examples.forEach((example, i) => {
      const asked = example.valid.questions.filter((q) => index.has(q.id));
      asked.forEach((q, j) => {
        const k = index.get(q.id) as number;
        const ids = promptOptions(q).map(([id]) => id);
        const question = (encoded[i] as ModelExample).questions[j];
        question?.options.forEach((tokens, o) => {
          const dim = dimOf.get(`${k}\u0000${ids[o] as string}`);
          const key = `${dim}:${tokens.join(',')}`;
          if (dim === undefined || seen.has(key)) return;
          seen.add(key);
          spans.push({ tokens, dim });
        });
      });
    });
  }
  return { spans, width };
}

/** The learner for these questions and examples, with the order layer, the scope layer or neither. */
export function learnerSetup(
  data: PreparedData,
  questions: readonly TrainedQuestion[],
  groups: ReadonlyArray<{ examples: readonly LabelledExample[]; encoded: readonly ModelExample[] }>,
  options: Pick<FitPhaseOptions, 'rmsEps' | 'normDims'>,
  layer: LayerChoice,
): LearnerSetup {
  const { spans, width } = optionSpans(questions, groups);
  return setupLearner(
    data.tokenizer,
    data.files.vocabSize,
    data.markers,
    data.template,
    width,
    spans,
    options.rmsEps,
    options.normDims,
    layer,
  );
}

/**
 * Whether the model gets the order layer (pairs.ts): `auto` fits it beside the plain model on a
 * cross-fitted (small) file and keeps it when its out-of-fold cross-entropy is lower; `on` always
 * (at its own cost: several times the plain fit's time); `off` never.
 */
export type OrderMode = 'auto' | 'on' | 'off';
export const ORDER_MODES: readonly OrderMode[] = Object.freeze(['auto', 'on', 'off']);

/** Whether a training part of this size may get the order layer under `mode`. */
export function orderConsidered(mode: OrderMode, trainExamples: number): boolean {
  return mode === 'on' || (mode === 'auto' && trainExamples <= CROSS_FIT_MAX);
}

export async function fitPhase(
  data: PreparedData,
  questions: readonly TrainedQuestion[],
  train: { examples: readonly LabelledExample[]; encoded: readonly ModelExample[] },
  heldOut: { examples: readonly LabelledExample[]; encoded: readonly ModelExample[] },
  options: FitPhaseOptions,
): Promise<FitPhase> {
  const pool = options.pool;
  const setupWith = (layer: LayerChoice): LearnerSetup =>
    learnerSetup(data, questions, [train, heldOut], options, layer);
  const examples = train.encoded;
  const mode = options.order ?? 'auto';
  const withOrder = orderConsidered(mode, examples.length);
  const plain = mode === 'on' ? null : setupWith(null);
  const ordered = withOrder ? setupWith(DEFAULT_PAIR_SHAPE) : null;
  const given = options.settings;
  const candidates = given !== undefined ? [given] : CANDIDATES;
  if (examples.length <= CROSS_FIT_MAX || heldOut.encoded.length === 0) {
    const found = await crossFittedSearch({
      examples,
      setupWith,
      plain,
      ordered,
      given,
      candidates,
      searchLayers: mode === 'auto',
      forceOrder: mode === 'on',
      seed: options.seed,
      firstCopy: firstCopies(train.examples),
      pool,
      onFit: options.onFit,
    });
    return {
      setup: found.setup,
      model: found.model,
      selection: {
        method: given !== undefined && found.scores.length === 1 ? 'given' : 'cross-fit',
        folds: found.k,
        scores: found.scores,
        ...found.layers,
      },
      outOfFold: found.outOfFold,
      folds: found.folds,
    };
  }
  const large = examples.length > LARGE_FILE;
  const tries: Array<{ setup: LearnerSetup; settings: FitSettings }> = [
    ...(plain === null
      ? []
      : (large && given === undefined ? [DEFAULT_SETTINGS] : candidates).map((settings) => ({
          setup: plain,
          settings,
        }))),
    ...(ordered === null ? [] : [{ setup: ordered, settings: orderSettings(given) }]),
  ];
  let best: { model: FittedModel; setup: LearnerSetup; logLoss: number } | null = null;
  const scores: CandidateScore[] = [];
  const maxIterations = large ? LARGE_MAX_ITERATIONS : MAX_ITERATIONS;
  const plan = new FitPlan(options.onFit);
  const kindOf = (setup: LearnerSetup) => (setup === ordered ? 'order' : 'bag');
  // Each start counts as a fit (the order layer's model has startsFor's starts).
  for (const { setup } of tries) plan.add(kindOf(setup), startsFor(setup));
  plan.settle();
  for (const { setup, settings } of tries) {
    const model = await fitModel(setup, examples, {
      settings,
      maxIterations,
      starts: startsFor(setup),
      onIteration: (iteration) => {
        if (iteration % ITERATION_REPORT === 0) plan.iteration(kindOf(setup), iteration);
      },
      onStartFitted: () => plan.finished(kindOf(setup)),
      pool,
    });
    const judged = score(
      heldOut.encoded,
      heldOut.encoded.map((e) => modelLogits(model.params, e)),
    );
    scores.push({ settings, ...judged });
    if (best === null || judged.logLoss < best.logLoss)
      best = { model, setup, logLoss: judged.logLoss };
  }
  const chosen = best as unknown as { model: FittedModel; setup: LearnerSetup };
  return {
    setup: chosen.setup,
    model: chosen.model,
    selection: {
      method: given !== undefined && tries.length === 1 ? 'given' : 'held-out',
      folds: 0,
      scores,
      order: chosen.setup === ordered,
      orderTried: ordered !== null,
      scope: false,
      scopeTried: false,
      scopeCues: null,
      pointer: false,
      pointerTried: false,
      clauseWeight: null,
      clauseTried: false,
    },
    outOfFold: null,
    folds: null,
  };
}
