/**
 * createClef as the test pages and benchmarks use it: with the measurement switches
 * (createInstrumentedClef) and, unless the caller gives its own, the instrumented worker
 * (test/worker/instrumented.worker.ts), whose EngineHooks act on `simulate` and fill the
 * resource counters (as a SharedWorker with `shared: true`). The shipped worker has neither.
 */
import {
  createInstrumentedClef,
  type Clef,
  type ClefOptions,
  type InstrumentOptions,
} from '../../../src/client/clef.js';

/** A new instrumented worker (named as the shipped one is, unless `name` is given). */
export function instrumentedWorker(name = 'clef-web'): Worker {
  return new Worker(new URL('../../worker/instrumented.worker.ts', import.meta.url), {
    type: 'module',
    name,
  });
}

/** A new instrumented worker run as a SharedWorker named `name` (for `shared: true`). */
export function instrumentedSharedWorker(name: string): SharedWorker {
  return new SharedWorker(new URL('../../worker/instrumented.worker.ts', import.meta.url), {
    type: 'module',
    name,
  });
}

export function createTestClef(options: ClefOptions & InstrumentOptions = {}): Promise<Clef> {
  // A replacement worker keeps the lasting switches; the one-shot faults (stalls, device loss,
  // the held warm-up) happened in the worker that was lost.
  const { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage } =
    options.simulate ?? {};
  return createInstrumentedClef({
    ...options,
    simulateAfterRestart: { noWebgpu, failWebgpuLoad, adapterLimitBytes, lexiconFromStorage },
    ...(options.shared
      ? { sharedWorker: options.sharedWorker ?? instrumentedSharedWorker }
      : { worker: options.worker ?? (() => instrumentedWorker()) }),
  });
}
