/**
 * The calibrated extension of one decision: per question, the calibrated probabilities, the
 * prediction set at the fitted coverage and whether to abstain. It travels beside the System
 * One body (`DecisionWire.calibrated`, `NodeDecision.calibrated`), never inside it, so the body
 * stays byte-identical to Clef's. Pure: the browser worker and the Node engine both build it
 * from the head's logits and the package's calibration file.
 */
import { applyCalibration } from './apply.js';
import { CalibrationError, inputError } from './errors.js';
import type { CalibrationFile } from './types.js';
import type { QuestionType } from '../protocol/types.js';

/** What a caller asks for: `true`, or options. */
export interface CalibrationAsk {
  /** Abstain also when the top calibrated probability is below this, in [0, 1]. */
  abstainBelow?: number;
}

export interface CalibratedQuestion {
  id: string;
  type: QuestionType;
  calibrated: true;
  /** Option ids in prompt order (noul "true", "false"; choice sorted; score "0".."n-1"). */
  options: string[];
  /** softmax(logits / T), one per option, in the same order; sums to 1. */
  probabilities: number[];
  /** Option ids of the prediction set, in prompt order; never empty. */
  set: string[];
  /** The top option and its calibrated probability. */
  top: string;
  confidence: number;
  /** The set holds more than one option, or confidence < abstainBelow. */
  abstain: boolean;
  /** The coverage the set was fitted for (e.g. 0.9). */
  coverage: number;
  /** The option-count band whose fit was used, or null for the type's own entry. */
  band: { minOptions: number; maxOptions: number } | null;
}

/** A question of a type the calibration file does not cover (nothing to say about it). */
export interface UncalibratedQuestion {
  id: string;
  type: QuestionType;
  calibrated: false;
}

export interface CalibratedDecision {
  /** One per question, in request order. */
  questions: Array<CalibratedQuestion | UncalibratedQuestion>;
  /** Some calibrated question abstains. */
  abstain: boolean;
  /** The threshold the caller gave, if any. */
  abstainBelow: number | null;
}

/** `true` → {}, an object → itself checked; `false`/undefined → null (not asked). */
export function calibrationAsk(value: boolean | CalibrationAsk | undefined): CalibrationAsk | null {
  if (value === undefined || value === false) return null;
  if (value === true) return {};
  if (typeof value !== 'object' || value === null) {
    throw inputError(`calibration must be true, false or { abstainBelow }, got ${String(value)}`);
  }
  const { abstainBelow } = value;
  if (
    abstainBelow !== undefined &&
    !(typeof abstainBelow === 'number' && abstainBelow >= 0 && abstainBelow <= 1)
  ) {
    throw inputError(`abstainBelow must be a number in [0, 1], got ${String(abstainBelow)}`);
  }
  return abstainBelow === undefined ? {} : { abstainBelow };
}

export interface QuestionLogits {
  id: string;
  type: QuestionType;
  optionIds: readonly string[];
}

/**
 * The extension for one decision; `questions` and `logits` as the engine has them (request
 * order, options in prompt order). Throws `calibration_unavailable` when the package has none.
 */
export function calibratedDecision(
  calibration: CalibrationFile | null,
  questions: readonly QuestionLogits[],
  logits: ReadonlyArray<ArrayLike<number>>,
  ask: CalibrationAsk,
): CalibratedDecision {
  if (calibration === null) {
    throw new CalibrationError(
      'calibration_unavailable',
      'Calibrated answers were asked for, but the package has no calibration file ' +
        '(run `npx clef-web calibrate <package> --examples labelled.jsonl`)',
    );
  }
  const abstainBelow = ask.abstainBelow;
  const out = questions.map((q, k): CalibratedQuestion | UncalibratedQuestion => {
    if (calibration.types[q.type] === undefined)
      return { id: q.id, type: q.type, calibrated: false };
    const row = logits[k];
    if (row === undefined) throw inputError(`question ${q.id}: no logits`);
    const a = applyCalibration(calibration, q.type, row, { abstainBelow });
    const options = [...q.optionIds];
    return {
      id: q.id,
      type: q.type,
      calibrated: true,
      options,
      probabilities: a.probabilities,
      set: a.set.map((i) => options[i] as string),
      top: options[a.top] as string,
      confidence: a.confidence,
      abstain: a.abstain,
      coverage: a.coverage,
      band: a.band,
    };
  });
  return {
    questions: out,
    abstain: out.some((q) => q.calibrated && q.abstain),
    abstainBelow: abstainBelow ?? null,
  };
}
