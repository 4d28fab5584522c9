/**
 * The onnxruntime-web decision session: the package's three graphs on one device, driven by
 * ClefRunner. On WebGPU the backbone's hidden states and running state stay GPU buffers between
 * runs and sessions; only memory rows and logits are read back.
 */
import { Lexicon } from '../clef/lexicon.js';
import { EngineError } from '../wire/errors.js';
import { backboneSpec, stateSpecs } from './graph-spec.js';
import { filesWithRole, requireFile, type DeviceName } from './manifest.js';
import {
  createSession,
  startRuntime,
  type ExternalFile,
  type OrtModule,
  type RuntimeBuild,
} from './ort.js';
import { ORT_PUBLIC_PATH } from '../wire/assets.js';
import type { PackageFiles } from './package-fetch.js';
import {
  checkInputs,
  ClefRunner,
  REQUIRED_INPUTS,
  type RuntimeAdapter,
  type SessionLike,
} from './runner.js';
import type { DecisionSession, SessionOptions } from './session.js';

const adapterFor = (ort: OrtModule): RuntimeAdapter => ({
  float32: (data, dims) => new ort.Tensor('float32', data, dims),
  int64: (data, dims) => new ort.Tensor('int64', data, dims),
});

/** Where the worker finds onnxruntime-web's wasm: same origin, ORT_PUBLIC_PATH (/ort/). */
export function runtimeOptions(threads: number, wasmBuild?: RuntimeBuild) {
  return { wasmBase: new URL(ORT_PUBLIC_PATH, self.location.origin).href, threads, wasmBuild };
}

/** Starts the device's runtime (import, wasm, back end) ahead of the package's download. */
export async function startOrtRuntime(device: DeviceName, threads: number, build?: RuntimeBuild) {
  return (await startRuntime(device, runtimeOptions(threads, build))).start;
}

/** Chunk of backbone tokens per run: bounds the attention scores' memory. */
export const DEFAULT_CHUNK_TOKENS = 256;

function externalFiles(pkg: PackageFiles, role: 'backbone-data' | 'head-data'): ExternalFile[] {
  return filesWithRole(pkg.manifest, role).map((f) => ({ path: f.path, data: pkg.read(f) }));
}

export async function createOrtDecisionSession(
  pkg: PackageFiles,
  device: DeviceName,
  options: SessionOptions,
): Promise<DecisionSession> {
  const m = pkg.manifest;
  const sessionMs: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      sessionMs[name] = performance.now() - t0;
    }
  };
  const spec = backboneSpec(m);
  const states = stateSpecs(spec);
  const gpuOutputs = device === 'webgpu' ? ['hidden', ...states.map((s) => s.output)] : [];
  const sessions: SessionLike[] = [];
  try {
    const { ort, start } = await startRuntime(
      device,
      runtimeOptions(options.threads, options.wasmBuild),
    );
    const backbone = await timed('backbone', () =>
      createSession(
        ort,
        pkg.read(requireFile(m, 'backbone')),
        externalFiles(pkg, 'backbone-data'),
        device,
        gpuOutputs,
      ),
    );
    sessions.push(backbone);
    const headData = externalFiles(pkg, 'head-data');
    // The memory rows stay on the GPU too (fed back as past_memory, cached, read by
    // head_decide): reading them back cost 4·width bytes per prefix token on every miss.
    const headMemory = await timed('headMemory', () =>
      createSession(
        ort,
        pkg.read(requireFile(m, 'head-memory')),
        headData,
        device,
        device === 'webgpu' ? ['memory'] : [],
      ),
    );
    sessions.push(headMemory);
    const headDecide = await timed('headDecide', () =>
      createSession(ort, pkg.read(requireFile(m, 'head-decide')), headData, device),
    );
    sessions.push(headDecide);
    checkInputs(backbone, requireFile(m, 'backbone').path, [
      'input_ids',
      ...states.map((s) => s.input),
    ]);
    checkInputs(headMemory, requireFile(m, 'head-memory').path, REQUIRED_INPUTS.headMemory);
    checkInputs(headDecide, requireFile(m, 'head-decide').path, REQUIRED_INPUTS.headDecide);
    const lexicon = new Lexicon(pkg.read(requireFile(m, 'lexicon')));
    const chunkTokens =
      Number((m.graphs as { chunkTokens?: number }).chunkTokens) || DEFAULT_CHUNK_TOKENS;
    const runner = new ClefRunner(
      adapterFor(ort),
      { backbone, headMemory, headDecide },
      states,
      lexicon,
      { chunkTokens, cacheBudgetBytes: options.cacheBudgetBytes },
      m.architecture.headWidth,
    );
    let lost = false;
    let gpuDevice: { lost?: Promise<unknown>; destroy?(): void } | undefined;
    if (device === 'webgpu') {
      gpuDevice = (await ort.env.webgpu.device) as typeof gpuDevice;
      void gpuDevice?.lost?.then(() => {
        lost = true;
      });
    }
    return {
      device,
      runtime: start,
      sessionMs,
      run: (encoded, ctx) => runner.run(encoded, ctx),
      lost: () => lost,
      cacheStats: () => runner.cacheStats(),
      counters: () => runner.counters(),
      clearCache: () => runner.clearCache(),
      simulateDeviceLoss: () => gpuDevice?.destroy?.(),
      dispose: () => runner.dispose(),
    };
  } catch (e) {
    await Promise.all(sessions.map((s) => s.release().catch(() => undefined)));
    throw new EngineError(`Could not create the ${device} session: ${(e as Error).message}`, {
      device,
    });
  }
}
