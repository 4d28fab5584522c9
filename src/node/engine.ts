/**
 * A converted package run in Node, on onnxruntime-node or on the js device (node-runtime.ts):
 * the same decision (src/core/decide.ts) and ClefRunner the browser engine uses, with Node file
 * access instead of fetch + Cache Storage. Used by `clef-web serve`, `decide`, `verify`,
 * `calibrate` and `train`.
 *
 * Loading checks (package-files.ts), before any file is used: the manifest parses, every path
 * stays inside the package directory (no `..`, absolute paths, or symlinks leading out), and every
 * file has the manifest's size and SHA-256. Small files are read once and the verified bytes are
 * the ones used; large ones (ONNX graphs, external data) are stream-hashed and onnxruntime reads
 * them from the same paths. onnxruntime-node finds a graph's external data next to the .onnx file
 * (its `externalData` session option is a web-only feature), and the converter writes the package
 * flat, so the data files the manifest lists are the ones the graphs name.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { Lexicon, RangeLexicon } from '../clef/lexicon.js';
import { encodeRequest, type EncodedRequest } from '../clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../clef/tokenizer.js';
import type { SpanMeanSource } from '../clef/head-inputs.js';
import { PackageError } from '../wire/errors.js';
import {
  requireFile,
  type ManifestFile,
  type PackageManifest,
  type KvDtype,
} from '../core/manifest.js';
import { LaneQueue, type JobContext } from '../core/queue.js';
import { openRunnerGraphs, type OpenedGraphs } from '../core/runner-graphs.js';
import type { SystemOneResponse, ValidRequest } from '../protocol/types.js';
import {
  calibrationAsk,
  type CalibratedDecision,
  type CalibrationAsk,
  type CalibrationFile,
} from '../calibrate/index.js';
import { checkCalibrationAsk, decide, decisionModel } from '../core/decide.js';
import type { UntrainedPart } from '../core/untrained.js';
import { DEFAULT_CACHE_BUDGET_BYTES, packageChunkTokens } from '../core/defaults.js';
import { readPackageCalibration } from '../core/calibration.js';
import { refuseUnknownOptions } from '../core/option-names.js';
import { openNodeRuntime, type NodeRuntimeName, type NodeRuntimeRequest } from './node-runtime.js';
import { checkChunkTokens, RunnerSet } from './runner-set.js';
import { readManifestAndHash, verifyPackageFiles } from './package-files.js';

export interface NodeEngineOptions {
  chunkTokens?: number;
  /** Tokens × keys per backbone run (src/core/chunk-plan.ts; default 256 × 4,096). */
  scoreBudget?: number;
  cacheBudgetBytes?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice). */
  threads?: number;
  /**
   * What runs the graphs: 'onnxruntime' (onnxruntime-node, native), 'js' (the graphs interpreted
   * in TypeScript, no dependency), or 'auto' (default): onnxruntime-node when it is installed,
   * else js.
   */
  runtime?: NodeRuntimeRequest;
  /**
   * The KV cache's precision between runs (default float32): float16 runs the package's kv16
   * graphs, halving the state a long context holds; answers move within docs/clef-recipe.md §5's bound.
   */
  kvDtype?: KvDtype;
  /**
   * onnxruntime's CPU memory arena (default true). Off, buffers go back to the allocator after
   * each run instead of staying reserved for sizes that recur.
   */
  memoryArena?: boolean;
}

/** Every NodeEngineOptions name (the compiler checks this list is whole): others are refused. */
const NODE_ENGINE_OPTIONS: Record<keyof NodeEngineOptions, true> = {
  chunkTokens: true,
  scoreBudget: true,
  cacheBudgetBytes: true,
  threads: true,
  kvDtype: true,
  memoryArena: true,
  runtime: true,
};

export interface RunOptions {
  /**
   * Feed the backbone this many tokens per run instead of the engine's default (verification
   * feeds small uneven chunks); the sessions are shared, each chunk size has its own cache.
   */
  chunkTokens?: number;
  /**
   * Opt-in: also return `calibrated` (calibrated probabilities, prediction sets, abstention)
   * from the package's calibration file; throws calibration_unavailable when it has none.
   */
  calibration?: boolean | CalibrationAsk;
}

