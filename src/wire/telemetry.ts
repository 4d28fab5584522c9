/**
 * What `info()` reports (the engine, its package, where its time and memory went) and what each
 * decision's timings say, as plain data from the worker.
 */
import type { JsonValue } from '../protocol/types.js';
import type { DeviceName } from './devices.js';

export interface EngineCounters {
  decisions: number;
  /** Tokens run through the backbone (a prefix-cache hit runs only the schema and suffix). */
  backboneTokens: number;
  prefixHits: number;
  prefixMisses: number;
  cacheEntries: number;
  cacheBytes: number;
  /**
   * Bytes the current session's graphs handed back to the CPU: on WebGPU, bytes read back from
   * the GPU; on WASM every output. Cumulative; it restarts when a fallback replaces the session.
   */
  readbackBytes: number;
  /**
   * Requests queued or running right now (0 when idle: an aborted request frees its slot); of a
   * shared engine, every tab's.
   */
  pending: number;
  /**
   * The pages using this engine now: 1 for a dedicated worker; for a shared one
   * (`createClef({ shared: true })`), each createClef of each tab that holds it.
   */
  tabs: number;
  /**
   * The engine's own warm-up decision is queued or running (it is not counted in `pending`);
   * while it is, the tensors it holds count in `liveTensors`.
   */
  warmingUp: boolean;
  /**
   * onnxruntime tensors the engine created (inputs, outputs, state) and has not disposed yet,
   * those the prefix cache holds included. Idle (`pending` 0, not `warmingUp`), it equals
   * `cachedTensors`; anything above is a leak. Restarts when a fallback replaces the session.
   */
  liveTensors: number;
  /** Tensors held by the prefix cache (backbone state and memory rows of each entry). */
  cachedTensors: number;
}

/**
 * What `clef-web train` trained a package on. Only these questions and options carry
 * information; any other question, option id or description gets a meaningless answer.
 */
export interface TrainingSummary {
  method: string;
  questions: Array<{
    id: string;
    type: 'choice';
    options: string[];
    /**
     * The instructions most training requests gave (null: none), and per option every
     * description they gave it, the most common first (null: none). Absent from packages
     * trained before clef-web recorded them; then only ids and options are known.
     */
    instructions?: string | null;
    descriptions?: Record<string, JsonValue[]>;
  }>;
  examples: { train: number; heldOut: number };
  /** What the accuracies were measured on: the held-out part, or the training part out of fold. */
  evaluatedOn?: 'held-out' | 'cross-fit';
  /** Per question: the model's accuracy on those examples (null where none was judged). */
  heldOutAccuracy: Record<string, number | null>;
  /** Per question: naive Bayes on word counts, fitted and judged the same way. */
  baselineAccuracy?: Record<string, number | null>;
  /**
   * Per question: logistic regression on word and word-pair counts, fitted and judged the same
   * way (null where it was not fitted: the card says why). Absent from older packages.
   */
  logisticAccuracy?: Record<string, number | null>;
  seed: number;
  note: string;
}

export interface EngineInfo {
  model: string;
  aliases: string[];
  description: string;
  /** YYYY-MM-DD */
  releaseDate: string;
  packageUrl: string;
  manifestSha256: string;
  /** SHA-256 of the package's calibration file (as its manifest pins it), or null: none. */
  calibrationSha256: string | null;
  dtype: string;
  device: DeviceName;
  adapter: string | null;
  /** Why the engine runs on something other than the first choice, or null. */
  fallbackReason: string | null;
  /**
   * Why the engine runs on this device: the request ("device 'wasm' requested"), auto's choice
   * ("auto: WASM, because the WebGPU adapter (google swiftshader) is a software fallback ..."),
   * or the fallback that moved it.
   */
  deviceReason: string;
  /** The KV cache's precision between backbone runs (float16: the package's kv16 graphs). */
  kvDtype: 'float32' | 'float16';
  /** Why: "auto: float16, the WebGPU adapter has shader-f16", "kvDtype 'float16' requested" ... */
  kvReason: string;
  /**
   * How many graphs the session created from the package's WASM-prepared files (optimised by
   * the converter, so not at load): 0 on WebGPU, with preparedGraphs false, or for a package
   * converted without them.
   */
  preparedGraphs: number;
  /**
   * For a package `clef-web train` wrote: the questions and options it was trained on, the only
   * ones it answers with meaning (manifest `training`); null for other packages.
   */
  training: TrainingSummary | null;
  contextTokens: number;
  /** WASM threads: `min(4, cores - 1)` in a cross-origin-isolated page, else 1. */
  threads: number;
  /**
   * Why `threads` is fewer than the page allows, else null: a server without COEP on /ort/
   * (loadMs.runtime.threadsReason), or thread workers whose start never returned, twice
   * (src/client/placement.ts).
   */
  threadsReason: string | null;
  loadMs: LoadPhases;
  /** Why package files are not cached locally, or null when they are. */
  cacheProblem: string | null;
  counters: EngineCounters;
  /**
   * Where the engine runs: 'shared', one SharedWorker for every tab of this origin that asks
   * for the same package with the same options (`createClef({ shared: true })`); 'dedicated',
   * a worker of this page alone.
   */
  worker: 'shared' | 'dedicated';
  /** Why: what was asked, or why `shared: true` fell back to a dedicated worker. */
  workerReason: string;
}

