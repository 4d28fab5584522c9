/**
 * What the engine does with a calibration, per question: calibrated probabilities, the
 * prediction set at the fitted coverage, and whether to abstain. Opt-in: the engine calls this
 * only when the caller asked for calibrated answers and the package ships a calibration.
 */
import { predictionSet } from './conformal.js';
import { CalibrationError, inputError } from './errors.js';
import { argmax, scaledSoftmax } from './softmax.js';
import type { BandCalibration, CalibrationFile, TypeCalibration } from './types.js';
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
  /** The option-count band whose fit was used, or null for the type's own entry. */
  band: { minOptions: number; maxOptions: number } | null;
}

/** The band of the type's entry that holds `options` options, if any. */
function bandFor(entry: TypeCalibration, options: number): BandCalibration | undefined {
  return entry.bands?.find((b) => options >= b.minOptions && options <= b.maxOptions);
}

export function applyCalibration(
  calibration: CalibrationFile,
  type: QuestionType,
  logits: ArrayLike<number>,
  options: ApplyOptions = {},
): CalibratedAnswer {
  const typeEntry = calibration.types[type];
  if (typeEntry === undefined) {
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
  const band = bandFor(typeEntry, logits.length);
  const entry = band ?? typeEntry;
  const { abstainBelow } = options;
  if (abstainBelow !== undefined && !(abstainBelow >= 0 && abstainBelow <= 1)) {
    throw inputError(`abstainBelow must be in [0, 1], got ${abstainBelow}`);
  }
  const probabilities = scaledSoftmax(logits, entry.temperature);
  const set = predictionSet(probabilities, entry.threshold);
  const top = argmax(probabilities);
  const confidence = probabilities[top] as number;
  const abstain = set.length > 1 || (abstainBelow !== undefined && confidence < abstainBelow);
  return {
    probabilities,
    set,
    top,
    confidence,
    abstain,
    coverage: entry.coverage,
    band: band ? { minOptions: band.minOptions, maxOptions: band.maxOptions } : null,
  };
}