export interface NodeDecision {
  response: SystemOneResponse;
  /** The response as the wire carries it (Python-exact JSON). */
  json: string;
  /** One array per question (request order), one logit per option in encoded order. */
  logits: Float32Array[];
  encoded: EncodedRequest;
  /** Only when asked for (RunOptions.calibration): beside the body, never inside it. */
  calibrated?: CalibratedDecision;
  /**
   * For a package `clef-web train` wrote: what the request asks that it was not trained on (a
   * question, option id or description); absent when nothing. The body is unchanged.
   */
  untrained?: UntrainedPart[];
  /** Where the time went (ms); totalMs from validation to the answer. */
  timings: NodeTimings;
}

export interface NodeTimings {
  encodeMs: number;
  backboneMs: number;
  headMs: number;
  totalMs: number;
  prefixHit: boolean;
}

export interface NodeEngine {
  readonly manifest: PackageManifest;
  readonly tokenizer: ClefTokenizer;
  /** Model names a request may use: the package's name, then its aliases. */
  readonly models: readonly string[];
  /** Backbone tokens per run unless a call asks for another chunk size. */
  readonly chunkTokens: number;
  /** The package's verified calibration file, or null when it ships none. */
  readonly calibration: CalibrationFile | null;
  /** SHA-256 of the package's manifest.json bytes (which pin every file's SHA-256). */
  readonly manifestSha256: string;
  /** What runs the graphs, and why that one. */
  readonly runtime: NodeRuntimeName;
  readonly runtimeReason: string;
  /** Validates, encodes and decides one System One request body; throws SystemOneError. */
  decide(body: unknown, run?: RunOptions): Promise<NodeDecision>;
  /** Logits of an already validated request. */
  logits(
    request: ValidRequest,
    run?: RunOptions,
  ): Promise<{ logits: Float32Array[]; encoded: EncodedRequest }>;
  dispose(): Promise<void>;
}

function parseJsonFile(file: ManifestFile, data: Uint8Array | undefined): object {
  if (data === undefined) throw new PackageError(`${file.path}: too large for a JSON file`);
  try {
    return JSON.parse(new TextDecoder().decode(data)) as object;
  } catch (e) {
    throw new PackageError(`${file.path}: not JSON (${(e as Error).message})`);
  }
}

