/**
 * The calibration core's one error class. A stable `code` lets the CLI, the engine and the
 * playground react to a failure without parsing its message; `details` carries the numbers the
 * message states (counts, line numbers, paths) for callers that render them their own way.
 */
import { CodedError, isCodedError } from '../protocol/coded-error.js';

export type CalibrationErrorCode =
  /** A calibration file that is not JSON, not this format, or holds an out-of-range value. */
  | 'calibration_invalid'
  /** Too few labelled answers of some question type to fit (details.shortfalls). */
  | 'calibration_too_few'
  /** Labelled-examples text with bad lines (details.errors: every bad line, numbered). */
  | 'examples_invalid'
  /** A bad argument from code: options out of range, logits of the wrong length, NaN. */
  | 'calibration_input_invalid'
  /** applyCalibration asked for a question type the file has no calibration for. */
  | 'calibration_type_missing'
  /** Calibrated answers were asked of a package that ships no calibration file. */
  | 'calibration_unavailable';

export class CalibrationError extends CodedError<CalibrationErrorCode> {
  readonly details: Record<string, unknown>;

  constructor(code: CalibrationErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message);
    // A fixed name, not the constructor's (minifiers rename it), so it survives bundling.
    this.name = 'CalibrationError';
    this.details = details;
  }
}

export function isCalibrationError(x: unknown): x is CalibrationError {
  return isCodedError(x, 'CalibrationError');
}

export function inputError(message: string, details: Record<string, unknown> = {}) {
  return new CalibrationError('calibration_input_invalid', message, details);
}
