/**
 * What the instrumented worker (instrumented.worker.ts) adds to the engine's wire, for the test
 * pages and benchmarks that load it: the fault simulations its load options carry, and what its
 * info() reports beyond the shipped worker's (the platform counters, the stage a stalled decision
 * waits in). The shipped types (src/wire) know none of it.
 */
import type { DecisionStage } from '../../../src/core/queue.js';
import type { LoadOptionsWire } from '../../../src/wire/wire.js';
import type { EngineCounters, EngineInfo, HostInfo } from '../../../src/wire/telemetry.js';

/** Test hooks: each makes one fault happen on purpose, so tests can prove it is survived. */
export interface FaultSimulation {
  /** Pretend WebGPU is absent. */
  noWebgpu?: boolean;
  /** Make the WebGPU session's creation fail. */
  failWebgpuLoad?: boolean;
  /**
   * The js device refuses the package at load, as it refuses a graph with an op it lacks (a
   * DeviceError): `auto` moves on to the onnxruntime devices.
   */
  refuseJs?: boolean;
  /** Pretend the WebGPU adapter's maxBufferSize and maxStorageBufferBindingSize are this. */
  adapterLimitBytes?: number;
  /** Read the lexicon's rows from Cache Storage whatever its size (cache on). */
  lexiconFromStorage?: boolean;
  /** Destroy the GPU device between the backbone chunks of the first decision on WebGPU. */
  loseWebgpuMidDecision?: boolean;
  /**
   * Stages at which a decision waits (up to 30 s) until it is aborted, each used once, in the
   * order decisions reach them: ['encoding', 'backbone', 'head'] holds the first decision after
   * encoding, the next one between two backbone chunks, the next before the head.
   */
  stallAt?: DecisionStage[];
  /** The engine's warm-up waits after encoding until a request is queued, so it gives way. */
  holdWarmUp?: boolean;
}

/** The load options the instrumented worker reads: the engine's, and the faults to make. */
export interface TestLoadOptions extends LoadOptionsWire {
  simulate?: FaultSimulation;
}

/** The platform counters the instrumented worker adds (resource-counters.ts). */
export interface ResourceCounts {
  /**
   * GPUBuffers created in the worker and not destroyed, with their bytes: onnxruntime's buffer
   * pool included (it keeps freed buffers for reuse), so it levels off rather than returning to
   * zero. null where WebGPU is absent.
   */
  gpuBuffers: number | null;
  gpuBufferBytes: number | null;
  /** Size of the worker's WebAssembly memories (onnxruntime's heap); null if none was seen. */
  wasmMemoryBytes: number | null;
}

export type TestCounters = EngineCounters & ResourceCounts;

/** What the instrumented worker's info() adds to the engine's. */
interface TestInfoParts {
  counters: TestCounters;
  /** Under simulate.stallAt: the stage a decision waits in for its abort. */
  stalledAt?: DecisionStage;
}

export type TestHostInfo = Omit<HostInfo, 'counters'> & TestInfoParts;
export type TestEngineInfo = Omit<EngineInfo, 'counters'> & TestInfoParts;
