/// <reference lib="webworker" />
/**
 * The engine's worker for tests and benchmarks: the shipped one (workers/clef.worker.ts) with
 * EngineHooks injected (hooks.ts) and `arm` added. Before the runtime loads (it is imported
 * dynamically, at load) it wraps, in this worker only: GPUDevice.createBuffer and
 * GPUBuffer.destroy and WebAssembly.instantiate* (resource-counters.ts), instantiateStreaming's
 * duration (wasm-timing.ts), and GPUAdapter.requestDevice, to reach the runtime's device for
 * simulate.loseWebgpuMidDecision. Test pages create it through test/browser/pages/test-clef.ts,
 * as a dedicated worker or (`shared: true`) as a SharedWorker.
 */
import { createDecisionSession, startDeviceRuntime } from '../../../src/engine/sessions.js';
import { EngineHost } from '../../../src/engine/host.js';
import { serveEngine } from '../../../src/engine/shared-engine.js';
import type { FaultSimulation } from './instrumented-wire.js';
import { InstrumentedHooks, type InstrumentedWorkerApi } from './hooks.js';
import { installResourceCounters } from './resource-counters.js';
import { timeWasmInstantiation } from './wasm-timing.js';

installResourceCounters();
timeWasmInstantiation();

/** The last device a GPUAdapter handed out: onnxruntime's (the engine's probe makes none). */
let gpuDevice: { destroy(): void } | null = null;
const Adapter = (self as unknown as { GPUAdapter?: { prototype: Record<string, unknown> } })
  .GPUAdapter;
if (Adapter) {
  const requestDevice = Adapter.prototype.requestDevice as (...a: unknown[]) => Promise<never>;
  Adapter.prototype.requestDevice = async function (this: unknown, ...args: unknown[]) {
    const device = (await requestDevice.apply(this, args)) as { destroy(): void };
    gpuDevice = device;
    return device;
  };
}

// A dedicated worker serves one engine; run as a SharedWorker, one engine for every tab
// (src/engine/shared-engine.ts), which a failed load replaces: each engine its own hooks.
serveEngine((): InstrumentedWorkerApi => {
  const hooks = new InstrumentedHooks(() => gpuDevice?.destroy());
  const host = new EngineHost(createDecisionSession, startDeviceRuntime, hooks);
  return Object.assign(host, {
    arm: async (simulate: FaultSimulation) => hooks.arm(simulate),
  });
});
