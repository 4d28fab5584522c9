/**
 * Shapes of the calibration core: what one labelled answer is once the model has scored it, and
 * what a calibration file holds. Pure types (the protocol's QuestionType aside, nothing imported).
 */
import type { QuestionType } from '../protocol/types.js';

/** One labelled question of one example, after the model ran: everything a fit needs. */
export interface CalibrationRecord {
  questionId: string;
  type: QuestionType;
  /** Option ids in prompt order (noul true, false; choice sorted by code point; score levels). */
  optionIds: string[];
  /** The head's raw logits, one per option, in the same prompt order. */
  logits: number[];
  /** Index into optionIds/logits of the right answer. */
  label: number;
  /** 1-based line of the labelled-examples file it came from, when it came from one. */
  line?: number;
  /**
   * Its request's state as lines are compared for copies (examples.ts stateKey), when it came
   * from a labelled example: records of one state are held out together.
   */
  copyKey?: string;
}

/** Figures measured on held-out records (what the CLI prints and the file keeps). */
export interface HeldOutFigures {
  /** Records measured. */
  n: number;
  /** Expected calibration error of the top-1 confidence, 15 equal-width bins. */
  ece: number;
  /** Top-1 accuracy. */
  accuracy: number;
  /** Mean negative log-likelihood of the right answer (nats). */
  nll: number;
  /** Fraction of records whose right answer is in the prediction set. */
  coverage: number;
  /** Mean number of options in the prediction set. */
  meanSetSize: number;
}

/** One reliability-diagram bin: confidences in (lo, hi]. */
export interface ReliabilityBin {
  lo: number;
  hi: number;
  count: number;
  /** Mean top-1 confidence of the bin's records (0 when empty). */
  meanConfidence: number;
  /** Accuracy of the bin's records (0 when empty). */
  accuracy: number;
}

/** Held-out figures plus the reliability diagram, for before/after charts. */
export interface Evaluation extends HeldOutFigures {
  reliability: ReliabilityBin[];
}

/** What the file keeps for one question type. */
export interface TypeCalibration {
  /** Probabilities are softmax(logits / temperature). */
  temperature: number;
  /**
   * Split-conformal threshold on the score 1 − p(option): the prediction set is every option with
   * 1 − p ≤ threshold, i.e. p ≥ 1 − threshold (never empty: the top option always belongs).
   * 1 means "every option".
   */
  threshold: number;
  /** The coverage asked for (1 − α). */
  coverage: number;
  n: { fit: number; heldOut: number };
  heldOut: { before: HeldOutFigures; after: HeldOutFigures };
  /**
   * Optional refinements by option count: a question whose option count lies in a band's
   * [minOptions, maxOptions] uses the band's temperature and threshold, any other uses the
   * entry's own (fitted on all the type's answers). One temperature and one threshold cannot
   * serve a 151-way and a 10-option question alike: the larger list spreads its mass thinner
   * (issue 24's clef-nano: raw ECE 0.118 on one and 0.028 on the other, and sets an order of
   * magnitude apart in size). Bands are disjoint and in ascending order.
   */
  bands?: BandCalibration[];
}

/** A type's calibration for questions with minOptions..maxOptions options (inclusive). */
export interface BandCalibration extends Omit<TypeCalibration, 'bands'> {
  minOptions: number;
  maxOptions: number;
}

/** An option-count range asked of the fit: [minOptions, maxOptions], inclusive. */
export interface OptionBand {
  minOptions: number;
  maxOptions: number;
}

export const CALIBRATION_FORMAT = 'clef-web.calibration';
export const CALIBRATION_VERSION = 1;
/** Fixed method descriptors: a file fitted otherwise is another format, not another value. */
export const CALIBRATION_METHOD = Object.freeze({
  temperature: 'nll',
  conformal: 'split-lac',
  eceBins: 15,
} as const);

export interface CalibrationFile {
  format: typeof CALIBRATION_FORMAT;
  version: typeof CALIBRATION_VERSION;
  method: { temperature: 'nll'; conformal: 'split-lac'; eceBins: 15 };
  /** How the labelled answers were split, so a fit can be reproduced. */
  split: { seed: number; heldOutFraction: number };
  /** Only the types that had labelled answers; at least one. */
  types: Partial<Record<QuestionType, TypeCalibration>>;
}

export const QUESTION_TYPES: readonly QuestionType[] = Object.freeze(['noul', 'choice', 'score']);

/** Range the temperature fit searches, and the file parser accepts. */
export const MIN_TEMPERATURE = 0.05;
export const MAX_TEMPERATURE = 20;
