/**
 * The onnxruntime-web decision session: the package's three graphs on one device, driven by
 * ClefRunner. On WebGPU the backbone's hidden states and running state stay GPU buffers between
 * runs and sessions; only memory rows and logits are read back.
 */
import { Lexicon } from '../clef/lexicon.js';
import { EngineError } from '../wire/errors.js';
import { backboneSpec, stateSpecs } from './graph-spec.js';
import { filesWithRole, requireFile, type DeviceName } from './manifest.js';
import { configureRuntime, createSession, ort, type ExternalFile } from './ort.js';
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

const adapter: RuntimeAdapter = {
  float32: (data, dims) => new ort.Tensor('float32', data, dims),
  int64: (data, dims) => new ort.Tensor('int64', data, dims),
};

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
  configureRuntime({
    wasmBase: new URL(ORT_PUBLIC_PATH, self.location.origin).href,
    threads: options.threads,
  });
  const m = pkg.manifest;
  const spec = backboneSpec(m);
  const states = stateSpecs(spec);
  const gpuOutputs = device === 'webgpu' ? ['hidden', ...states.map((s) => s.output)] : [];
  const sessions: SessionLike[] = [];
  try {
    const backbone = await createSession(
      pkg.read(requireFile(m, 'backbone')),
      externalFiles(pkg, 'backbone-data'),
      device,
      gpuOutputs,
    );
    sessions.push(backbone);
    const headData = externalFiles(pkg, 'head-data');
    // The memory rows stay on the GPU too (fed back as past_memory, cached, read by
    // head_decide): reading them back cost 4·width bytes per prefix token on every miss.
    const headMemory = await createSession(
      pkg.read(requireFile(m, 'head-memory')),
      headData,
      device,
      device === 'webgpu' ? ['memory'] : [],
    );
    sessions.push(headMemory);
    const headDecide = await createSession(
      pkg.read(requireFile(m, 'head-decide')),
      headData,
      device,
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
      adapter,
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
      run: (encoded, ctx) => runner.run(encoded, ctx),
      lost: () => lost,
      cacheStats: () => runner.cacheStats(),
      counters: () => runner.counters(),
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