/** The lm_head rows: in memory when small, else read row by row from the file. */
async function openLexicon(
  path: string,
  data: Uint8Array | undefined,
): Promise<{ lexicon: SpanMeanSource; handle: FileHandle | null }> {
  if (data !== undefined) return { lexicon: new Lexicon(data), handle: null };
  const handle = await open(path, 'r');
  try {
    const lexicon = await RangeLexicon.open(async (start, end) => {
      const out = new Uint8Array(end - start);
      const { bytesRead } = await handle.read(out, 0, out.length, start);
      if (bytesRead !== out.length) throw new PackageError(`${path}: short read`);
      return out;
    });
    return { lexicon, handle };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/**
 * Loads and verifies a package directory; the engine holds a session per graph (the backbone,
 * or each of its groups, and the two head graphs) on onnxruntime-node or the js device. An
 * option it does not know is refused (a TypeError naming it and the nearest one it knows).
 */
export async function loadNodePackage(
  dir: string,
  options: NodeEngineOptions = {},
): Promise<NodeEngine> {
  refuseUnknownOptions('loadNodePackage', options, Object.keys(NODE_ENGINE_OPTIONS));
  const runtime = await openNodeRuntime(options.runtime ?? 'auto', options);
  const { manifest, sha256: manifestSha256 } = await readManifestAndHash(dir);
  const chunkTokens = options.chunkTokens ?? packageChunkTokens(manifest);
  checkChunkTokens(chunkTokens);
  const verified = await verifyPackageFiles(dir, manifest);
  const pathOf = (f: ManifestFile) => verified.paths.get(f.path) as string;
  const bytesOf = (f: ManifestFile) => verified.bytes.get(f.path);
  const calibration = readPackageCalibration(manifest, bytesOf);

  const tokenizerFile = requireFile(manifest, 'tokenizer');
  const configFile = manifest.files.find((f) => f.role === 'tokenizer-config');
  const tokenizer = loadTokenizerSync(
    parseJsonFile(tokenizerFile, bytesOf(tokenizerFile)),
    configFile ? parseJsonFile(configFile, bytesOf(configFile)) : undefined,
  );
  const lexiconFile = requireFile(manifest, 'lexicon');

  let opened: OpenedGraphs | null = null;
  let handle: FileHandle | null = null;
  try {
    // The runtime finds a graph's external data among the package's verified files.
    opened = await openRunnerGraphs(manifest, options.kvDtype, {
      open: ({ file }) => runtime.createSession(file, manifest.files, pathOf),
    });
    const lexicon = await openLexicon(pathOf(lexiconFile), bytesOf(lexiconFile));
    handle = lexicon.handle;
    const cacheBudgetBytes = options.cacheBudgetBytes ?? DEFAULT_CACHE_BUDGET_BYTES;
    const runners = new RunnerSet(
      runtime.adapter,
      opened.graphs,
      lexicon.lexicon,
      chunkTokens,
      cacheBudgetBytes,
      manifest.architecture.headWidth,
      options.scoreBudget,
    );
    return newEngine(manifest, manifestSha256, tokenizer, runners, handle, calibration, runtime);
  } catch (e) {
    await opened?.release();
    await handle?.close();
    throw e;
  }
}

function newEngine(
  manifest: PackageManifest,
  manifestSha256: string,
  tokenizer: ClefTokenizer,
  runners: RunnerSet,
  handle: FileHandle | null,
  calibration: CalibrationFile | null,
  runtime: { name: NodeRuntimeName; reason: string },
): NodeEngine {
  const model = decisionModel(manifest, tokenizer, calibration);
  // One request at a time: a runner's prefix cache and state tensors are not re-entrant.
  // Nothing cancels a Node request, so a job's context never reports one.
  const queue = new LaneQueue(1);
  let nextJob = 1;
  const serial = <T>(job: (ctx: JobContext) => Promise<T>): Promise<T> =>
    queue.push(nextJob++, job);
  let disposed = false;
  const run = (encoded: EncodedRequest, options: RunOptions) =>
    serial(async (ctx) => {
      if (disposed) throw new Error('The engine was disposed');
      return runners.get(options.chunkTokens).run(encoded, ctx);
    });
  return {
    manifest,
    tokenizer,
    models: model.models,
    chunkTokens: runners.defaultChunkTokens,
    calibration,
    manifestSha256,
    runtime: runtime.name,
    runtimeReason: runtime.reason,
    async logits(request, options = {}) {
      const encoded = encodeRequest(tokenizer, request, { maxTokens: manifest.contextTokens });
      return { logits: (await run(encoded, options)).logits, encoded };
    },
    async decide(body, options = {}) {
      const ask = calibrationAsk(options.calibration);
      checkCalibrationAsk(model, ask); // refuse before running
      const t0 = performance.now();
      const decided = await decide(model, body, (encoded) => run(encoded, options), ask);
      const { response, json, logits, encoded, calibrated, untrained, run: ran } = decided;
      const timings: NodeTimings = {
        encodeMs: decided.encodeMs,
        backboneMs: ran.backboneMs,
        headMs: ran.headMs,
        totalMs: performance.now() - t0,
        prefixHit: ran.prefixHit,
      };
      return {
        response,
        json,
        logits,
        encoded,
        timings,
        ...(calibrated ? { calibrated } : {}),
        ...(untrained ? { untrained } : {}),
      };
    },
    dispose: () =>
      serial(async () => {
        if (disposed) return;
        disposed = true;
        await runners.dispose();
        await handle?.close();
      }),
  };
}
