/**
 * The engine's error classes. Each has a stable `code`; they cross the worker boundary as plain
 * data (see error-wire.ts) and are rebuilt as the same class on the page side.
 * No runtime imports here: the page imports this file without loading the ML runtime.
 */
import { CodedError } from '../protocol/coded-error.js';

export type ClefErrorCode =
  | 'package_invalid'
  | 'integrity_mismatch'
  | 'download_failed'
  | 'device_unavailable'
  | 'model_too_large'
  | 'aborted'
  | 'disposed'
  | 'engine_failed'
  | 'worker_lost';

export class ClefError extends CodedError<ClefErrorCode> {
  /** Extra facts for callers (a file name, a device's reason); plain data only. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ClefErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message);
    this.details = Object.freeze({ ...details });
  }
  override get name(): string {
    return 'ClefError';
  }
}

/** The package is malformed: a bad manifest, a path outside the package, an unknown format. */
export class PackageError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('package_invalid', message, details);
  }
  override get name(): string {
    return 'PackageError';
  }
}

/** Which of the manifest's checks a file failed. */
export type IntegrityCheck = 'sha256' | 'size';

/**
 * A file's SHA-256 or size differs from the manifest's: it is refused, never used. `details`:
 * `{ file, expected, actual, check }` (hex digests for 'sha256', byte counts for 'size'; a body
 * longer than the manifest's size is refused as it arrives, so its `actual` says "more than N").
 */
export class IntegrityError extends ClefError {
  constructor(
    file: string,
    expected: string | number,
    actual: string | number,
    check: IntegrityCheck = 'sha256',
  ) {
    super(
      'integrity_mismatch',
      check === 'size'
        ? `${file}: ${actual} bytes, the manifest says ${expected}; the file was refused`
        : `${file}: SHA-256 ${actual} does not match the manifest's ${expected}; the file was refused`,
      { file, expected, actual, check },
    );
  }
  override get name(): string {
    return 'IntegrityError';
  }
}

export class DownloadError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('download_failed', message, details);
  }
  override get name(): string {
    return 'DownloadError';
  }
}

/** The asked-for device cannot run this package here; `details.reason` says why. */
export class DeviceError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('device_unavailable', message, details);
  }
  override get name(): string {
    return 'DeviceError';
  }
}

/** The variant needs more memory than any available device offers (e.g. a 9B on WASM). */
export class ModelTooLargeError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('model_too_large', message, details);
  }
  override get name(): string {
    return 'ModelTooLargeError';
  }
}

/** The caller's AbortSignal fired; whatever the request held was freed. */
export class AbortedError extends ClefError {
  constructor(message = 'The request was aborted') {
    super('aborted', message);
  }
  override get name(): string {
    return 'AbortError';
  }
}

export class DisposedError extends ClefError {
  constructor(message = 'This clef instance was disposed') {
    super('disposed', message);
  }
  override get name(): string {
    return 'DisposedError';
  }
}

/** The runtime failed (a session error, a lost device that could not be recovered). */
export class EngineError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('engine_failed', message, details);
  }
  override get name(): string {
    return 'EngineError';
  }
}

/**
 * The engine's worker died (terminated, closed or crashed) while this request was running. The
 * client starts a fresh worker: requests that were still queued behind this one are sent to it
 * and answered; only the one that was running gets this error (it may be what killed the worker,
 * so it is not retried). Sending it again is safe.
 */
export class WorkerLostError extends ClefError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('worker_lost', message, details);
  }
  override get name(): string {
    return 'WorkerLostError';
  }
}
