/**
 * The only module that imports the ML runtime. onnxruntime-web's WebGPU build also carries its
 * WASM (CPU) back end; its wasm binary and loader are served same-origin under `/ort/` (never a
 * CDN): the files are listed in src/wire/assets.ts, served by src/vite/index.ts.
 */
import * as ort from 'onnxruntime-web/webgpu';
import type { DeviceName } from './manifest.js';

export { ort };
export type OrtTensor = ort.Tensor;
export type OrtSession = ort.InferenceSession;

let configured = false;

/** Sets where the wasm lives and how many threads it may use; the first call wins. */
export function configureRuntime(options: { wasmBase: string; threads: number }): void {
  if (configured) return;
  configured = true;
  ort.env.wasm.wasmPaths = options.wasmBase;
  ort.env.wasm.numThreads = options.threads;
  ort.env.logLevel = 'error';
}

export interface ExternalFile {
  /** The location the graph names for its external data. */
  path: string;
  data: Uint8Array;
}

export async function createSession(
  model: Uint8Array,
  externalData: ExternalFile[],
  device: DeviceName,
  keepOutputsOnGpu: readonly string[] = [],
): Promise<OrtSession> {
  const options: ort.InferenceSession.SessionOptions = {
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
