/**
 * The browser package's manifest (`manifest.json`), written by `clef-web convert` and read by the
 * engine. Pure: parsing and checks only.
 */
import type { ModelLimits } from '../protocol/types.js';
import { PackageError } from '../wire/errors.js';
import type { TrainingSummary } from '../wire/telemetry.js';
import type { DeviceName } from './devices.js';

/** The manifest's file name inside a package. */
export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 'clef-web-package';
/** Single-graph packages are format 1; a package whose backbone is split into groups is 2. */
export const MANIFEST_VERSION = 1;
export const MANIFEST_VERSION_GROUPED = 2;
const READABLE_VERSIONS: readonly number[] = [MANIFEST_VERSION, MANIFEST_VERSION_GROUPED];

export type PackageDtype = 'fp32' | 'fp16' | 'q8' | 'q4' | 'mixed';

/** What each file is for; the engine finds its files by role, never by name. */
export type FileRole =
  | 'backbone'
  /** Optional: the backbone graph (of a group) with a float16 KV cache, over the same data. */
  | 'backbone-kv16'
  | 'backbone-data'
  | 'head-memory'
  | 'head-decide'
  | 'head-data'
  | 'lexicon'
  | 'tokenizer'
  | 'tokenizer-config'
  | 'config'
  /** Optional: `clef-web calibrate`'s calibration file (src/calibrate/file.ts). */
  | 'calibration'
  /**
   * Optional: the graph named by `replaces`, optimised once by the converter for the WASM back
   * end (src/build/convert/prepare-wasm.ts), over the same data files. WASM creates it instead of
   * the original, without optimising it again; WebGPU and Node never fetch it.
   */
  | 'wasm-graph';

/** Graph roles a wasm-graph may replace. */
export const PREPARABLE_ROLES: ReadonlySet<string> = new Set([
  'backbone',
  'backbone-kv16',
  'head-memory',
  'head-decide',
]);

/** Roles whose files onnxruntime reads as external data. */
const DATA_ROLES: ReadonlySet<string> = new Set(['backbone-data', 'head-data']);

export interface ManifestFile {
  /** Relative to the manifest, forward slashes, inside the package directory. */
  path: string;
  role: FileRole;
  bytes: number;
  sha256: string;
  /**
   * Format 2 only, on `backbone` and `backbone-data` files: the backbone group the file belongs
   * to (an index into graphs.backboneGroups, which run in that order).
   */
  group?: number;
  /** On `wasm-graph` files only: the path of the graph it stands in for on WASM. */
  replaces?: string;
}

/** KV cache precision between runs: float32, or float16 through a package's kv16 graphs. */
export type KvDtype = 'float32' | 'float16';

/** A graph input or output as the converter lists it (the fp32-KV graph's). */
export interface IoTensorEntry {
  name: string;
  dtype: 'int64' | 'float32' | 'float16';
  shape: Array<number | string>;
}

