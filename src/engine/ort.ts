/**
 * The only module that imports the ML runtime, and it imports only the build a device needs:
 * `onnxruntime-web/wasm` (the plain SIMD-threaded wasm, 14.2 MB) for WASM, and
 * `onnxruntime-web/webgpu` (the asyncify wasm, 26.8 MB, which carries the CPU back end too) for
 * WebGPU. docs/benchmarks.md has the measurement behind the choice. The wasm binaries and loaders
 * are served same-origin under `/ort/` (never a CDN): see src/vite/index.ts.
 */
import type * as OrtTypes from 'onnxruntime-web';
import type { DeviceName } from './manifest.js';
import { IDENTITY_GRAPH } from './identity-graph.js';

export type OrtModule = typeof OrtTypes;
export type OrtTensor = OrtTypes.Tensor;
export type OrtSession = OrtTypes.InferenceSession;

/** Which onnxruntime-web build a device loads, and its wasm file under /ort/. */
export const RUNTIME_BUILDS = {
  wasm: { entry: 'onnxruntime-web/wasm', wasm: 'ort-wasm-simd-threaded.wasm' },
  webgpu: { entry: 'onnxruntime-web/webgpu', wasm: 'ort-wasm-simd-threaded.asyncify.wasm' },
} as const;

export interface RuntimeOptions {
  wasmBase: string;
  threads: number;
}

/** How one device's runtime came up: its JavaScript, then its wasm and back end. */
export interface RuntimeStart {
  build: string;
  /** Importing the build's JavaScript (ms). */
  importMs: number;
  /**
   * Fetching, compiling and instantiating the wasm, and starting the back end (the WebGPU device
   * too), measured around a one-node session (ms).
   */
  initMs: number;
  /** The wasm file's fetch as the worker's resource timing saw it (ms), when it did. */
  wasmFetchMs: number | null;
  /** Bytes of the wasm that crossed the network (0: from the HTTP cache). */
  wasmTransferBytes: number | null;
}

interface Started {
  ort: OrtModule;
  start: RuntimeStart;
}

const started = new Map<DeviceName, Promise<Started>>();

function importBuild(device: DeviceName): Promise<OrtModule> {
  // Literal specifiers, so bundlers see both builds and split each into its own chunk.
  return (
    device === 'webgpu' ? import('onnxruntime-web/webgpu') : import('onnxruntime-web/wasm')
  ) as Promise<OrtModule>;
}

function wasmResource(file: string): PerformanceResourceTiming | undefined {
  const entries = globalThis.performance?.getEntriesByType?.('resource') ?? [];
  return (entries as PerformanceResourceTiming[]).filter((e) => e.name.includes(file)).at(-1);
}

/**
 * Loads and starts the runtime for `device` once per worker (later calls share the first):
 * import, wasm, back end. Called as soon as the device is known, so it overlaps the package's
 * download; session creation then only builds graphs.
 */
export function startRuntime(device: DeviceName, options: RuntimeOptions): Promise<Started> {
  let pending = started.get(device);
  if (!pending) {
    pending = (async () => {
      const t0 = performance.now();
      const ort = await importBuild(device);
      const t1 = performance.now();
      ort.env.wasm.wasmPaths = options.wasmBase;
      ort.env.wasm.numThreads = options.threads;
      ort.env.logLevel = 'error';
      const probe = await ort.InferenceSession.create(IDENTITY_GRAPH, {
        executionProviders: [device === 'webgpu' ? 'webgpu' : 'wasm'],
        logSeverityLevel: 3, // its Identity runs on the CPU EP: no warning about that
      });
      await probe.release();
      const t2 = performance.now();
      const fetched = wasmResource(RUNTIME_BUILDS[device].wasm);
      return {
        ort,
        start: {
          build: RUNTIME_BUILDS[device].entry,
          importMs: t1 - t0,
          initMs: t2 - t1,
          wasmFetchMs: fetched ? fetched.responseEnd - fetched.startTime : null,
          wasmTransferBytes: fetched ? fetched.transferSize : null,
        },
      };
    })();
    started.set(device, pending);
    pending.catch(() => started.delete(device));
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
): Promise<OrtSession> {
  const options: OrtTypes.InferenceSession.SessionOptions = {
    executionProviders: [device === 'webgpu' ? 'webgpu' : 'wasm'],
    graphOptimizationLevel: 'all',
    externalData: externalData.map((f) => ({ path: f.path, data: f.data })),
  };
  if (device === 'webgpu' && keepOutputsOnGpu.length > 0) {
    options.preferredOutputLocation = Object.fromEntries(
      keepOutputsOnGpu.map((name) => [name, 'gpu-buffer' as const]),
    );
  }
  return ort.InferenceSession.create(model, options);
}
