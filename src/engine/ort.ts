/**
 * The only module that imports the ML runtime, and it imports only the build a device runs on
 * (src/engine/runtime-files.ts picks it): `onnxruntime-web/wasm` (the plain SIMD-threaded wasm,
 * 14.2 MB) for WASM, `onnxruntime-web/jspi` (16.8 MB, WebGPU and the CPU back end) for WebGPU
 * where the browser has JSPI, else `onnxruntime-web/webgpu` (the asyncify wasm, 26.8 MB).
 * docs/benchmarks.md has the measurements behind the choice. The wasm binaries and loaders are
 * served same-origin under `/ort/` (never a CDN): listed in src/wire/assets.ts, served by
 * src/vite/index.ts and copied by `clef-web assets`.
 */
import type * as OrtTypes from 'onnxruntime-web';
import { deviceOf, type DeviceName } from '../core/devices.js';
import { IDENTITY_GRAPH } from './identity-graph.js';
import { dropLegacyRuntimeCache, wasmSourceOf } from './wasm-cache.js';
import { RUNTIME_BUILD_FILES, type RuntimeBuild } from '../wire/assets.js';
import {
  buildFor,
  chunkNotServedError,
  runtimeNotServedError,
  servedBuilds,
} from './runtime-files.js';
import { allowOwnOriginScriptUrls } from './trusted-types.js';
import type { RuntimePhases } from '../wire/telemetry.js';

export type OrtModule = typeof OrtTypes;
export type OrtSession = OrtTypes.InferenceSession;
export type { RuntimeBuild };

/** The onnxruntime-web builds: the entry that loads each, and its files under /ort/. */
export const RUNTIME_BUILDS = {
  plain: { entry: 'onnxruntime-web/wasm', ...RUNTIME_BUILD_FILES.plain },
  jspi: { entry: 'onnxruntime-web/jspi', ...RUNTIME_BUILD_FILES.jspi },
  asyncify: { entry: 'onnxruntime-web/webgpu', ...RUNTIME_BUILD_FILES.asyncify },
} as const satisfies Record<RuntimeBuild, { entry: string; loader: string; wasm: string }>;

export interface RuntimeOptions {
  wasmBase: string;
  threads: number;
  /**
   * The build for WASM, where served: 'plain' (default, measured faster to load and no slower to
   * run), or a WebGPU build's CPU back end (the bench compares them). WebGPU runs its own.
   */
  wasmBuild?: RuntimeBuild;
}

/** onnxruntime-web's execution provider for an onnxruntime device. */
function executionProvider(device: DeviceName): 'webgpu' | 'wasm' {
  const ep = deviceOf(device).executionProvider;
  if (ep === null) throw new Error(`device '${device}' does not run on onnxruntime-web`);
  return ep;
}

/** How one device's runtime came up (the shape info().loadMs reports). */
export type RuntimeStart = RuntimePhases;

interface Started {
  ort: OrtModule;
  start: RuntimeStart;
}

const started = new Map<string, Promise<Started>>();

function importBuild(build: RuntimeBuild): Promise<OrtModule> {
  // Literal specifiers, so bundlers see every build and split each into its own chunk.
  const imports: Record<RuntimeBuild, () => Promise<unknown>> = {
    plain: () => import('onnxruntime-web/wasm'),
    jspi: () => import('onnxruntime-web/jspi'),
    asyncify: () => import('onnxruntime-web/webgpu'),
  };
  return imports[build]() as Promise<OrtModule>;
}

function wasmResource(file: string): PerformanceResourceTiming | undefined {
  const entries = globalThis.performance?.getEntriesByType?.('resource') ?? [];
  return (entries as PerformanceResourceTiming[]).filter((e) => e.name.includes(file)).at(-1);
}

/**
 * The threads the server lets the runtime start. onnxruntime's thread workers run its loader
 * (`/ort/*.mjs`) as their script, and in a cross-origin-isolated page the browser refuses a
 * worker script served without Cross-Origin-Embedder-Policy: the runtime then waits for ever
 * for a thread that never starts. So before asking for threads, the loader's headers are read
 * (one HEAD request); without COEP the runtime runs on one thread, and info() says why.
 */
