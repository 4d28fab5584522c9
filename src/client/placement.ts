/**
 * Where a createClef engine runs, and why: a worker for this page alone, or with
 * `shared: true` a SharedWorker for every tab of the origin (falling back to a dedicated worker
 * where the browser cannot run one). What `info().worker` and `workerReason` say comes from here.
 */
import { WorkerLostError } from '../wire/errors.js';
import type { LoadOptionsWire, LoadProgress } from '../wire/wire.js';
import type { HostInfo } from '../wire/telemetry.js';
import { connect, ThreadStartStalledError, type Connection } from './connection.js';
import { defaultSharedWorker, defaultWorker } from './default-worker.js';
import {
  connectShared,
  SharedWorkerStartError,
  sharedUnsupported,
  type SharedWorkerFactory,
} from './shared-connection.js';

/** Threaded starts that stalled (connection.ts) before an engine is started on 1 thread. */
const STALLS_BEFORE_ONE_THREAD = 2;

/** ClefOptions.worker: a worker to use instead of the bundled one, or a function making one. */
type GivenWorker = Worker | (() => Worker);

/** Where the engine runs, and why: what `info().worker` and `workerReason` say. */
export interface Placement {
  readonly kind: 'shared' | 'dedicated';
  readonly reason: string;
  /** Connects to a loaded engine there (the first one reports load progress). */
  connect(
    loadOptions: LoadOptionsWire,
    onProgress?: (p: LoadProgress) => void,
  ): Promise<Connection>;
}

/**
 * The engine's place for these options: `worker` the page gave, `shared` asked for, and
 * `sharedWorker` a build's own SharedWorker instead of the bundled one.
 */
export function placement(
  worker: GivenWorker | undefined,
  shared: boolean | undefined,
  sharedWorker: SharedWorkerFactory | undefined,
): Placement {
  const makeWorker = workerFactory(worker);
  let stalls = 0;
  let capped: { threads: number; threadsReason: string } | null = null;
  const dedicated = async (
    loadOptions: LoadOptionsWire,
    onProgress?: (p: LoadProgress) => void,
  ): Promise<Connection> => {
    for (;;) {
      try {
        return await connect(makeWorker(), { ...loadOptions, ...capped }, onProgress);
      } catch (e) {
        // A thread worker's start that never returned is a race in the browser: a second
        // threaded start mostly works; after a second stall, this engine runs on 1 thread.
        // A Worker object the page gave cannot be started again: the stall is the error.
        const given = worker !== undefined && typeof worker !== 'function';
        if (!(e instanceof ThreadStartStalledError) || capped || given) throw e;
        stalls += 1;
        if (stalls >= STALLS_BEFORE_ONE_THREAD) {
          const why = String(e.details.reason);
          capped = { threads: 1, threadsReason: `1 thread: ${why}, twice` };
        }
      }
    }
  };
  if (!shared) {
    const reason = worker
      ? 'the worker given to createClef, for this page alone'
      : 'a worker for this page alone (createClef({ shared: true }) shares one between tabs)';
    return { kind: 'dedicated', reason, connect: dedicated };
  }
  const fallback = (why: string) =>
    `shared: true asked, but ${why}: a worker for this page alone runs the engine`;
  const unsupported = sharedUnsupported();
  if (unsupported) return { kind: 'dedicated', reason: fallback(unsupported), connect: dedicated };
  const makeShared = sharedWorker ?? defaultSharedWorker;
  let kind: Placement['kind'] = 'shared';
  let reason =
    'shared: true: one engine in a SharedWorker for every tab of this origin asking for this ' +
    'package with the same options';
  return {
    get kind() {
      return kind;
    },
    get reason() {
      return reason;
    },
    async connect(loadOptions, onProgress) {
      if (kind === 'dedicated') return dedicated(loadOptions, onProgress);
      try {
        return await connectShared(makeShared, loadOptions, onProgress);
      } catch (e) {
        // A browser that cannot start a module SharedWorker throws from its constructor.
        if (!(e instanceof SharedWorkerStartError)) throw e;
        kind = 'dedicated';
        reason = fallback(`new SharedWorker() failed (${e.message})`);
        return dedicated(loadOptions, onProgress);
      }
    },
  };
}

/**
 * Why `threads` is 1 where the page would allow more: in Chromium and Firefox a SharedWorker is
 * not cross-origin isolated, so it has no SharedArrayBuffer for onnxruntime's threads.
 */
export function sharedThreadsReason(info: HostInfo): string | null {
  if (info.threads > 1 || info.threadsReason !== null || !globalThis.crossOriginIsolated) {
    return info.threadsReason;
  }
  const page = Math.max(1, Math.min(4, (globalThis.navigator?.hardwareConcurrency ?? 1) - 1));
  if (page <= 1) return null;
  return (
    `1 thread, not ${page}: this browser does not make a SharedWorker cross-origin isolated, so ` +
    `the shared engine has no SharedArrayBuffer for threads; a dedicated worker (shared: false) ` +
    `would run ${page}`
  );
}

/** What starts a worker: the default one, the page's factory, or the one Worker it gave (once). */
function workerFactory(given: GivenWorker | undefined): () => Worker {
  let givenUsed = false;
  return () => {
    if (typeof given === 'function') return given();
    if (!given) return defaultWorker();
    if (givenUsed) throw new WorkerLostError('The Worker given to createClef was lost');
    givenUsed = true;
    return given;
  };
}