/** EngineInfo as the engine's worker reports it; the page adds where the engine runs. */
export type HostInfo = Omit<EngineInfo, 'worker' | 'workerReason'>;

/** How the runtime for a device came up (src/engine/ort.ts RuntimeStart). */
export interface RuntimePhases {
  /**
   * The onnxruntime-web entry loaded: 'onnxruntime-web/wasm' or 'onnxruntime-web/webgpu'; 'clef-web js'
   * for the js device, which loads no runtime.
   */
  build: string;
  /** Importing its JavaScript (ms). */
  importMs: number;
  /** Fetching, compiling and instantiating its wasm and starting the back end (ms). */
  initMs: number;
  /**
   * Of initMs, the wasm's fetch, compile and instantiation (`WebAssembly.instantiateStreaming`),
   * timed only by the instrumented test worker (test/support/instrumented-worker/wasm-timing.ts):
   * null from the shipped worker, and when the runtime did not stream it. The rest is the runtime's
   * own start (its environment and first session, on WebGPU its device too).
   */
  instantiateMs: number | null;
  /** The wasm's fetch as resource timing saw it (ms), when it did. */
  wasmFetchMs: number | null;
  /** Wasm bytes that crossed the network (0 when the HTTP cache answered), when known. */
  wasmTransferBytes: number | null;
  /**
   * 'cache': the wasm from the browser's HTTP cache (a hit or a 304; where Chromium kept it, its
   * compiled code too), 'network': its bytes were downloaded, 'none': the device loads no wasm
   * (js).
   */
  wasmSource: 'cache' | 'network' | 'none';
  /** The threads the runtime was started with. */
  threads: number;
  /** Why fewer threads than the page allows (a server without COEP on /ort/), else null. */
  threadsReason: string | null;
}

/**
 * Where `createClef` spent its time, in ms. The runtime starts as soon as the device is known
 * (from the request and the browser, or else from the manifest), while the package downloads,
 * so `total` is less than the sum of the phases.
 */
export interface LoadPhases {
  /** Fetching the package files (network or Cache Storage), in all. */
  download: number;
  /** SHA-256 of every file. */
  verify: number;
  /** Parsing the tokenizer. */
  tokenizer: number;
  /**
   * Creating the sessions (waiting for the runtime included), without the fetches made along the
   * way: the sessions fetch their files as they go, one backbone group at a time.
   */
  compile: number;
  /** The runtime's start, overlapped with the download; null if the device never started. */
  runtime: RuntimePhases | null;
  /**
   * Session creation per graph: backbone, headMemory, headDecide; a split backbone has
   * backbone.0, backbone.1, ... instead of backbone.
   */
  sessions: Record<string, number>;
  /** The backbone's graphs (one, or each group of a split backbone), in the order created. */
  backboneGroups: GroupLoad[];
  /**
   * The most package bytes the engine referenced at once while loading (files fetched and not
   * yet let go: a backbone group until its session exists, the lexicon's rows for good). For a
   * split backbone about one group plus the lexicon; for a single graph, the whole backbone.
   */
  peakHeldBytes: number;
  /**
   * Where the lm_head rows are read from: 'memory' (held in the worker), or 'cache-storage'
   * (a big rows file, about 1 GB for Clef-flash, read row by row from its cached copy on disk).
   */
  lexicon?: 'memory' | 'cache-storage';
  /**
   * The engine's own warm-up decision after load (ms, the try that finished), or null until it
   * has finished: it gives way to requests and, on WASM, finishes once the engine is idle. Null
   * for good with warmUp false, or when it failed or gave way on its last try (on WebGPU, its
   * only one).
   */
  warmup: number | null;
  /** Load, from the worker's first message to ready (warm-up not included). */
  total: number;
}

/** How one backbone graph was loaded (info().loadMs.backboneGroups). */
export interface GroupLoad {
  group: number;
  /** The layers [start, end) it runs ([0, 0]: the embedding alone). */
  layers: [number, number];
  /** Bytes of its graph and external data files. */
  bytes: number;
  /** Fetching them (Cache Storage or network) and verifying their SHA-256 (ms). */
  fetchMs: number;
  /** InferenceSession.create, and on WebGPU the upload queue draining after it (ms). */
  createMs: number;
}

export interface DecisionTimings {
  encodeMs: number;
  backboneMs: number;
  headMs: number;
  totalMs: number;
  prefixHit: boolean;
  backboneTokens: number;
  /**
   * Only from a shared engine (createClef({ shared: true })): how long the request waited for
   * the engine (ms), and behind how many decisions (any tab's): the one running when it came,
   * and those that started before it. Each tab waits in a line of its own, so a tab sending one
   * request at a time waits behind at most the one decision that was running.
   */
  queue?: { waitedMs: number; behind: number };
}
