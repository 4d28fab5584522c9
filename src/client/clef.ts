/**
 * The page API. Everything heavy runs in a module Worker behind Comlink (dedicated, or with
 * `shared: true` a SharedWorker for every tab: placement.ts, shared-connection.ts); this side
 * only forwards calls, turns wire errors back into typed errors and serves `clef.fetch`.
 */
import type { ModelCard, SystemOneRequest, SystemOneResponse } from '../protocol/types.js';
import { DisposedError } from '../wire/errors.js';
import type { DecisionWire, LoadOptionsWire, LoadProgress } from '../wire/wire.js';
import type { EngineInfo } from '../wire/telemetry.js';
import { unwrap, WorkerSession } from './worker-session.js';
import type { SharedWorkerFactory } from './shared-connection.js';
import { placement, sharedThreadsReason } from './placement.js';
import { refuseUnknownOptions } from '../core/option-names.js';
import { checkRemoteOptions, escalating, type RemoteOptions } from './escalation.js';
import { handleRoute } from '../http/routes.js';
import { calibrationAsk, type CalibrationAsk } from '../calibrate/index.js';
import { BUNDLED_MODEL_PATH } from '../wire/assets.js';
import { DEFAULT_CACHE_BUDGET_BYTES } from '../core/defaults.js';
import { modelCards } from '../core/model-card.js';
import type { DeviceRequest } from '../core/devices.js';
import {
  answeringEngine,
  pageRecorder,
  storedRecordsJsonl,
  type Recorder,
  type RecordOptions,
} from './records.js';

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
   * Opt-in: one engine for every tab of this origin (default false). The engine runs in a
   * SharedWorker named after the package and these options, so tabs asking for the same ones
   * share it: the package is fetched, verified and loaded once, and the prefix cache is shared;
   * each tab's requests wait in a line of their own (one tab's burst does not hold another's
   * back); a tab that closes has its requests dropped; the last tab to leave ends the worker.
   * Tabs asking for another package or other options get an engine of their own. Where
   * SharedWorker (or Web Locks) is missing, a dedicated worker runs the engine, and
   * `info().worker` and `workerReason` say so. Not with `worker`.
   */
  shared?: boolean;
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

/** What this package's own page surfaces ask of a decision beyond DecideOptions. */
export interface PageDecideOptions extends DecideOptions {
  /** Bring the head's logits across (`decide()` does; systemone() and the routes read none). */
  logits?: boolean;
  /** Records this local decision instead of the clef's own `record` (the element's `record`). */
  recorder?: Recorder;
}

export type PageDecide = (request: unknown, options?: PageDecideOptions) => Promise<DecisionWire>;

const pageDecides = new WeakMap<object, PageDecide>();

/**
 * A createClef clef's decide for this package's own surfaces (the element, the service worker
 * relay, the playground): logits only when asked for, a recorder per call. Undefined for any
 * other object (a clef made by another copy of this module, a page's own RouteClef).
 */
export function pageDecide(clef: object): PageDecide | undefined {
  return pageDecides.get(clef);
}

/** The bundled clef-nano's URL in a page served with the `clef-web/vite` plugin. */
export const BUNDLED_MODEL_URL = BUNDLED_MODEL_PATH;

/**
 * A build of the worker other than the package's, and how to run it: never in ClefOptions, and
 * the package root exports none of it. The benchmarks pick the WASM build; the test pages run
 * their own worker with load options of its own (test/browser/pages/test-clef.ts).
 */
export interface WorkerBuild {
  /** Load options that build reads, sent beside the engine's (the shipped worker reads none). */
  load?: Record<string, unknown>;
  /**
   * What a replacement worker (after a lost one) gets instead of `load`: the caller keeps what
   * lasts and drops what happened once, in the lost worker.
   */
  restartLoad?: Record<string, unknown>;
  /**
   * The onnxruntime-web build the WASM device runs: 'plain' (the default: 14 MB of wasm, the
   * faster one in docs/benchmarks.md) or 'asyncify' (the WebGPU build's CPU back end, 27 MB).
   * WebGPU always loads the asyncify build.
   */
  wasmBuild?: 'plain' | 'asyncify';
  /** The SharedWorker a shared engine runs in (a test build) instead of the bundled one. */
  sharedWorker?: SharedWorkerFactory;
}

/** Every ClefOptions name (the compiler checks this list is whole): others are refused. */
const CLEF_OPTIONS: Record<keyof ClefOptions, true> = {
  model: true,
  device: true,
  dtype: true,
  onProgress: true,
  cacheBudgetBytes: true,
  cache: true,
  warmUp: true,
  kvDtype: true,
  preparedGraphs: true,
  worker: true,
  shared: true,
  remote: true,
  calibration: true,
  record: true,
};
const WORKER_BUILD_OPTIONS: Record<keyof WorkerBuild, true> = {
  load: true,
  restartLoad: true,
  wasmBuild: true,
  sharedWorker: true,
};

