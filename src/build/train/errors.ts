/**
 * `clef-web train`'s one error class, with a stable `code` so the CLI (exit 1, the message as
 * is) and library callers can react without parsing messages; `details` holds the numbers.
 */
import { CodedError, isCodedError } from '../../protocol/coded-error.js';

export type TrainErrorCode =
  /** Lines that are not labelled examples (details.errors, each with its line number). */
  | 'examples_invalid'
  /** A file that is not UTF-8 or UTF-16 with a byte-order mark (details: line, offset). */
  | 'examples_encoding'
  /** Examples the method cannot learn from: noul/score labels, too few per option, clashes. */
  | 'examples_unlearnable'
  /** Requests longer than the context (details.lines). */
  | 'examples_too_long'
  /** A bad option: holdout outside (0, 0.5], an output directory that exists and is not empty. */
  | 'train_options_invalid'
  /** The written package does not compute the fitted model (a construction bug; nothing kept). */
  | 'train_verification_failed'
  /** The teacher (`--teacher`) could not label the texts: unreachable, refusing, or not System One. */
  | 'teacher_failed'
  /** A thread of the fit (Node's worker threads) failed: out of memory, or a bug to report. */
  | 'train_thread_failed'
  /** The run was stopped (SIGINT, SIGTERM, an abort): its partial folders were removed. */
  | 'train_interrupted';

export class TrainError extends CodedError<TrainErrorCode> {
  readonly details: Record<string, unknown>;

  constructor(code: TrainErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message);
    this.name = 'TrainError';
    this.details = details;
  }
}

export function isTrainError(x: unknown): x is TrainError {
  return isCodedError(x, 'TrainError');
}
