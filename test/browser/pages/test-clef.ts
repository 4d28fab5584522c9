/**
 * createClef as the test pages and benchmarks use it: on the instrumented worker
 * (test/support/instrumented-worker/instrumented.worker.ts) unless the caller gives its own, whose
 * EngineHooks act on `simulate` (sent as a load option of that worker's) and fill the resource
 * counters (as a SharedWorker with `shared: true`), and with the benchmarks' switches. The shipped
 * worker and the shipped types have none of it.
 */
import {
  createClefWithBuild,
  type Clef,
  type ClefOptions,
  type WorkerBuild,
} from '../../../src/client/clef.js';
import type {
  FaultSimulation,
  TestEngineInfo,
} from '../../support/instrumented-worker/instrumented-wire.js';

/** The test and benchmark switches, beside ClefOptions. */
export interface TestOptions extends Pick<WorkerBuild, 'wasmBuild' | 'sharedWorker'> {
  /** Fault and fallback hooks the instrumented worker's EngineHooks honour. */
  simulate?: FaultSimulation;
}

/** A Clef on the instrumented worker: its info() reports what that worker adds. */
export interface TestClef extends Omit<Clef, 'info'> {
  info(): Promise<TestEngineInfo>;
}

/** A new instrumented worker (named as the shipped one is, unless `name` is given). */
export function instrumentedWorker(name = 'clef-web'): Worker {
  return new Worker(
    new URL('../../support/instrumented-worker/instrumented.worker.ts', import.meta.url),
    {
      type: 'module',
      name,
    },
  );
}

/** A new instrumented worker run as a SharedWorker named `name` (for `shared: true`). */
export function instrumentedSharedWorker(name: string): SharedWorker {
  return new SharedWorker(
    new URL('../../support/instrumented-worker/instrumented.worker.ts', import.meta.url),
    {
      type: 'module',
      name,
    },
  );
}

export async function createTestClef(options: ClefOptions & TestOptions = {}): Promise<TestClef> {
  const { simulate, ...rest } = options;
  // A replacement worker keeps the lasting switches; the one-shot faults (stalls, device loss,
  // the held warm-up) happened in the worker that was lost.
  const { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage } = simulate ?? {};
  const lasting = { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage };
  const clef = await createClefWithBuild({
    ...rest,
    ...(simulate ? { load: { simulate } } : {}),
    restartLoad: { simulate: lasting },
    ...(options.shared
      ? { sharedWorker: options.sharedWorker ?? instrumentedSharedWorker }
      : { worker: options.worker ?? (() => instrumentedWorker()) }),
  });
  // The instrumented worker's info() carries its additions (TestEngineInfo).
  return clef as unknown as TestClef;
}
