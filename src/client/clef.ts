/**
 * The page API. Everything heavy runs in a dedicated module Worker behind Comlink; this side
 * only forwards calls, turns wire errors back into typed errors and serves `clef.fetch`.
 */
import * as Comlink from 'comlink';
import type { ModelCard, SystemOneRequest, SystemOneResponse } from '../protocol/types.js';
import { AbortedError, DisposedError } from '../engine/errors.js';
import {
  fromWireError,
  type DecisionWire,
  type EngineInfo,
  type LoadProgress,
  type WireResult,
  type WorkerApi,
} from '../engine/wire.js';
import { checkRemoteOptions, escalating, type RemoteOptions } from './escalation.js';
import { handleRoute } from './routes.js';

export interface ClefOptions {
  /** URL of a converted package directory (the one holding manifest.json). */
  model: string | URL;
  /** 'auto' (default): WebGPU when it can run the package, else WASM. */
  device?: 'auto' | 'webgpu' | 'wasm';
  /** Refuse a package whose dtype differs (fp32, fp16, q8, q4, mixed). */
  dtype?: string;
  onProgress?: (progress: LoadProgress) => void;
  /** Memory the prefix cache may hold (default 256 MiB). */
  cacheBudgetBytes?: number;
  /** Keep package files in Cache Storage (default true). */
  cache?: boolean;
  /** A worker to use instead of the bundled one (it must run workers/clef.worker). */
  worker?: Worker;
  /**
   * Opt-in remote escalation (off by default): send every request, or those answered locally
   * with a confidence below `when.below`, to a System One server. Responses then carry
   * `answered_by: 'local' | 'remote'`. See escalation.ts for the failure policy.
   */
  remote?: RemoteOptions;
  /** Test hooks for the fallback paths. */
  simulate?: { noWebgpu?: boolean; failWebgpuLoad?: boolean };
}

export interface DecideOptions {
  signal?: AbortSignal;
}

export interface Clef {
  /** Decides a System One request; resolves to exactly the response body. */
  systemone(
    request: SystemOneRequest | unknown,
    options?: DecideOptions,
  ): Promise<SystemOneResponse>;
  /** Like systemone, with the JSON text (request key order kept) and timings. */
  decide(request: SystemOneRequest | unknown, options?: DecideOptions): Promise<DecisionWire>;
  /** A fetch-compatible function serving the System One routes (give it to System One SDKs). */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  models: { list(): Promise<{ models: ModelCard[] }> };
  info(): Promise<EngineInfo>;
  dispose(): Promise<void>;
}

function unwrap<T>(result: WireResult<T>): T {
  if (result.ok) return result.value;
  throw fromWireError(result.error);
}

export const DEFAULT_CACHE_BUDGET = 256 * 1024 * 1024;

function defaultWorker(): Worker {
  return new Worker(new URL('../../workers/clef.worker.ts', import.meta.url), {
    type: 'module',
    name: 'clef-web',
  });
}

export async function createClef(options: ClefOptions): Promise<Clef> {
  if (options.remote) checkRemoteOptions(options.remote);
  const worker = options.worker ?? defaultWorker();
  const api = Comlink.wrap<WorkerApi>(worker);
  const modelUrl = new URL(String(options.model), globalThis.location?.href).href;
  const onProgress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
  let disposed = false;
  let nextId = 1;

  let info: EngineInfo;
  try {
    info = unwrap(
      await api.load(
        {
          model: modelUrl,
          device: options.device ?? 'auto',
          dtype: options.dtype,
          cacheBudgetBytes: options.cacheBudgetBytes ?? DEFAULT_CACHE_BUDGET,
          cache: options.cache ?? true,
          simulate: options.simulate,
        },
        onProgress,
      ),
    );
  } catch (e) {
    worker.terminate();
    throw e;
  }

  async function decideLocally(request: unknown, opts: DecideOptions = {}): Promise<DecisionWire> {
    if (disposed) throw new DisposedError();
    const { signal } = opts;
    if (signal?.aborted) throw new AbortedError();
    const id = nextId++;
    const onAbort = () => void api.cancel(id);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return unwrap(await api.systemone(id, request));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  const decide = options.remote
    ? escalating(options.remote, decideLocally, () => {
        if (disposed) throw new DisposedError();
      })
    : decideLocally;

  const models = async (): Promise<ModelCard[]> => {
    const current = unwrap(await api.info());
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
        models,
      }),
    models: { list: async () => ({ models: await models() }) },
    async info() {
      if (disposed) throw new DisposedError();
      info = unwrap(await api.info());
      return info;
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        await api.dispose();
      } finally {
        api[Comlink.releaseProxy]();
        worker.terminate();
      }
    },
  };
}