export async function createClef(options: ClefOptions = {}): Promise<Clef> {
  refuseUnknownOptions('createClef', options ?? {}, Object.keys(CLEF_OPTIONS));
  return openClef(options, {});
}

/** createClef on another build of the worker (not exported by the package). */
export async function createClefWithBuild(options: ClefOptions & WorkerBuild = {}): Promise<Clef> {
  const known = [...Object.keys(CLEF_OPTIONS), ...Object.keys(WORKER_BUILD_OPTIONS)];
  refuseUnknownOptions('createClefWithBuild', options, known);
  const { load, restartLoad, wasmBuild, sharedWorker, ...rest } = options;
  return openClef(rest, { load, restartLoad, wasmBuild, sharedWorker });
}

/** Refuses options of the wrong type before any worker starts. */
function checkClefOptions(options: ClefOptions): void {
  if (options.remote) checkRemoteOptions(options.remote);
  const kv = options.kvDtype;
  if (kv !== undefined && kv !== 'auto' && kv !== 'float32' && kv !== 'float16') {
    throw new TypeError(`kvDtype must be 'auto', 'float32' or 'float16', not ${String(kv)}`);
  }
  for (const name of ['preparedGraphs', 'shared'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new TypeError(`${name} must be true or false, not ${String(value)}`);
    }
  }
  if (options.shared && options.worker) {
    throw new TypeError(
      'shared and worker cannot be combined: a shared engine runs in the bundled worker as a ' +
        'SharedWorker; leave out worker, or shared',
    );
  }
}

/** The load options the worker gets, defaults filled in; `extra`: the build's own, if any. */
function loadOptionsOf(
  options: ClefOptions,
  build: WorkerBuild,
  extra: Record<string, unknown> = {},
): LoadOptionsWire {
  return {
    ...extra,
    model: new URL(String(options.model ?? BUNDLED_MODEL_URL), globalThis.location?.href).href,
    device: options.device ?? 'auto',
    dtype: options.dtype,
    cacheBudgetBytes: options.cacheBudgetBytes ?? DEFAULT_CACHE_BUDGET_BYTES,
    cache: options.cache ?? true,
    warmUp: options.warmUp ?? true,
    ...(build.wasmBuild ? { wasmBuild: build.wasmBuild } : {}),
    ...(options.kvDtype ? { kvDtype: options.kvDtype } : {}),
    ...(options.preparedGraphs !== undefined ? { preparedGraphs: options.preparedGraphs } : {}),
  };
}

async function openClef(options: ClefOptions, build: WorkerBuild): Promise<Clef> {
  checkClefOptions(options);
  const defaultAsk = calibrationAsk(options.calibration);
  const askOf = (opts: DecideOptions) =>
    opts.calibration === undefined ? defaultAsk : calibrationAsk(opts.calibration);
  const recorder = pageRecorder(options.record, 'page');
  const where = placement(options.worker, options.shared, build.sharedWorker);
  const first = await where.connect(loadOptionsOf(options, build, build.load), options.onProgress);
  const session = new WorkerSession(first, () =>
    where.connect(loadOptionsOf(options, build, build.restartLoad)),
  );

  const currentInfo = async (): Promise<EngineInfo> => {
    if (session.disposed) throw new DisposedError();
    const info = unwrap(await (await session.connection()).api.info());
    const threadsReason = where.kind === 'shared' ? sharedThreadsReason(info) : info.threadsReason;
    return { ...info, threadsReason, worker: where.kind, workerReason: where.reason };
  };

  /**
   * The local decision, recorded (when asked) before it is returned: the record names the
   * engine that answered from what came with the answer, without asking the worker again.
   */
  async function decideLocally(
    request: unknown,
    opts: PageDecideOptions = {},
  ): Promise<DecisionWire> {
    const answer = await session.decide(request, opts.signal, () => askOf(opts), opts.logits);
    const record = opts.recorder ?? recorder;
    if (record) {
      const engine = answeringEngine(answer.loaded, answer.device);
      await record(request, answer.wire, askOf(opts), engine);
    }
    return answer.wire;
  }

  const decide: PageDecide = options.remote
    ? escalating(options.remote, decideLocally, () => {
        if (session.disposed) throw new DisposedError();
      })
    : decideLocally;

  const models = async (): Promise<ModelCard[]> => {
    const current = await currentInfo();
    return modelCards({
      names: [current.model, ...current.aliases],
      model: current.model,
      dtype: current.dtype,
      releaseDate: current.releaseDate,
      where: `running in this browser on ${current.device}`,
    });
  };

  const clef: Clef = {
    async systemone(request, opts) {
      return (await decide(request, { signal: opts?.signal, calibration: opts?.calibration }))
        .response;
    },
    // The one surface that returns the head's logits (DecisionWire.logits).
    decide: (request, opts) =>
      decide(request, { signal: opts?.signal, calibration: opts?.calibration, logits: true }),
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
  pageDecides.set(clef, decide);
  return clef;
}
