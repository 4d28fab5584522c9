/**
 * The page API. Everything heavy runs in a dedicated module Worker behind Comlink; this side
 * only forwards calls, turns wire errors back into typed errors and serves `clef.fetch`.
 */
import * as Comlink from 'comlink';
import type { ModelCard, SystemOneRequest, SystemOneResponse } from '../protocol/types.js';
import { validateRequest } from '../protocol/validate.js';
import { AbortedError, DisposedError, EngineError, WorkerLostError } from '../wire/errors.js';
import {
  fromWireError,
  type DecisionWire,
  type EngineInfo,
  type FaultSimulation,
  type LoadOptionsWire,
  type LoadProgress,
  type WireResult,
} from '../wire/wire.js';
import { connect, type Connection } from './connection.js';
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
  /** 'auto' (default): WebGPU when it can run the package, else WASM. */
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

function unwrap<T>(result: WireResult<T>): T {
  if (result.ok) return result.value;
  throw fromWireError(result.error);
}

/** A request the page sent (or will send) to the worker and has no answer for yet. */
interface Pending {
  id: number;
  body: unknown;
  /** Calibrated answers asked for (null: the plain decision). */
  ask: CalibrationAsk | null;
  resolve: (wire: DecisionWire) => void;
  reject: (error: unknown) => void;
  /** The worker it was sent to; null while waiting for a replacement worker. */
  sentTo: Connection | null;
  aborted: boolean;
}

/** Structured clone refused the body (a function, a symbol): answer as the contract says. */
function cloneFailure(body: unknown, error: unknown): Error {
  validateRequest(body); // throws the 422 for what is not JSON
  return new EngineError(`The request could not be sent to the engine: ${String(error)}`);
}

/** The bundled clef-nano's URL in a page served with the `clef-web/vite` plugin. */
export const BUNDLED_MODEL_URL = BUNDLED_MODEL_PATH;

/**
 * Switches for tests and benchmarks, never in ClefOptions: the page API's own tests and the
 * benchmarks reach them through createInstrumentedClef, which the package root does not export.
 */
export interface InstrumentOptions {
  /** Fault and fallback hooks the engine honours (wire.ts FaultSimulation). */
  simulate?: FaultSimulation;
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
  const { simulate, wasmBuild, ...rest } = options;
  return openClef(rest, { simulate, wasmBuild });
}

