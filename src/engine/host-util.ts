/**
 * Helpers of the worker's EngineHost (host.ts, host-load.ts): results, the files it reads itself,
 * the no-device refusal.
 */
import { loadTokenizerSync, type ClefTokenizer } from '../clef/tokenizer.js';
import type { CalibrationFile } from '../calibrate/index.js';
import { DeviceError, ModelTooLargeError, PackageError } from '../wire/errors.js';
import { deviceOrder, type DevicePlan } from './capabilities.js';
import { deviceOf, type Capabilities, type DeviceRequest } from '../core/devices.js';
import {
  buildFor,
  defaultWasmBase,
  runtimeNotServedError,
  runtimeProblem,
} from './runtime-files.js';
import { type WireResult } from '../wire/wire.js';
import { toWireError } from '../wire/error-wire.js';
import { readPackageCalibration } from '../core/calibration.js';
import { requireFile, type PackageManifest } from '../core/manifest.js';
import type { FileLoan, PackageSource } from './package-fetch.js';

export async function result<T>(work: () => Promise<T> | T): Promise<WireResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: toWireError(error) };
  }
}

function readJson(
  pkg: PackageSource,
  loan: FileLoan,
  role: 'tokenizer' | 'tokenizer-config',
): object {
  const bytes = loan.read(requireFile(pkg.manifest, role));
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as object;
  } catch {
    throw new PackageError(`The package's ${role} file is not JSON`);
  }
}

/**
 * The small files the host reads itself (tokenizer, its config, the calibration), fetched and let
 * go once parsed; the sessions fetch theirs as they go.
 */
export async function readOwnFiles(pkg: PackageSource): Promise<{
  tokenizer: ClefTokenizer;
  calibration: CalibrationFile | null;
  tokenizerMs: number;
}> {
  const own = pkg.manifest.files.filter((f) =>
    ['tokenizer', 'tokenizer-config', 'calibration'].includes(f.role),
  );
  const loan = await pkg.fetchFiles(own);
  try {
    const calibration = readPackageCalibration(pkg.manifest, (f) => loan.read(f));
    const start = performance.now();
    const tokenizer = loadTokenizerSync(
      readJson(pkg, loan, 'tokenizer'),
      readJson(pkg, loan, 'tokenizer-config'),
    );
    return { tokenizer, calibration, tokenizerMs: performance.now() - start };
  } finally {
    loan.release();
  }
}

/**
 * The typed refusal when no device can run the package, naming every device's reason. When the
 * device the engine would choose is out only because its runtime is not served (no `/ort/` at
 * all, or an app that ships other devices' builds), the error is that missing file.
 */
export function noDeviceError(
  manifest: PackageManifest,
  skipped: DevicePlan['skipped'],
  requested?: DeviceRequest,
  caps?: Capabilities,
): Error {
  if (requested && caps?.runtimeBuilds) {
    const chosen = deviceOrder(requested, manifest, { ...caps, runtimeBuilds: undefined }).order[0];
    const build = chosen ? buildFor(deviceOf(chosen)) : null;
    if (chosen && build && runtimeProblem(deviceOf(chosen), caps.runtimeBuilds)) {
      return runtimeNotServedError(defaultWasmBase(), chosen, build);
    }
  }
  const reasons = skipped.map((s) => `${s.device}: ${s.reason}`).join('; ');
  if (skipped.some((s) => s.tooLarge)) {
    return new ModelTooLargeError(`Cannot run ${manifest.model.name} here: ${reasons}`, {
      reasons,
    });
  }
  return new DeviceError(`No device can run ${manifest.model.name} here: ${reasons}`, { reasons });
}
