/**
 * The fit phase: the learner set up for the trained questions, the settings chosen, the final
 * model fitted, and the logits every later phase needs to judge it on text it did not see.
 *
 * - A small training part (under CROSS_FIT_MAX labelled examples) is cross-fitted: each candidate
 *   setting on K folds (select.ts), the best refitted on everything. Its out-of-fold logits are
 *   the model's answers on unseen text, for the card, the baseline's comparison and calibration.
 * - A large one is judged on the held-out part: each candidate fitted once on the training part
 *   and the best kept (cross-fitting it would cost K times as much for little gain).
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import type { PreparedData, TrainedQuestion } from './data.js';
import {
  classDims,
  fitModel,
  setupLearner,
  type FitSettings,
  type FittedModel,
  type LearnerSetup,
} from './learner.js';
import { modelLogits, type ModelExample } from './model.js';
import { assignFolds, CANDIDATES, crossFit, FOLDS, score, type CandidateScore } from './select.js';

/** Largest training part that is cross-fitted; a larger one is judged on its held-out part. */
export const CROSS_FIT_MAX = 2000;
/** L-BFGS iterations per fit at most (the fits here stop at 60-300). */
export const MAX_ITERATIONS = 400;

export interface FitPhaseOptions {
  /** Settings to use as they are (no selection), e.g. from `clef-web train --lambda`. */
  settings?: FitSettings;
  normDims?: number;
  seed: number;
  rmsEps: number;
  /** Progress: fits done and in all. */
  onFit?: (done: number, total: number) => void;
}

export interface FitPhase {
  setup: LearnerSetup;
  model: FittedModel;
  /** How the settings were chosen. */
  selection: {
    method: 'cross-fit' | 'held-out' | 'given';
    folds: number;
    scores: CandidateScore[];
  };
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

export function fitPhase(
  data: PreparedData,
  questions: readonly TrainedQuestion[],
  train: { examples: readonly LabelledExample[]; encoded: readonly ModelExample[] },
  heldOut: { examples: readonly LabelledExample[]; encoded: readonly ModelExample[] },
  options: FitPhaseOptions,
): FitPhase {
  const { spans, width } = optionSpans(questions, [train, heldOut]);
  const setup = setupLearner(
    data.tokenizer,
    data.files.vocabSize,
    data.markers,
    data.template,
    width,
    spans,
    options.rmsEps,
    options.normDims,
  );
  const examples = train.encoded;
  const candidates = options.settings !== undefined ? [options.settings] : CANDIDATES;
  if (examples.length <= CROSS_FIT_MAX || heldOut.encoded.length === 0) {
    const total = candidates.length * Math.min(FOLDS, examples.length) + 1;
    const cross = crossFit(setup, examples, {
      candidates,
      seed: options.seed,
      maxIterations: MAX_ITERATIONS,
      onFit: (done) => options.onFit?.(done, total),
    });
    const model = fitModel(setup, examples, {
      settings: cross.best,
      maxIterations: MAX_ITERATIONS,
    });
    options.onFit?.(total, total);
    return {
      setup,
      model,
      selection: {
        method: options.settings !== undefined ? 'given' : 'cross-fit',
        folds: Math.min(FOLDS, examples.length),
        scores: cross.scores,
      },
      outOfFold: cross.outOfFold,
      folds: assignFolds(examples, Math.min(FOLDS, examples.length), options.seed),
    };
  }
  let best: { model: FittedModel; logLoss: number } | null = null;
  const scores: CandidateScore[] = [];
  candidates.forEach((settings, i) => {
    const model = fitModel(setup, examples, { settings, maxIterations: MAX_ITERATIONS });
    const judged = score(
      heldOut.encoded,
      heldOut.encoded.map((e) => modelLogits(model.params, e)),
    );
    scores.push({ settings, ...judged });
    if (best === null || judged.logLoss < best.logLoss) best = { model, logLoss: judged.logLoss };
    options.onFit?.(i + 1, candidates.length);
  });
  return {
    setup,
    model: (best as unknown as { model: FittedModel }).model,
    selection: { method: options.settings !== undefined ? 'given' : 'held-out', folds: 0, scores },
    outOfFold: null,
    folds: null,
  };
}
