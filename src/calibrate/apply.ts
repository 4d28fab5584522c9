/**
 * What the engine does with a calibration, per question: calibrated probabilities, the
 * prediction set at the fitted coverage, and whether to abstain. Opt-in: the engine calls this
 * only when the caller asked for calibrated answers and the package ships a calibration.
 */
import { predictionSet } from './conformal.js';
import { CalibrationError, inputError } from './errors.js';
import { argmax, scaledSoftmax } from './softmax.js';
import type { CalibrationFile } from './types.js';
import type { QuestionType } from '../protocol/types.js';

export interface ApplyOptions {
  /** Abstain also when the top calibrated probability is below this (in [0, 1]). */
  abstainBelow?: number;
}

export interface CalibratedAnswer {
  /** softmax(logits / T), float64, in prompt order. */
  probabilities: number[];
  /** Prompt-order indices (ascending) of the options in the prediction set; never empty. */
  set: number[];
  /** Index of the top option (first one on a tie). */
  top: number;
  /** Its calibrated probability. */
  confidence: number;
  /** The set holds more than one option, or confidence < abstainBelow. */
  abstain: boolean;
  /** The coverage the set was fitted for. */
  coverage: number;
}

export function applyCalibration(
  calibration: CalibrationFile,
  type: QuestionType,
  logits: ArrayLike<number>,
  options: ApplyOptions = {},
): CalibratedAnswer {
  const entry = calibration.types[type];
  if (entry === undefined) {
    throw new CalibrationError(
      'calibration_type_missing',
      `The calibration has no entry for ${type} questions`,
      { type },
    );
  }
  if (logits.length < 2) throw inputError(`${type}: ${logits.length} logits (needs at least 2)`);
  for (let i = 0; i < logits.length; i++) {
    if (!Number.isFinite(logits[i])) throw inputError(`${type}: logit ${i} is not finite`);
  }
  const { abstainBelow } = options;
  if (abstainBelow !== undefined && !(abstainBelow >= 0 && abstainBelow <= 1)) {
    throw inputError(`abstainBelow must be in [0, 1], got ${abstainBelow}`);
  }
  const probabilities = scaledSoftmax(logits, entry.temperature);
  const set = predictionSet(probabilities, entry.threshold);
  const top = argmax(probabilities);
  const confidence = probabilities[top] as number;
  const abstain = set.length > 1 || (abstainBelow !== undefined && confidence < abstainBelow);
  return { probabilities, set, top, confidence, abstain, coverage: entry.coverage };
}
