/**
 * clef-web's package root. Importable in Node without a DOM: nothing here touches `window`,
 * `document` or the ML runtime at import time.
 */
export * from './protocol/index.js';
export {
  encodeRequest,
  type EncodedRequest,
  type EncodedQuestion,
  type EncodeOptions,
  type TextTokenizer,
} from './clef/prompt.js';
export {
  BUNDLED_MODEL_URL,
  createClef,
  type Clef,
  type ClefOptions,
  type DecideOptions,
} from './client/clef.js';
export { handleRoute, type RouteBackend } from './http/routes.js';
export { registerSystemOneRoute } from './client/service-worker.js';
export type {
  AnsweredBy,
  EscalatedResponse,
  RemoteErrorNote,
  RemoteOptions,
} from './client/escalation.js';
export * from './wire/errors.js';
export type {
  EngineInfo,
  EngineCounters,
  TrainingSummary,
  LoadProgress,
  DecisionTimings,
  DecisionWire,
} from './wire/wire.js';
export {
  CalibrationError,
  isCalibrationError,
  type CalibrationErrorCode,
  type CalibrationAsk,
  type CalibratedDecision,
  type CalibratedQuestion,
  type UncalibratedQuestion,
} from './calibrate/index.js';
