/**
 * The events `<clef-decide>` dispatches. All bubble and are composed (they cross shadow roots).
 */
import { SystemOneError } from '../../protocol/errors.js';
import type { ErrorBody, SystemOneRequest, SystemOneResponse } from '../../protocol/types.js';
import { ClefError } from '../../wire/errors.js';
import type { LoadProgress } from '../../wire/wire.js';
import type { DecisionTimings } from '../../wire/telemetry.js';
import type { CalibratedDecision } from '../../calibrate/decision.js';
import type { UntrainedPart } from '../../core/untrained.js';

export interface ClefDecisionDetail {
  /** The request as sent (model, state, questions). */
  request: SystemOneRequest;
  /** The full System One response body. */
  response: SystemOneResponse;
  /** The response as JSON text, keys in request order. */
  json: string;
  timings: DecisionTimings;
  /**
   * With `calibrated` or `abstain-below`: per question the calibrated probabilities, the
   * prediction set (`set`, option ids) and `abstain`; absent otherwise.
   */
  calibrated?: CalibratedDecision;
  /**
   * For a model `clef-web train` wrote: the questions, options or descriptions of the request it
   * was not trained on (their answers carry no information); absent when none.
   */
  untrained?: UntrainedPart[];
}

export interface ClefErrorDetail {
  /** The typed error: a ClefError (engine) or a SystemOneError (the request). */
  error: Error;
  /** ClefError's code (`download_failed`, ...) or SystemOneError's (`validation_error`, ...). */
  code: string;
  /** HTTP status the contract gives this failure (SystemOneError only). */
  status?: number;
  /** The contract's error body (SystemOneError only). */
  body?: ErrorBody;
  message: string;
  /** Whether loading the model or deciding failed. */
  phase: 'load' | 'decide';
}

export type ClefDecisionEvent = CustomEvent<ClefDecisionDetail>;
export type ClefErrorEvent = CustomEvent<ClefErrorDetail>;
export type ClefProgressEvent = CustomEvent<LoadProgress>;

export function errorDetail(error: unknown, phase: 'load' | 'decide'): ClefErrorDetail {
  if (error instanceof SystemOneError) {
    return {
      error,
      code: error.code,
      status: error.status,
      body: error.body,
      message: error.message,
      phase,
    };
  }
  if (error instanceof ClefError) return { error, code: error.code, message: error.message, phase };
  const e = error instanceof Error ? error : new Error(String(error));
  return { error: e, code: 'engine_failed', message: e.message, phase };
}

declare global {
  interface HTMLElementEventMap {
    'clef-decision': ClefDecisionEvent;
    'clef-error': ClefErrorEvent;
    'clef-progress': ClefProgressEvent;
  }
}
