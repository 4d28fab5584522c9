/**
 * The page API. Everything heavy runs in a dedicated module Worker behind Comlink; this side
 * only forwards calls, turns wire errors back into typed errors and serves `clef.fetch`.
 */
import type { ModelCard, SystemOneRequest, SystemOneResponse } from '../protocol/types.js';
import { DisposedError, WorkerLostError } from '../wire/errors.js';
import type {
  DecisionWire,
  EngineInfo,
  FaultSimulation,
  LoadOptionsWire,
  LoadProgress,
} from '../wire/wire.js';
import { connect } from './connection.js';
import { unwrap, WorkerSession } from './worker-session.js';
import { defaultWorker } from './default-worker.js';
import { checkRemoteOptions, escalating, type RemoteOptions } from './escalation.js';
import { handleRoute } from '../http/routes.js';
import { calibrationAsk, type CalibrationAsk } from '../calibrate/index.js';
import { BUNDLED_MODEL_PATH } from '../wire/assets.js';
import { DEFAULT_CACHE_BUDGET_BYTES } from '../core/defaults.js';
import type { DeviceRequest } from '../core/devices.js';
import { pageRecorder, storedRecordsJsonl, type RecordOptions } from './records.js';

export interface ClefOptions {
  /**
   * URL of a converted package directory (the one holding manifest.json). Default: the bundled
   * clef-nano at `/clef-web/models/clef-nano/`, which the `clef-web/vite` plugin serves.
   */
  model?: string | URL;
  /**
   * 'auto' (default): the js device (the graphs in TypeScript, nothing of onnxruntime fetched)
   * when its estimated first answers on this package come first, else WebGPU when it can run the
   * package, else WASM; `info().deviceReason` says why. 'js', 'webgpu' and 'wasm' force one.
   */
  device?: DeviceRequest;
  /** Refuse a package whose dtype differs (fp32, fp16, q8, q4, mixed). */
  dtype?: string;
  onProgress?: (progress: LoadProgress) => void;
  /** Memory the prefix cache may hold (default 256 MiB). */
  cacheBudgetBytes?: number;
  /** Keep package files in Cache Storage (default true). */
  cache?: boolean;
  /**
   * Right after load, the engine makes one small decision of its own (default true), queued
   * before any request: the browser compiles and tiers up onnxruntime's code (and, on a GPU,
   * the shaders) then, so the page's first real decision runs at settled speed, and Chromium
   * has compiled code to keep for the next visit. A request that arrives meanwhile goes first;
   * on WASM the warm-up then finishes once the engine is idle. It is not counted in
   * info().counters and never touches the prefix cache; `info().loadMs.warmup` says what it
   * cost. false skips it.
   */
  warmUp?: boolean;
  /**
   * The KV cache's precision: the state a long input holds between backbone runs and in the
   * prefix cache. 'auto' (default): float16 on a WebGPU adapter with shader-f16 when the package
   * has float16-KV graphs, float32 otherwise. 'float16' asks for it on WASM too (half the KV
   * memory; answers move within the bound docs/clef-recipe.md §5 gives); 'float32' never uses it.
   * `info().kvDtype` and `kvReason` say what was chosen.
   */
  kvDtype?: 'auto' | 'float32' | 'float16';
  /**
   * On WASM, create the graphs the converter optimised once for WASM (`*.wasm.onnx`, where the
   * package has them) instead of optimising the package graphs at load (default true: a faster
   * load, the same answers bit for bit). false fetches and optimises the package graphs, as
   * WebGPU always does. `info().preparedGraphs` counts the prepared graphs in use.
   */
  preparedGraphs?: boolean;
  /**
   * A worker to use instead of the bundled one (it must run workers/clef.worker), or a function
   * that makes one. With a function (or the bundled worker) a lost worker is replaced by a new
   * one; a lost Worker object cannot be, and later calls reject with WorkerLostError.
   */
  worker?: Worker | (() => Worker);
  /**
   * Opt-in remote escalation (off by default): send every request, or those answered locally
   * with a confidence below `when.below`, to a System One server. Responses then carry
   * `answered_by: 'local' | 'remote'`. See escalation.ts for the failure policy.
   */
  remote?: RemoteOptions;
  /**
   * Opt-in calibrated answers for every decide() (default off): `DecisionWire.calibrated`
   * beside the unchanged body, from the package's calibration file (`clef-web calibrate`).
   */
  calibration?: boolean | CalibrationAsk;
  /**
   * Opt-in decision records (docs/records.md; default off): each local decision, with the
   * package and calibration that answered, kept in this origin's IndexedDB (true) or given to
   * `to`. They never leave the browser unless the page sends them.
   */
  record?: boolean | RecordOptions;
}

