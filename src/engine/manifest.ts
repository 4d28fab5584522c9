/**
 * The browser package's manifest (`manifest.json`), written by `clef-web convert` and read by the
 * engine. Pure: parsing and checks only.
 */
import type { ModelLimits } from '../protocol/types.js';
import { PackageError } from '../wire/errors.js';

export const MANIFEST_FORMAT = 'clef-web-package';
export const MANIFEST_VERSION = 1;

export type PackageDtype = 'fp32' | 'fp16' | 'q8' | 'q4' | 'mixed';
export type DeviceName = 'webgpu' | 'wasm';

/** What each file is for; the engine finds its files by role, never by name. */
export type FileRole =
  | 'backbone'
  | 'backbone-data'
  | 'head-memory'
  | 'head-decide'
  | 'head-data'
  | 'lexicon'
  | 'tokenizer'
  | 'tokenizer-config'
  | 'config'
  /** Optional: `clef-web calibrate`'s calibration file (src/calibrate/file.ts). */
  | 'calibration';

/** Roles whose files onnxruntime reads as external data. */
const DATA_ROLES: ReadonlySet<string> = new Set(['backbone-data', 'head-data']);

export interface ManifestFile {
  /** Relative to the manifest, forward slashes, inside the package directory. */
  path: string;
  role: FileRole;
  bytes: number;
  sha256: string;
}

export interface Fidelity {
  /** What the package was compared with: the float64 reference forward, or the fp32 package. */
  against: 'reference' | 'fp32';
  requests: number;
  meanAbsDp: number;
  maxAbsDp: number;
  /** Share of questions whose chosen option (argmax) is identical. */
  sameAnswers: number;
}

export interface PackageManifest {
  format: typeof MANIFEST_FORMAT;
  formatVersion: typeof MANIFEST_VERSION;
  model: {
    name: string;
    aliases: string[];
    description: string;
    releaseDate: string;
    sourceRevision: string | null;
  };
  architecture: {
    modelType: string;
    vocabSize: number;
    hiddenSize: number;
    numLayers: number;
    layerTypes: string[];
    headWidth: number;
  };
  contextTokens: number;
  limits?: Partial<ModelLimits>;
  variant: {
    dtype: PackageDtype;
    /** Devices the variant can run on, best first. f16 variants need WebGPU `shader-f16`. */
    devices: DeviceName[];
    needsShaderF16: boolean;
    /** Bytes of weights the runtime holds, and a bound on its peak memory at full context. */
    weightBytes: number;
    peakBytes: number;
    /**
     * The biggest single tensor of the graphs: on WebGPU it must fit one buffer, so it is checked
     * against the adapter's maxBufferSize and maxStorageBufferBindingSize before any download.
     * Absent in packages converted before it existed (then only session creation finds out).
     */
    largestTensor?: { name: string; bytes: number };
    /** Bytes of the graphs and their data (what a GPU holds); the lexicon stays on the CPU. */
    gpuBytes?: number;
  };
  /** Graph input/output names and state shapes, as the converter wrote them. */
  graphs: Record<string, unknown>;
  files: ManifestFile[];
  fidelity: Fidelity | null;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** A package path must stay inside its directory: no absolute paths, schemes or `..`. */
export function isSafePackagePath(path: string): boolean {
  if (path.length === 0 || path.length > 512) return false;
  // An allowlist, not a denylist: the path becomes a URL relative to the package, where `%2e%2e`
  // means `..`, `?` and `#` end the path, and `\` is `/` (the converter writes none of these).
  if (!/^[A-Za-z0-9._+-]+(\/[A-Za-z0-9._+-]+)*$/.test(path)) return false;
  return path.split('/').every((part) => part !== '.' && part !== '..');
}

/** Checks a parsed manifest; throws PackageError naming the first problem. */
export function parseManifest(value: unknown): PackageManifest {
  const m = value as PackageManifest;
  const fail = (msg: string): never => {
    throw new PackageError(`Invalid package manifest: ${msg}`);
  };
  if (typeof m !== 'object' || m === null) fail('not a JSON object');
  if (m.format !== MANIFEST_FORMAT)
    fail(`format is ${JSON.stringify(m.format)}, not ${MANIFEST_FORMAT}`);
  if (m.formatVersion !== MANIFEST_VERSION) {
    fail(
      `format version ${m.formatVersion} is not supported (this runtime reads ${MANIFEST_VERSION})`,
    );
  }
  if (typeof m.model?.name !== 'string' || !Array.isArray(m.model.aliases)) fail('model.name');
  if (!Number.isInteger(m.contextTokens) || m.contextTokens <= 0) fail('contextTokens');
  if (!Array.isArray(m.files) || m.files.length === 0) fail('files');
  for (const f of m.files) {
    if (typeof f.path !== 'string' || !isSafePackagePath(f.path)) {
      fail(`file path ${JSON.stringify(f.path)} points outside the package`);
    }
    if (!Number.isInteger(f.bytes) || f.bytes < 0) fail(`${f.path}: bytes`);
    if (f.bytes >= 2 ** 32 && DATA_ROLES.has(f.role)) {
      // onnxruntime-web reads external data with 32-bit offsets: such a file loads wrongly.
      fail(
        `${f.path} is ${(f.bytes / 2 ** 30).toFixed(2)} GiB: external data files must stay under 4 GiB (re-convert with this version's converter, which splits them)`,
      );
    }
    if (typeof f.sha256 !== 'string' || !SHA256.test(f.sha256)) fail(`${f.path}: sha256`);
  }
  const v = m.variant;
  if (!v || !Array.isArray(v.devices) || v.devices.length === 0) fail('variant.devices');
  if (v.largestTensor !== undefined) {
    const t = v.largestTensor;
    if (typeof t?.name !== 'string' || !Number.isInteger(t.bytes) || t.bytes < 0) {
      fail('variant.largestTensor');
    }
    if (t.bytes >= 2 ** 32) {
      // No data file may reach 4 GiB, so neither may a tensor; no WebGPU device binds one.
      fail(
        `tensor ${t.name} is ${(t.bytes / 2 ** 30).toFixed(2)} GiB: tensors must stay under 4 GiB`,
      );
    }
  }
  return m;
}

export function filesWithRole(m: PackageManifest, role: FileRole): ManifestFile[] {
  return m.files.filter((f) => f.role === role);
}

export function requireFile(m: PackageManifest, role: FileRole): ManifestFile {
  const f = m.files.find((x) => x.role === role);
  if (!f) throw new PackageError(`The package has no ${role} file`);
  return f;
}
