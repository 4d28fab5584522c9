/**
 * The instrumentation the test and benchmark worker (instrumented.worker.ts) injects into the
 * engine as EngineHooks (src/engine/hooks.ts): the fault simulations its load options carry
 * (instrumented-wire.ts FaultSimulation), each making one fault happen on purpose so a test can
 * prove it is survived, and the platform counters info() reports (resource-counters.ts,
 * wasm-timing.ts). The shipped worker has none of this.
 */
import { deviceOf, type Capabilities, type DeviceName } from '../../../src/core/devices.js';
import type { DecisionStage, JobContext } from '../../../src/core/queue.js';
import type { EngineHooks } from '../../../src/engine/hooks.js';
import { RUNTIME_BUILDS } from '../../../src/engine/ort.js';
import type { DecisionSession, SessionOptions } from '../../../src/engine/session.js';
import { DeviceError, EngineError } from '../../../src/wire/errors.js';
import type { LoadOptionsWire, WorkerApi } from '../../../src/wire/wire.js';
import type { HostInfo } from '../../../src/wire/telemetry.js';
import type { FaultSimulation, TestHostInfo, TestLoadOptions } from './instrumented-wire.js';
import { resourceCounts } from './resource-counters.js';
import { instantiationMs } from './wasm-timing.js';

/** The instrumented worker's surface: the engine's, and `arm`. */
export interface InstrumentedWorkerApi extends WorkerApi {
  /**
   * Arms the one-shot fault simulations (stallAt, loseWebgpuMidDecision) in this worker,
   * replacing what load's `simulate` armed. Not reachable from the page API.
   */
  arm(simulate: FaultSimulation): Promise<void>;
}

/** Waits until `cancelled()` turns true, checking between tasks; gives up after `limitMs`. */
async function waitForCancel(cancelled: () => boolean, limitMs: number): Promise<void> {
  const until = performance.now() + limitMs;
  while (!cancelled() && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export class InstrumentedHooks implements EngineHooks {
  private simulate: FaultSimulation = {};
  /** simulate.stallAt, consumed as decisions reach each stage. */
  private stalls: DecisionStage[] = [];
  private deviceLossPending = false;
  private stalledAt: DecisionStage | null = null;

  /** `loseGpuDevice`: destroys the WebGPU device the runtime runs on. */
  constructor(private readonly loseGpuDevice: () => void) {}

  arm(simulate: FaultSimulation): void {
    this.stalls = [...(simulate.stallAt ?? [])];
    this.deviceLossPending = simulate.loseWebgpuMidDecision === true;
  }

  loading(options: LoadOptionsWire): void {
    this.simulate = (options as TestLoadOptions).simulate ?? {};
    this.arm(this.simulate);
  }

  /** No WebGPU (simulate.noWebgpu), smaller buffer limits (simulate.adapterLimitBytes). */
  capabilities(caps: Capabilities): Capabilities {
    let out = caps;
    if (this.simulate.noWebgpu) {
      out = {
        ...out,
        webgpu: false,
        shaderF16: false,
        adapter: null,
        fallbackAdapter: false,
        webgpuReason: 'WebGPU disabled by the caller (simulate.noWebgpu)',
      };
    }
    const limit = this.simulate.adapterLimitBytes;
    if (limit !== undefined && out.webgpu) {
      out = { ...out, maxStorageBufferBindingSize: limit, maxBufferSize: limit };
    }
    return out;
  }

  openingSession(device: DeviceName): void {
    if (deviceOf(device).gpu && this.simulate.failWebgpuLoad) {
      throw new EngineError('WebGPU session creation failed (simulate.failWebgpuLoad)');
    }
    if (deviceOf(device).runtime === 'js' && this.simulate.refuseJs) {
      throw new DeviceError('the js device cannot run this package (simulate.refuseJs)', {
        device,
      });
    }
  }

  /** simulate.lexiconFromStorage: the lexicon read from Cache Storage whatever its size. */
  sessionOptions(options: SessionOptions): SessionOptions {
    return this.simulate.lexiconFromStorage
      ? { ...options, lexiconInMemoryBelowBytes: 0 }
      : options;
  }

  async stage(stage: DecisionStage, ctx: JobContext, session: DecisionSession): Promise<void> {
    if (stage === 'backbone' && this.deviceLossPending && deviceOf(session.device).gpu) {
      this.deviceLossPending = false;
      this.loseGpuDevice();
    }
    if (this.stalls[0] === stage) {
      this.stalls.shift();
      this.stalledAt = stage;
      try {
        await waitForCancel(() => ctx.cancelled(), 30_000);
      } finally {
        this.stalledAt = null;
      }
    }
  }

  /** simulate.holdWarmUp: the first try waits after encoding until a request is queued. */
  async warmUpStage(tryNumber: number, queued: () => number, cancelled: () => boolean) {
    if (!this.simulate.holdWarmUp || tryNumber !== 1) return;
    while (queued() < 2 && !cancelled()) await new Promise((next) => setTimeout(next, 5));
  }

  info(info: HostInfo): TestHostInfo {
    const runtime = info.loadMs.runtime;
    const wasm = Object.values(RUNTIME_BUILDS).find((b) => b.entry === runtime?.build)?.wasm;
    return {
      ...info,
      loadMs: {
        ...info.loadMs,
        runtime: runtime && wasm ? { ...runtime, instantiateMs: instantiationMs(wasm) } : runtime,
      },
      counters: { ...info.counters, ...resourceCounts() },
      ...(this.stalledAt ? { stalledAt: this.stalledAt } : {}),
    };
  }
}