export interface DecideOptions {
  signal?: AbortSignal;
  /** Per call: overrides ClefOptions.calibration (false: the plain decision). */
  calibration?: boolean | CalibrationAsk;
}

export interface Clef {
  /**
   * Decides a System One request; resolves to exactly the response body (the `response` of
   * `decide`, for a caller who wants only the answer).
   */
  systemone(request: SystemOneRequest, options?: DecideOptions): Promise<SystemOneResponse>;
  /**
   * Like systemone, with the JSON text (request key order kept) and timings. Takes any body
   * (parsed JSON from elsewhere, `parseRequestJson`'s output): it is validated in full, and a
   * bad one rejects with SystemOneError (422).
   */
  decide(request: SystemOneRequest | unknown, options?: DecideOptions): Promise<DecisionWire>;
  /** A fetch-compatible function serving the System One routes (give it to System One SDKs). */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  models: { list(): Promise<{ models: ModelCard[] }> };
  info(): Promise<EngineInfo>;
  /** The decision records kept in this origin's IndexedDB, oldest first, as JSONL. */
  exportRecords(): Promise<string>;
  dispose(): Promise<void>;
}

/** The bundled clef-nano's URL in a page served with the `clef-web/vite` plugin. */
export const BUNDLED_MODEL_URL = BUNDLED_MODEL_PATH;

/**
 * Switches for tests and benchmarks, never in ClefOptions: the page API's own tests and the
 * benchmarks reach them through createInstrumentedClef, which the package root does not export.
 */
export interface InstrumentOptions {
  /** Fault and fallback hooks a test worker's EngineHooks honour (wire.ts FaultSimulation). */
  simulate?: FaultSimulation;
  /**
   * What a replacement worker (after a lost one) is loaded with instead: the caller keeps the
   * lasting switches and drops the one-shot faults, which happened in the lost worker.
   */
  simulateAfterRestart?: FaultSimulation;
  /**
   * The onnxruntime-web build the WASM device runs: 'plain' (the default: 14 MB of wasm, the
   * faster one in docs/benchmarks.md) or 'asyncify' (the WebGPU build's CPU back end, 27 MB).
   * WebGPU always loads the asyncify build.
   */
  wasmBuild?: 'plain' | 'asyncify';
}

export function createClef(options: ClefOptions = {}): Promise<Clef> {
  return openClef(options, {});
}

/** createClef with the test and benchmark switches (not exported by the package). */
export function createInstrumentedClef(
  options: ClefOptions & InstrumentOptions = {},
): Promise<Clef> {
  const { simulate, simulateAfterRestart, wasmBuild, ...rest } = options;
  return openClef(rest, { simulate, simulateAfterRestart, wasmBuild });
}

/** Refuses options of the wrong type before any worker starts. */
function checkClefOptions(options: ClefOptions): void {
  if (options.remote) checkRemoteOptions(options.remote);
  const kv = options.kvDtype;
  if (kv !== undefined && kv !== 'auto' && kv !== 'float32' && kv !== 'float16') {
    throw new TypeError(`kvDtype must be 'auto', 'float32' or 'float16', not ${String(kv)}`);
  }
  if (options.preparedGraphs !== undefined && typeof options.preparedGraphs !== 'boolean') {
    throw new TypeError(
      `preparedGraphs must be true or false, not ${String(options.preparedGraphs)}`,
    );
  }
}

