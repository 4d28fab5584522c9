/**
 * Writes a calibration into a package: `calibration.json` plus its entry (role `calibration`,
 * bytes, SHA-256) in manifest.json, so the package stays verifiable. In place, or into a new
 * directory holding a copy of the package's files. The manifest is written last, through a
 * temporary file and a rename: an interrupted write leaves the old, still valid, package.
 */
import { createHash } from '../host/sha256.js';
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from '../host/files.js';
import { dirname, join, resolve } from '../host/paths.js';
import { CALIBRATION_FILE } from '../../core/calibration.js';
import { MANIFEST_FILE, type ManifestFile, type PackageManifest } from '../../core/manifest.js';

/** The manifest with `calibration.json` listed (any earlier calibration entry replaced). */
function withCalibration(manifest: PackageManifest, text: string): PackageManifest {
  const bytes = new TextEncoder().encode(text);
  const entry: ManifestFile = {
    path: CALIBRATION_FILE,
    role: 'calibration',
    bytes: bytes.byteLength,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  const files = manifest.files.filter((f) => f.role !== 'calibration' && f.path !== entry.path);
  return { ...manifest, files: [...files, entry] };
}

/** Writes the calibrated package to `outDir` (the package itself when equal). */
export function writeCalibratedPackage(
  packageDir: string,
  manifest: PackageManifest,
  calibrationText: string,
  outDir: string = packageDir,
): string {
  const next = withCalibration(manifest, calibrationText);
  const inPlace = resolve(outDir) === resolve(packageDir);
  mkdirSync(outDir, { recursive: true });
  if (!inPlace) {
    for (const file of next.files) {
      if (file.role === 'calibration') continue;
      mkdirSync(dirname(join(outDir, file.path)), { recursive: true });
      copyFileSync(join(packageDir, file.path), join(outDir, file.path));
    }
    // Non-manifest files of the package (its README, a model card) are not copied.
  }
  writeFileSync(join(outDir, CALIBRATION_FILE), calibrationText);
  const temporary = join(outDir, `${MANIFEST_FILE}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temporary, join(outDir, MANIFEST_FILE));
  return join(outDir, CALIBRATION_FILE);
}
