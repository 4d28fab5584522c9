/**
 * A package's optional calibration file (role `calibration`, written by `clef-web calibrate`):
 * verified like every other file by whoever read the bytes (the browser's package fetch, the
 * Node engine), then parsed strictly here. A package without one has no calibration, and its
 * answers are unchanged either way: calibrated answers are opt-in.
 */
import { isCalibrationError, parseCalibration, type CalibrationFile } from '../calibrate/index.js';
import { PackageError } from '../wire/errors.js';
import type { ManifestFile, PackageManifest } from './manifest.js';

export const CALIBRATION_FILE = 'calibration.json';

export function readPackageCalibration(
  manifest: PackageManifest,
  read: (file: ManifestFile) => Uint8Array | undefined,
): CalibrationFile | null {
  const files = manifest.files.filter((f) => f.role === 'calibration');
  if (files.length === 0) return null;
  const file = files[0] as ManifestFile;
  if (files.length > 1) throw new PackageError('The package lists more than one calibration file');
  const bytes = read(file);
  if (bytes === undefined) throw new PackageError(`${file.path}: the calibration was not read`);
  try {
    return parseCalibration(new TextDecoder().decode(bytes));
  } catch (error) {
    if (!isCalibrationError(error)) throw error;
    throw new PackageError(`${file.path}: ${error.message}`, { file: file.path });
  }
}

/** The calibration file's SHA-256 as the manifest pins it (verified at load), or null. */
export function calibrationSha256(manifest: PackageManifest): string | null {
  return manifest.files.find((f) => f.role === 'calibration')?.sha256 ?? null;
}
