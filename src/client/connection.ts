/**
 * One engine worker as the page sees it: a Comlink proxy, the loaded engine's info, and a
 * `lost` promise that settles when the worker is gone. A dead worker sends nothing, so loss is
 * noticed two ways: an uncaught error in the worker (its `error` event), and a Web Lock the
 * worker holds for its whole life, which the page is granted only once the worker has ended
 * (terminated, closed itself, crashed). A load whose worker blocked starting one of the runtime's
 * thread workers is ended here too (THREAD_WORKER_START_MS).
 */
import * as Comlink from 'comlink';
import { WorkerLostError } from '../wire/errors.js';
import { type LoadOptionsWire, type LoadProgress, type WorkerApi } from '../wire/wire.js';
import { fromWireError } from '../wire/error-wire.js';
import { type HostInfo } from '../wire/telemetry.js';

export interface Connection {
  readonly api: Comlink.Remote<WorkerApi>;
  /** The engine's info() right after load. */
  readonly info: HostInfo;
  /** Resolves with why, once the worker is gone; never rejects. */
  readonly lost: Promise<string>;
  /** Ends the worker (or leaves a shared one) and stops watching it (no `lost` after this). */
  close(): void;
}

/**
 * How long the runtime's start of one thread worker may take before the page ends the worker:
 * Firefox ESR can block for ever inside that `new Worker()` (src/engine/thread-watch.ts), and a
 * blocked worker sends nothing. The call returns in 0 to 5 ms when it returns (Firefox ESR on a
 * 2-core machine with one core busy), so 10 s gives no false alarm.
 */
export const THREAD_WORKER_START_MS = 10_000;

/** The load's worker blocked starting a thread worker and was ended (placement.ts retries). */
export class ThreadStartStalledError extends WorkerLostError {}

/** A worker running workers/clef.worker, before its engine is loaded. */
export interface Endpoint {
  readonly api: Comlink.Remote<WorkerApi>;
  /** Where the worker's `error` event arrives (the Worker or SharedWorker object). */
  readonly events: EventTarget;
  /** Ends the worker, or leaves a shared one. */
  end(): void;
  /** What runs before the load (a shared engine's join). */
  join?(): Promise<void>;
}

/** A Web Lock name no other lock has. */
export function lockName(prefix = 'clef-web-worker'): string {
  const random = globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random()}`;
  return `${prefix}-${random}`;
}

/** Starts `worker` watching for its loss, and loads the package in it. */
export function connect(
  worker: Worker,
  options: LoadOptionsWire,
  onProgress?: (p: LoadProgress) => void,
): Promise<Connection> {
  const endpoint = {
    api: Comlink.wrap<WorkerApi>(worker),
    events: worker,
    end: () => worker.terminate(),
  };
  return open(endpoint, options, onProgress);
}

/** Watches `endpoint` for the loss of its worker, and loads the package in it. */
export async function open(
  endpoint: Endpoint,
  options: LoadOptionsWire,
  onProgress?: (p: LoadProgress) => void,
): Promise<Connection> {
  const { api } = endpoint;
  let closed = false;
  let markLost!: (reason: string) => void;
  const lost = new Promise<string>((resolve) => (markLost = resolve));
  const watching = new AbortController();
  const report = (reason: string) => {
    if (!closed) markLost(reason);
  };
  endpoint.events.addEventListener('error', (e) => {
    e.preventDefault();
    // An uncaught error arrives as an ErrorEvent with its message; a module worker whose script
    // (or a chunk it imports) could not be fetched gets a bare Event.
    const uncaught = typeof ErrorEvent === 'undefined' || e instanceof ErrorEvent;
    report(
      uncaught
        ? `the worker crashed (${(e as ErrorEvent).message || 'an uncaught error'})`
        : `the worker's script (clef.worker.js) or a chunk it imports could not be loaded. ` +
            `It must be served beside your bundle: Vite and webpack emit it; with esbuild or ` +
            `another bundler that leaves workers alone, copy it with \`npx clef-web assets <dir>\``,
    );
  });
  const close = () => {
    closed = true;
    watching.abort();
    endpoint.end();
  };
  const failed = lost.then((reason) => {
    throw new WorkerLostError(`The engine's worker was lost while loading: ${reason}`, { reason });
  });
  let threadTimer: ReturnType<typeof setTimeout> | undefined;
  let markStalled!: (error: Error) => void;
  const stalled = new Promise<never>((_, reject) => (markStalled = reject));
  const onThreadWorker = (notice: 'starting' | 'started') => {
    clearTimeout(threadTimer);
    if (notice !== 'starting') return;
    threadTimer = setTimeout(() => {
      const reason =
        `the runtime's start of a thread worker did not return within ` +
        `${THREAD_WORKER_START_MS / 1000} s (Firefox can block there for ever)`;
      markStalled(
        new ThreadStartStalledError(`The engine's worker was lost while loading: ${reason}`, {
          reason,
        }),
      );
    }, THREAD_WORKER_START_MS);
  };
  const locks = globalThis.navigator?.locks;
  const name = lockName();
  try {
    if (endpoint.join) await Promise.race([endpoint.join(), failed]);
    // Asked beside the load, not after it: once loaded, the worker runs its warm-up decision,
    // which would hold a later call (and so createClef) until it finished.
    const lifeline = locks ? api.lifeline(name) : Promise.resolve(false);
    lifeline.catch(() => undefined);
    const loaded = await Promise.race([
      api.load(
        options,
        onProgress ? Comlink.proxy(onProgress) : undefined,
        Comlink.proxy(onThreadWorker),
      ),
      failed,
      stalled,
    ]);
    if (!loaded.ok) throw fromWireError(loaded.error);
    if (locks && (await Promise.race([lifeline, failed]))) {
      // Granted only when the worker, which holds the lock until it ends, is gone.
      locks
        .request(name, { signal: watching.signal }, () => {
          report('the worker ended (terminated, closed or crashed)');
        })
        .catch(() => undefined);
    }
    return { api, info: loaded.value, lost, close };
  } catch (e) {
    close();
    throw e;
  } finally {
    clearTimeout(threadTimer);
    failed.catch(() => undefined);
    stalled.catch(() => undefined);
  }
}
