/**
 * The verify phase: held-out examples through the written package (the host's engine), each
 * compared with the fitted function.
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { scaledSoftmax } from '../../calibrate/softmax.js';
import { promptOptions } from '../../clef/prompt.js';
import { TrainError } from './errors.js';
import type { ModelExample, ModelParams } from './model.js';
import { modelLogits } from './readout.js';
import { PACKAGE_TOLERANCE, type PackageDecider, type TrainProgress } from './options.js';

/** The model's rows for every question of a request: zeros for the questions it was not trained on. */
export function fullRows(
  example: LabelledExample,
  rows: readonly Float64Array[],
  trained: ReadonlySet<string>,
): Float64Array[] {
  let k = 0;
  return example.valid.questions.map((q) =>
    trained.has(q.id) ? (rows[k++] as Float64Array) : new Float64Array(promptOptions(q).length),
  );
}

/** Held-out examples run through the package in the verify phase, at most (evenly spread). */
export const VERIFY_EXAMPLES = 500;

/**
 * Examples through the package (all of them up to VERIFY_EXAMPLES, else that many evenly
 * spread), each compared with the fitted function; a difference over PACKAGE_TOLERANCE stops the
 * run (a 151-option request costs ~50-100 ms in the package and microseconds in the function).
 */
export async function verifyPackage(
  engine: PackageDecider,
  examples: readonly LabelledExample[],
  encoded: readonly ModelExample[],
  params: ModelParams,
  trained: ReadonlySet<string>,
  progress: (p: TrainProgress) => void,
) {
  const step = Math.max(1, Math.ceil(examples.length / VERIFY_EXAMPLES));
  const sample = examples.map((_, i) => i).filter((i) => i % step === 0);
  let maxDelta = 0;
  try {
    const start = Date.now();
    for (const [n, i] of sample.entries()) {
      const example = examples[i] as LabelledExample;
      const fitted = fullRows(example, modelLogits(params, encoded[i] as ModelExample), trained);
      const decision = await engine.decide(example.request);
      if (decision.logits === undefined) throw new Error('the engine gave no logits');
      example.valid.questions.forEach((q, qi) => {
        if (!trained.has(q.id)) return;
        const got = (decision.logits as ReadonlyArray<ArrayLike<number>>)[qi] as ArrayLike<number>;
        maxDelta = Math.max(maxDelta, maxAbsDeltaP(got, fitted[qi] as Float64Array));
      });
      if ((n + 1) % 50 === 0 || n + 1 === sample.length) {
        const per = (Date.now() - start) / (n + 1);
        progress({
          phase: 'verify',
          done: n + 1,
          total: sample.length,
          etaMs: per * (sample.length - n - 1),
        });
      }
    }
  } finally {
    await engine.dispose();
  }
  if (!(maxDelta <= PACKAGE_TOLERANCE)) {
    throw new TrainError(
      'train_verification_failed',
      `the package's probabilities differ from the fitted model's by ${maxDelta} (> ${PACKAGE_TOLERANCE}): a bug in clef-web's construction; please report it`,
      { maxAbsDeltaP: maxDelta },
    );
  }
  return { maxDelta, verified: sample.length };
}

/** Largest |Δp| between two logit rows' softmaxes. */
export function maxAbsDeltaP(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  const pb = scaledSoftmax(b);
  return Math.max(...scaledSoftmax(a).map((v, i) => Math.abs(v - (pb[i] as number))));
}