async function openClef(options: ClefOptions, instrument: InstrumentOptions): Promise<Clef> {
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
  const defaultAsk = calibrationAsk(options.calibration);
  const recorder = pageRecorder(options.record, 'page');
  const given = options.worker;
  let givenUsed = false;
  const makeWorker = (): Worker => {
    if (typeof given === 'function') return given();
    if (!given) return defaultWorker();
    if (givenUsed) throw new WorkerLostError('The Worker given to createClef was lost');
    givenUsed = true;
    return given;
  };
  const loadOptions: LoadOptionsWire = {
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
  let disposed = false;
  let nextId = 1;
  /** In send order: the worker serves its queue in that order too. */
  const pending = new Map<number, Pending>();
  let current: Connection | null = await connect(makeWorker(), loadOptions, options.onProgress);
  let restarting: Promise<Connection> | null = null;

  function settle(p: Pending, work: () => DecisionWire): void {
    if (pending.get(p.id) !== p) return;
    pending.delete(p.id);
    try {
      p.resolve(work());
    } catch (e) {
      p.reject(e);
    }
  }

  function send(p: Pending, conn: Connection): void {
    p.sentTo = conn;
    const call =
      p.ask === null ? conn.api.systemone(p.id, p.body) : conn.api.systemone(p.id, p.body, p.ask);
    call.then(
      (result) => p.sentTo === conn && settle(p, () => unwrap(result)),
      (error: unknown) =>
        p.sentTo === conn &&
        settle(p, () => {
          throw cloneFailure(p.body, error);
        }),
    );
  }

  /**
   * The worker is gone. The request it was running (the oldest one sent to it) fails with
   * WorkerLostError: it may be what killed the worker, so it is not retried. Requests queued
   * behind it go to a new worker, in their order, and are answered as if nothing happened.
   */
  function onLost(conn: Connection, reason: string): void {
    if (disposed || conn !== current) return;
    conn.close();
    current = null;
    const sent = [...pending.values()].filter((p) => p.sentTo === conn);
    sent.forEach((p, index) => {
      p.sentTo = null;
      if (p.aborted) {
        pending.delete(p.id);
        p.reject(new AbortedError('The request was aborted while queued'));
      } else if (index === 0) {
        pending.delete(p.id);
        p.reject(
          new WorkerLostError(
            `The engine's worker was lost while this request was running: ${reason}`,
            { reason },
          ),
        );
      }
    });
    void connection().then(
      (fresh) => {
        for (const p of pending.values()) if (!p.sentTo) send(p, fresh);
      },
      () => undefined,
    );
  }

  function watch(conn: Connection): Connection {
    void conn.lost.then((reason) => onLost(conn, reason));
    return conn;
  }
  watch(current);

  /** The live worker, or a new one when the last was lost (one restart at a time). */
  function connection(): Promise<Connection> {
    if (current) return Promise.resolve(current);
    if (disposed) return Promise.reject(new DisposedError());
    restarting ??= (async () => {
      try {
        // One-shot fault hooks happened in the lost worker; they are not armed again.
        const { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage } =
          loadOptions.simulate ?? {};
        const again = {
          ...loadOptions,
          simulate: { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage },
        };
        const fresh = await connect(makeWorker(), again);
        if (disposed) {
          fresh.close();
          throw new DisposedError();
        }
        current = watch(fresh);
        return current;
      } catch (e) {
        const error = new WorkerLostError(
          `The engine's worker was lost and could not be restarted: ${(e as Error).message}`,
        );
        for (const p of [...pending.values()]) {
          if (p.sentTo) continue;
          pending.delete(p.id);
          p.reject(error);
        }
        throw error;
      } finally {
        restarting = null;
      }
    })();
    return restarting;
  }

  /** The local decision, recorded (when asked) before it is returned. */
  async function decideLocally(request: unknown, opts: DecideOptions = {}): Promise<DecisionWire> {
    const wire = await decideInWorker(request, opts);
    if (recorder) {
      const ask = opts.calibration === undefined ? defaultAsk : calibrationAsk(opts.calibration);
      await recorder(request, wire, ask, await currentInfo());
    }
    return wire;
  }

  async function decideInWorker(request: unknown, opts: DecideOptions = {}): Promise<DecisionWire> {
    if (disposed) throw new DisposedError();
    const { signal } = opts;
    if (signal?.aborted) throw new AbortedError();
    const ask = opts.calibration === undefined ? defaultAsk : calibrationAsk(opts.calibration);
    const id = nextId++;
    return new Promise<DecisionWire>((resolve, reject) => {
      const onAbort = () => {
        if (pending.get(id) !== p) return;
        p.aborted = true;
        if (p.sentTo) void p.sentTo.api.cancel(id);
        else
          settle(p, () => {
            throw new AbortedError('The request was aborted while queued');
          });
      };
      const done = () => signal?.removeEventListener('abort', onAbort);
      const p: Pending = {
        id,
        body: request,
        ask,
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
        sentTo: null,
        aborted: false,
      };
      pending.set(id, p);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (current) send(p, current);
      else
        void connection().then(
          (conn) => !p.sentTo && pending.has(id) && send(p, conn),
          () => undefined,
        );
    });
  }

  const decide = options.remote
    ? escalating(options.remote, decideLocally, () => {
        if (disposed) throw new DisposedError();
      })
    : decideLocally;

  const currentInfo = async (): Promise<EngineInfo> => {
    if (disposed) throw new DisposedError();
    return unwrap(await (await connection()).api.info());
  };

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
    async dispose() {
      if (disposed) return;
      disposed = true;
      const conn = current;
      current = null;
      try {
        if (conn) await Promise.race([conn.api.dispose(), conn.lost]);
      } finally {
        for (const p of [...pending.values()]) {
          pending.delete(p.id);
          p.reject(new DisposedError());
        }
        if (conn) {
          conn.api[Comlink.releaseProxy]();
          conn.close();
        }
      }
    },
  };
}
