/**
 * A tab's connection to a shared engine (`createClef({ shared: true })`): the engine's worker
 * run as a SharedWorker, named after the load options, so every tab of the origin asking for the
 * same package with the same options reaches the same one, and any other ask its own. The worker
 * side and the lock protocol are described in src/engine/shared-engine.ts.
 */
import * as Comlink from 'comlink';
import type { LoadOptionsWire, LoadProgress, SharedEngineApi } from '../wire/wire.js';
import { engineKey } from '../core/engine-key.js';
import { lockName, open, type Connection } from './connection.js';
import { unwrap } from './worker-session.js';

/** `new SharedWorker()` threw (a browser without module SharedWorkers, a CSP): fall back. */
export class SharedWorkerStartError extends Error {
  override readonly name = 'SharedWorkerStartError';
}

/** Makes the SharedWorker named `name` (the bundled one, or a test build). */
export type SharedWorkerFactory = (name: string) => SharedWorker;

/** Why this browser cannot run a shared engine, or null when it can. */
export function sharedUnsupported(): string | null {
  if (typeof SharedWorker !== 'function') {
    return 'this browser has no SharedWorker';
  }
  if (!globalThis.navigator?.locks) {
    return (
      'this page has no Web Locks (navigator.locks, in secure contexts only), which a shared ' +
      'engine needs to notice a tab that closed'
    );
  }
  return null;
}

interface HeldLock {
  readonly name: string;
  release(): void;
}

/** Takes Web Lock `name` and holds it until `release()`; resolves once it is held. */
function holdLock(name: string, mode: LockMode): Promise<HeldLock> {
  return new Promise<HeldLock>((held, failed) => {
    navigator.locks
      .request(name, { mode }, () => {
        return new Promise<void>((release) => held({ name, release: () => release() }));
      })
      .catch(failed);
  });
}

/** Joins (or starts) the shared engine for `options`, and loads the package if it is the first. */
export async function connectShared(
  make: SharedWorkerFactory,
  options: LoadOptionsWire,
  onProgress?: (p: LoadProgress) => void,
): Promise<Connection> {
  const key = engineKey(options);
  // Held from before connecting: the worker ends only when no tab holds it, and a tab that
  // comes while it is ending is granted it once that worker has gone.
  const presence = await holdLock(`clef-web-tabs ${key}`, 'shared');
  let tab: HeldLock | null = null;
  try {
    tab = await holdLock(lockName('clef-web-tab'), 'exclusive');
    let worker: SharedWorker;
    try {
      worker = make(`clef-web ${key}`);
    } catch (e) {
      throw new SharedWorkerStartError(String((e as Error)?.message ?? e));
    }
    const api = Comlink.wrap<SharedEngineApi>(worker.port);
    const joined = tab;
    return await open(
      {
        api,
        events: worker,
        join: async () => unwrap(await api.join(joined.name, presence.name)),
        end: () => {
          worker.port.close();
          // Presence first: once the worker sees the tab lock go, it may end at once.
          presence.release();
          joined.release();
        },
      },
      options,
      onProgress,
    );
  } catch (e) {
    presence.release();
    tab?.release();
    throw e;
  }
}
