/**
 * Errors as they cross the page ↔ worker boundary, and back: a caller on the page catches the
 * same class (with its `code`) that the worker threw, never a bare string.
 */
import { SystemOneError } from '../protocol/errors.js';
import { CalibrationError, type CalibrationErrorCode } from '../calibrate/index.js';
import type { ErrorBody } from '../protocol/types.js';
import {
  AbortedError,
  ClefError,
  DeviceError,
  DisposedError,
  DownloadError,
  EngineError,
  IntegrityError,
  ModelTooLargeError,
  PackageError,
  WorkerLostError,
  type ClefErrorCode,
} from './errors.js';

export type WireError =
  | { kind: 'systemone'; status: number; body: ErrorBody; message: string }
  | { kind: 'clef'; code: ClefErrorCode; message: string; details: Record<string, unknown> }
  | { kind: 'other'; name: string; message: string }
  | {
      kind: 'calibration';
      code: CalibrationErrorCode;
      message: string;
      details: Record<string, unknown>;
    };

export function toWireError(error: unknown): WireError {
  if (error instanceof SystemOneError) {
    return { kind: 'systemone', status: error.status, body: error.body, message: error.message };
  }
  if (error instanceof ClefError) {
    return {
      kind: 'clef',
      code: error.code,
      message: error.message,
      details: { ...error.details },
    };
  }
  if (error instanceof CalibrationError) {
    const { code, message, details } = error;
    return { kind: 'calibration', code, message, details: { ...details } };
  }
  if (error instanceof Error) return { kind: 'other', name: error.name, message: error.message };
  return { kind: 'other', name: 'Error', message: String(error) };
}

export function fromWireError(wire: WireError): Error {
  switch (wire.kind) {
    case 'systemone':
      return SystemOneError.fromBody(wire.status, wire.body);
    case 'clef':
      return reviveClefError(wire.code, wire.message, wire.details);
    case 'calibration':
      return new CalibrationError(wire.code, wire.message, wire.details);
    case 'other':
      // An unexpected failure inside the worker is an engine failure, typed as such.
      return new EngineError(`${wire.name}: ${wire.message}`, { cause: wire.name });
  }
}

function reviveClefError(
  code: ClefErrorCode,
  message: string,
  details: Record<string, unknown>,
): ClefError {
  switch (code) {
    case 'package_invalid':
      return new PackageError(message, details);
    case 'integrity_mismatch': {
      const size = details.check === 'size';
      const value = (v: unknown) => (size && typeof v === 'number' ? v : String(v));
      return new IntegrityError(
        String(details.file),
        value(details.expected),
        value(details.actual),
        size ? 'size' : 'sha256',
      );
    }
    case 'download_failed':
      return new DownloadError(message, details);
    case 'device_unavailable':
      return new DeviceError(message, details);
    case 'model_too_large':
      return new ModelTooLargeError(message, details);
    case 'aborted':
      return new AbortedError(message);
    case 'disposed':
      return new DisposedError(message);
    case 'engine_failed':
      return new EngineError(message, details);
    case 'worker_lost':
      return new WorkerLostError(message, details);
  }
}
