/**
 * clef-web's package root: what a page needs to decide (createClef and its types), the errors
 * it may catch, and the System One routes for a service worker or a fetch handler. The
 * protocol's helpers are `clef-web/protocol`. Importable in Node without a DOM: nothing here
 * touches `window`, `document` or the ML runtime at import time. Every name is listed here on
 * purpose; test/unit/package/api-report.test.ts pins the list.
 */
export {
  BUNDLED_MODEL_URL,
  createClef,
  type Clef,
  type ClefOptions,
  type DecideOptions,
} from './client/clef.js';
export type { EscalatedResponse, RemoteOptions } from './client/escalation.js';
export { registerSystemOneRoute } from './client/service-worker.js';
export { handleRoute, type RouteBackend } from './http/routes.js';
export type { DecisionWire, LoadProgress } from './wire/wire.js';
export type { EngineInfo } from './wire/telemetry.js';
export type { SystemOneRequest, SystemOneResponse } from './protocol/types.js';
export type { CalibrationAsk } from './calibrate/index.js';
export type { DecisionRecord } from './core/record.js';
export {
  ClefError,
  PackageError,
  IntegrityError,
  DownloadError,
  DeviceError,
  ModelTooLargeError,
  AbortedError,
  DisposedError,
  EngineError,
  WorkerLostError,
  type ClefErrorCode,
} from './wire/errors.js';
export { SystemOneError } from './protocol/errors.js';
export { CalibrationError } from './calibrate/index.js';