/** What starts a worker: the default one, the page's factory, or the one Worker it gave (once). */
function workerFactory(given: ClefOptions['worker']): () => Worker {
  let givenUsed = false;
  return () => {
    if (typeof given === 'function') return given();
    if (!given) return defaultWorker();
    if (givenUsed) throw new WorkerLostError('The Worker given to createClef was lost');
    givenUsed = true;
    return given;
  };
}

/** The load options the worker gets, defaults filled in. */
function loadOptionsOf(options: ClefOptions, instrument: InstrumentOptions): LoadOptionsWire {
  return {
    model: new URL(String(options.model ?? BUNDLED_MODEL_URL), globalThis.location?.href).href,
    device: options.device ?? 'auto',
    dtype: options.dtype,
    cacheBudgetBytes: options.cacheBudgetBytes ?? DEFAULT_CACHE_BUDGET_BYTES,
    cache: options.cache ?? true,
    warmUp: options.warmUp ?? true,
    ...(instrument.wasmBuild ? { wasmBuild: instrument.wasmBuild } : {}),
    ...(options.kvDtype ? { kvDtype: options.kvDtype } : {}),
    ...(options.preparedGraphs !== undefined ? { preparedGraphs: options.preparedGraphs } : {}),
    simulate: instrument.simulate,
  };
}

/** The load options of a replacement worker (instrumented: the switches that outlast a loss). */
function restartOptions(loadOptions: LoadOptionsWire, instrument: InstrumentOptions) {
  return { ...loadOptions, simulate: instrument.simulateAfterRestart };
}

async function openClef(options: ClefOptions, instrument: InstrumentOptions): Promise<Clef> {
  checkClefOptions(options);
  const defaultAsk = calibrationAsk(options.calibration);
  const askOf = (opts: DecideOptions) =>
    opts.calibration === undefined ? defaultAsk : calibrationAsk(opts.calibration);
  const recorder = pageRecorder(options.record, 'page');
  const makeWorker = workerFactory(options.worker);
  const loadOptions = loadOptionsOf(options, instrument);
  const first = await connect(makeWorker(), loadOptions, options.onProgress);
  const session = new WorkerSession(first, () =>
    connect(makeWorker(), restartOptions(loadOptions, instrument)),
  );

  const currentInfo = async (): Promise<EngineInfo> => {
    if (session.disposed) throw new DisposedError();
    return unwrap(await (await session.connection()).api.info());
  };

  /** The local decision, recorded (when asked) before it is returned. */
  async function decideLocally(request: unknown, opts: DecideOptions = {}): Promise<DecisionWire> {
    const wire = await session.decide(request, opts.signal, () => askOf(opts));
    if (recorder) await recorder(request, wire, askOf(opts), await currentInfo());
    return wire;
  }

  const decide = options.remote
    ? escalating(options.remote, decideLocally, () => {
        if (session.disposed) throw new DisposedError();
      })
    : decideLocally;

  const models = async (): Promise<ModelCard[]> => {
    const current = await currentInfo();
    return [current.model, ...current.aliases].map((name) => ({
      name,
      description: `${current.model} (${current.dtype}) running in this browser on ${current.device}`,
      release_date: current.releaseDate,
    }));
  };

  return {
    async systemone(request, opts) {
      return (await decide(request, opts)).response;
    },
    decide,
    fetch: (input, init) =>
      handleRoute(new Request(input, init), {
        decide: (body, signal) => decide(body, { signal }),
        decideCalibrated: (body, ask, signal) => decide(body, { signal, calibration: ask }),
        models,
      }),
    models: { list: async () => ({ models: await models() }) },
    info: currentInfo,
    exportRecords: storedRecordsJsonl,
    dispose: () => session.dispose(),
  };
}