async function threadsServed(
  options: RuntimeOptions,
  build: RuntimeBuild,
): Promise<{ threads: number; threadsReason: string | null }> {
  const wanted = { threads: options.threads, threadsReason: null };
  if (options.threads <= 1) return wanted;
  const loader = new URL(RUNTIME_BUILDS[build].loader, options.wasmBase);
  let policy: string | null;
  try {
    const response = await fetch(loader, { method: 'HEAD' });
    // A loader the server does not have fails the import with its own error, named there.
    if (!response.ok) return wanted;
    policy = response.headers.get('cross-origin-embedder-policy');
  } catch {
    return wanted;
  }
  if (policy !== null && /^\s*(require-corp|credentialless)\b/.test(policy)) return wanted;
  return {
    threads: 1,
    threadsReason:
      `1 thread, not ${options.threads}: ${loader.pathname} is served without ` +
      'Cross-Origin-Embedder-Policy, and the browser refuses it as the script of a thread ' +
      'worker; send COOP/COEP on /ort/ too (the clef-web/vite plugin does)',
  };
}

/**
 * Loads and starts the runtime for `device` once per worker (later calls share the first):
 * import, wasm, back end. Called as soon as the device is known, so it overlaps the package's
 * download; session creation then only builds graphs.
 */
export function startRuntime(device: DeviceName, options: RuntimeOptions): Promise<Started> {
  // One module per build; its back end (the WebGPU device) once per device.
  const key = `${options.wasmBuild ?? ''} ${device}`;
  let pending = started.get(key);
  if (!pending) {
    pending = (async () => {
      const available = await servedBuilds(options.wasmBase);
      const build = buildFor(deviceOf(device), available, options.wasmBuild);
      if (build === null) {
        const wanted = buildFor(deviceOf(device), undefined, options.wasmBuild);
        if (wanted === null) throw new Error(`${device} runs no onnxruntime-web build`);
        throw runtimeNotServedError(options.wasmBase, device, wanted);
      }
      const t0 = performance.now();
      allowOwnOriginScriptUrls();
      const ort = await importBuild(build).catch((e: unknown) => {
        throw chunkNotServedError(e) ?? e;
      });
      const t1 = performance.now();
      ort.env.wasm.wasmPaths = options.wasmBase;
      const threads = await threadsServed(options, build);
      ort.env.wasm.numThreads = threads.threads;
      ort.env.logLevel = 'error';
      dropLegacyRuntimeCache();
      const probe = await ort.InferenceSession.create(IDENTITY_GRAPH, {
        executionProviders: [executionProvider(device)],
        logSeverityLevel: 3, // its Identity runs on the CPU EP: no warning about that
      });
      await probe.release();
      const t2 = performance.now();
      const fetched = wasmResource(RUNTIME_BUILDS[build].wasm);
      return {
        ort,
        start: {
          build: RUNTIME_BUILDS[build].entry,
          importMs: t1 - t0,
          initMs: t2 - t1,
          // Only a worker that wraps WebAssembly.instantiateStreaming can time it (EngineHooks).
          instantiateMs: null,
          wasmFetchMs: fetched ? fetched.responseEnd - fetched.startTime : null,
          wasmTransferBytes: fetched ? fetched.transferSize : null,
          wasmSource: wasmSourceOf(fetched),
          ...threads,
        },
      };
    })();
    started.set(key, pending);
    pending.catch(() => started.delete(key));
  }
  return pending;
}

export interface ExternalFile {
  /** The location the graph names for its external data. */
  path: string;
  data: Uint8Array;
}

export async function createSession(
  ort: OrtModule,
  model: Uint8Array,
  externalData: ExternalFile[],
  device: DeviceName,
  keepOutputsOnGpu: readonly string[] = [],
  /** 'disabled' for a graph the converter optimised already (a WASM-prepared graph). */
  optimization: 'all' | 'disabled' = 'all',
): Promise<OrtSession> {
  const options: OrtTypes.InferenceSession.SessionOptions = {
    executionProviders: [executionProvider(device)],
    graphOptimizationLevel: optimization,
    externalData: externalData.map((f) => ({ path: f.path, data: f.data })),
  };
  if (deviceOf(device).gpu && keepOutputsOnGpu.length > 0) {
    options.preferredOutputLocation = Object.fromEntries(
      keepOutputsOnGpu.map((name) => [name, 'gpu-buffer' as const]),
    );
  }
  return ort.InferenceSession.create(model, options);
}

/**
 * Waits until the GPU has done the work submitted so far: after a session's creation, its
 * weights' uploads. The engine waits between backbone groups, so the GPU process does not stack
 * up one group's staging copies behind the next. No-op without a WebGPU device.
 */
export async function drainGpuQueue(ort: OrtModule): Promise<void> {
  const device = (await ort.env.webgpu.device) as
    { queue?: { onSubmittedWorkDone?(): Promise<void> } } | undefined;
  await device?.queue?.onSubmittedWorkDone?.();
}