/** One graph of a split backbone, as graphs.backboneGroups lists them (in run order). */
export interface BackboneGroupEntry {
  /** Starts from input_ids (the embedding) rather than the residual stream `residual_in`. */
  embed: boolean;
  /** The layers [start, end) it runs. */
  layers: [number, number];
  /** Ends with the final norm and outputs `hidden` (else `residual_out`). */
  finalNorm: boolean;
  inputs: IoTensorEntry[];
  outputs: IoTensorEntry[];
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
  formatVersion: typeof MANIFEST_VERSION | typeof MANIFEST_VERSION_GROUPED;
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
  /** Present in packages `clef-web train` wrote: what the model was trained to answer. */
  training?: TrainingSummary;
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
  if (!READABLE_VERSIONS.includes(m.formatVersion)) {
    fail(
      `format version ${m.formatVersion} is not supported (this runtime reads ${READABLE_VERSIONS.join(' and ')})`,
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
  if (m.training !== undefined) {
    const questions = m.training?.questions;
    const valid =
      Array.isArray(questions) &&
      questions.every(
        (q) =>
          typeof q?.id === 'string' &&
          Array.isArray(q.options) &&
          q.options.every((o) => typeof o === 'string') &&
          (q.instructions === undefined ||
            q.instructions === null ||
            typeof q.instructions === 'string') &&
          (q.descriptions === undefined ||
            (typeof q.descriptions === 'object' &&
              q.descriptions !== null &&
              Object.values(q.descriptions).every(Array.isArray))),
      );
    if (!valid) fail('training.questions');
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
  checkBackboneFiles(m, fail);
  checkWasmGraphs(m, fail);
  return m;
}

/** Each wasm-graph replaces one graph file of the package, and no graph has two. */
function checkWasmGraphs(m: PackageManifest, fail: (msg: string) => never): void {
  const byPath = new Map(m.files.map((f) => [f.path, f]));
  const replaced = new Set<string>();
  for (const f of m.files) {
    if (f.role !== 'wasm-graph') {
      if (f.replaces !== undefined) fail(`${f.path}: only wasm-graph files replace another`);
      continue;
    }
    const target = typeof f.replaces === 'string' ? byPath.get(f.replaces) : undefined;
    if (!target || !PREPARABLE_ROLES.has(target.role)) {
      fail(
        `${f.path}: replaces ${JSON.stringify(f.replaces)}, which is not a graph of the package`,
      );
    }
    if (replaced.has(target.path)) fail(`${target.path} has two wasm-graph files`);
    replaced.add(target.path);
  }
}

const BACKBONE_ROLES: ReadonlySet<string> = new Set(['backbone', 'backbone-kv16', 'backbone-data']);

/**
 * Format 1: one `backbone` graph and no groups. Format 2: graphs.backboneGroups lists the groups
 * in run order, every backbone file names its group, and each group has exactly one graph whose
 * layers follow the previous group's, the first embedding and the last ending with the final norm.
 */
function checkBackboneFiles(m: PackageManifest, fail: (msg: string) => never): void {
  const groups = (m.graphs as { backboneGroups?: unknown } | undefined)?.backboneGroups;
  const graphs = m.files.filter((f) => f.role === 'backbone');
  if (m.formatVersion === MANIFEST_VERSION) {
    if (groups !== undefined) fail('graphs.backboneGroups needs format version 2');
    if (graphs.length !== 1) fail(`${graphs.length} backbone graphs (format 1 has one)`);
    const kv16 = m.files.filter((f) => f.role === 'backbone-kv16').length;
    if (kv16 > 1) fail(`${kv16} float16-KV backbone graphs (format 1 has at most one)`);
    if (m.files.some((f) => f.group !== undefined)) fail('file groups need format version 2');
    return;
  }
  if (!Array.isArray(groups) || groups.length === 0) fail('graphs.backboneGroups');
  const list = groups as BackboneGroupEntry[];
  for (const f of m.files) {
    const grouped = BACKBONE_ROLES.has(f.role);
    if (!grouped && f.group !== undefined) fail(`${f.path}: only backbone files have a group`);
    if (grouped && !(Number.isInteger(f.group) && f.group! >= 0 && f.group! < list.length)) {
      fail(`${f.path}: group ${String(f.group)} is not one of the ${list.length} backbone groups`);
    }
  }
  let next = 0;
  list.forEach((g, k) => {
    const [start, end] = Array.isArray(g?.layers) ? g.layers : [NaN, NaN];
    if (start !== next || !(end >= start)) fail(`backbone group ${k}: layers`);
    if (g.embed !== (k === 0) || g.finalNorm !== (k === list.length - 1)) {
      fail(`backbone group ${k}: only the first embeds and only the last ends with the norm`);
    }
    if (!Array.isArray(g.inputs) || !Array.isArray(g.outputs)) fail(`backbone group ${k}: I/O`);
    const own = graphs.filter((f) => f.group === k).length;
    if (own !== 1) fail(`backbone group ${k} has ${own} graph files`);
    const kv16 = m.files.filter((f) => f.role === 'backbone-kv16' && f.group === k).length;
    if (kv16 > 1) fail(`backbone group ${k} has ${kv16} float16-KV graph files`);
    next = end;
  });
  if (m.architecture && next !== m.architecture.numLayers) {
    fail(`the backbone groups run ${next} of ${m.architecture.numLayers} layers`);
  }
}

/** The package has float16-KV backbone graphs (converted by a version that writes them). */
export function hasFloat16Kv(m: PackageManifest): boolean {
  return m.files.some((f) => f.role === 'backbone-kv16');
}

/** The WASM-prepared twin of a graph file, if the package has one. */
export function wasmTwin(m: PackageManifest, graph: ManifestFile): ManifestFile | undefined {
  return m.files.find((f) => f.role === 'wasm-graph' && f.replaces === graph.path);
}

export function filesWithRole(m: PackageManifest, role: FileRole): ManifestFile[] {
  return m.files.filter((f) => f.role === role);
}

export function requireFile(m: PackageManifest, role: FileRole): ManifestFile {
  const f = m.files.find((x) => x.role === role);
  if (!f) throw new PackageError(`The package has no ${role} file`);
  return f;
}
