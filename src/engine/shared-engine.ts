/**
 * One engine for every tab of a site: the engine's worker run as a SharedWorker
 * (`createClef({ shared: true })`, docs/reliability.md "Shared engine"). Each tab's connection
 * (a MessagePort) gets the engine's own surface (SharedEngineApi); the package is loaded once,
 * by the first tab, and every later tab joins it.
 *
 * - Fairness: requests go through a fair queue with one lane (src/core/queue.ts), each tab its
 *   own line, so the engine holds one request at a time and a tab sending one request while
 *   another bursts waits for at most the decision that is running.
 * - Tab liveness: a SharedWorker is told nothing when a tab closes, navigates or crashes, so
 *   each tab holds a Web Lock of its own (`tabLock`) for as long as it is here, and the worker
 *   asks for the same lock: the browser grants it once the tab is gone (locks die with their
 *   document). Then the tab's waiting requests are dropped and its running one cancelled.
 * - The last tab leaving ends the worker (its memory comes back), but only when the worker can
 *   take the tabs' `presenceLock` exclusively: every tab holds it in shared mode from before it
 *   connects, so a tab that is connecting keeps the worker, and a tab that arrives while the
 *   worker is ending waits until it has gone, then starts a fresh one. Without this a tab could
 *   be handed the ending worker and wait for ever (both Chromium and Firefox do that).
 */
import * as Comlink from 'comlink';
import { engineKey } from '../core/engine-key.js';
import { LaneQueue } from '../core/queue.js';
import { DisposedError, EngineError, WorkerLostError } from '../wire/errors.js';
import {
  type AnswerWire,
  type DecideWireOptions,
  type LoadOptionsWire,
  type LoadProgress,
  type SharedEngineApi,
  type WireResult,
  type WorkerApi,
} from '../wire/wire.js';
import { fromWireError } from '../wire/error-wire.js';
import { type HostInfo } from '../wire/telemetry.js';
import { result } from './host-util.js';

/** How often a worker without tabs tries again to end, while a tab holds presenceLock. */
const END_RETRY_MS = 500;

interface Tab {
  readonly id: string;
  readonly port: MessagePort;
  joined: boolean;
  gone: boolean;
  /** Stops waiting for the tab's lock once it has left by itself (dispose). */
  readonly watching: AbortController;
  /** Lets go of the tab's lifeline lock (WorkerApi.lifeline). */
  releaseLifeline: (() => void) | null;
  progress: ((p: LoadProgress) => void) | null;
  /** The tab's request ids -> the engine's ids. */
  readonly requests: Map<number, number>;
  /** Engine ids of the tab's requests the engine is running. */
  readonly running: Set<number>;
}

/** True once `loading` has settled with an engine (without waiting for it). */
async function settledOk(loading: Promise<WireResult<HostInfo>>): Promise<boolean> {
  const pending = Symbol('pending');
  const first = await Promise.race([loading, Promise.resolve(pending)]);
  return first !== pending && first.ok;
}

export class SharedEngine {
  private host: WorkerApi | null = null;
  private loaded: Promise<WireResult<HostInfo>> | null = null;
  private key: string | null = null;
  private readonly tabs = new Set<Tab>();
  private readonly lanes = new LaneQueue(1);
  private nextTab = 1;
  private nextId = 1;
  /** Decisions started so far, and whether one is running: what `timings.queue` counts. */
  private started = 0;
  private busy = false;
  private presenceLock: string | null = null;
  private ending = false;
  private retry: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly makeHost: () => WorkerApi,
    /** Ends the worker (SharedWorkerGlobalScope.close). */
    private readonly end: () => void,
  ) {}

  /** A tab connected: its port gets the engine's surface. */
  connect(port: MessagePort): void {
    const tab: Tab = {
      id: String(this.nextTab++),
      port,
      joined: false,
      gone: false,
      watching: new AbortController(),
      releaseLifeline: null,
      progress: null,
      requests: new Map(),
      running: new Set(),
    };
    Comlink.expose(this.surface(tab), port);
  }

  private surface(tab: Tab): SharedEngineApi {
    return {
      join: (tabLock, presenceLock) => result(() => this.join(tab, tabLock, presenceLock)),
      load: (options, onProgress) => this.load(tab, options, onProgress),
      systemone: (id, body, options) => this.decide(tab, id, body, options),
      cancel: async (id) => this.cancel(tab, id),
      lifeline: (name) => this.lifeline(tab, name),
      info: () => result(() => this.info()),
      dispose: async () => this.leave(tab, false),
    };
  }

  private join(tab: Tab, tabLock: string, presenceLock: string): void {
    if (this.ending) throw new WorkerLostError('The shared engine is ending; connect again');
    if (tab.gone) throw new DisposedError();
    const locks = navigator.locks;
    this.presenceLock ??= presenceLock;
    tab.joined = true;
    this.tabs.add(tab);
    clearTimeout(this.retry);
    // Granted once the tab lets go of its lock: it left, closed, navigated away or crashed.
    locks
      .request(tabLock, { signal: tab.watching.signal }, () => this.leave(tab, true))
      .catch(() => undefined);
  }

  private async load(
    tab: Tab,
    options: LoadOptionsWire,
    onProgress?: (p: LoadProgress) => void,
  ): Promise<WireResult<HostInfo>> {
    if (!tab.joined || tab.gone) {
      return result(() => {
        throw new DisposedError('This tab has not joined the shared engine');
      });
    }
    const key = engineKey(options);
    if (this.key !== null && this.key !== key) {
      return result(() => {
        throw new EngineError(
          `This shared engine runs ${this.key}, not ${key}: a tab asking for another package ` +
            `or other options gets its own engine (its own SharedWorker name)`,
        );
      });
    }
    tab.progress = onProgress ?? null;
    let loading = this.loaded;
    if (!loading) {
      this.key = key;
      const host = this.makeHost();
      this.host = host;
      const started = host.load(options, (p) => {
        for (const t of this.tabs) t.progress?.(p);
      });
      loading = started;
      this.loaded = started;
      void started.then((r) => {
        // A failed load does not stick: the next tab (a retry) loads afresh.
        if (r.ok || this.loaded !== started) return;
        this.loaded = null;
        this.host = null;
        this.key = null;
        void host.dispose().catch(() => undefined);
      });
    } else if ((await settledOk(loading)) && !tab.gone) {
      // A tab joining a loaded engine: nothing to download, it is ready.
      tab.progress?.({ phase: 'ready', loadedBytes: 0, totalBytes: 0 });
    }
    const loaded = await loading;
    return loaded.ok ? result(() => this.info()) : loaded;
  }

  private async decide(
    tab: Tab,
    id: number,
    body: unknown,
    options?: DecideWireOptions,
  ): Promise<WireResult<AnswerWire>> {
    const host = this.host;
    if (!host || tab.gone || !tab.joined) {
      return result(() => {
        throw new DisposedError('No model is loaded');
      });
    }
    const engineId = this.nextId++;
    tab.requests.set(id, engineId);
    const queued = performance.now();
    const startedBefore = this.started;
    const runningThen = this.busy ? 1 : 0;
    try {
      return await this.lanes.push(
        engineId,
        async (): Promise<WireResult<AnswerWire>> => {
          tab.running.add(engineId);
          const queue = {
            waitedMs: performance.now() - queued,
            behind: runningThen + this.started - startedBefore,
          };
          this.started++;
          this.busy = true;
          try {
            const decided = await host.systemone(engineId, body, options);
            if (!decided.ok) return decided;
            const timings = { ...decided.value.timings, queue };
            return { ok: true, value: { ...decided.value, timings } };
          } finally {
            this.busy = false;
          }
        },
        tab.id,
      );
    } catch (e) {
      // Dropped while waiting (aborted, or the tab left).
      return result(() => {
        throw e;
      });
    } finally {
      tab.requests.delete(id);
      tab.running.delete(engineId);
    }
  }

  private cancel(tab: Tab, id: number): boolean {
    const engineId = tab.requests.get(id);
    if (engineId === undefined) return false;
    this.cancelEngineId(tab, engineId);
    return true;
  }

  private cancelEngineId(tab: Tab, engineId: number): void {
    // A running decision stops at its next check and says where; a waiting one is dropped.
    if (tab.running.has(engineId)) void this.host?.cancel(engineId);
    else this.lanes.cancel(engineId);
  }

  private async lifeline(tab: Tab, name: string): Promise<boolean> {
    const locks = globalThis.navigator?.locks;
    if (!locks || tab.gone) return false;
    await new Promise<void>((held) => {
      // Held until the worker ends, or the tab leaves (its page stops watching then).
      void locks.request(name, () => {
        held();
        return new Promise<void>((release) => (tab.releaseLifeline = release));
      });
    });
    return true;
  }

  private async info(): Promise<HostInfo> {
    const host = this.host;
    if (!host) throw new DisposedError('No model is loaded');
    const info = await host.info();
    if (!info.ok) throw fromWireError(info.error);
    return {
      ...info.value,
      counters: { ...info.value.counters, pending: this.lanes.size, tabs: this.tabs.size },
    };
  }

  /** The tab is gone (`closed`: its lock was granted) or disposed its clef. */
  private leave(tab: Tab, closed: boolean): void {
    if (tab.gone) return;
    tab.gone = true;
    this.tabs.delete(tab);
    tab.watching.abort();
    tab.releaseLifeline?.();
    // The page's onProgress, a Comlink proxy holding a port of its own.
    const release = (tab.progress as { [Comlink.releaseProxy]?: unknown } | null)?.[
      Comlink.releaseProxy
    ];
    tab.progress = null;
    if (typeof release === 'function') (release as () => void)();
    for (const engineId of [...tab.requests.values()]) this.cancelEngineId(tab, engineId);
    // After the reply to dispose() has been posted; a closed tab's port leads nowhere.
    if (closed) tab.port.close();
    else setTimeout(() => tab.port.close(), 0);
    this.endIfUnused();
  }

  /** Ends the worker once no tab holds or is taking the engine. */
  private endIfUnused(): void {
    clearTimeout(this.retry);
    const presence = this.presenceLock;
    if (this.tabs.size > 0 || this.ending || !presence) return;
    void navigator.locks
      .request(presence, { ifAvailable: true }, async (lock) => {
        if (!lock || this.tabs.size > 0 || this.ending) {
          // A tab is connecting (or died between taking presenceLock and joining): look again.
          if (this.tabs.size === 0 && !this.ending) {
            this.retry = setTimeout(() => this.endIfUnused(), END_RETRY_MS);
          }
          return;
        }
        this.ending = true;
        await this.host?.dispose().catch(() => undefined);
        this.host = null;
        this.end();
        // Held until the worker is gone: a tab that arrives meanwhile waits for a fresh one.
        await new Promise<never>(() => undefined);
      })
      .catch(() => undefined);
  }
}

/** The part of SharedWorkerGlobalScope this file uses (the DOM lib does not describe it). */
interface SharedScope {
  onconnect: ((event: MessageEvent) => void) | null;
  close(): void;
}

/**
 * Serves the engine from the worker this runs in: as a SharedWorker, one engine for every tab
 * that connects; as a dedicated worker, `makeHost()`'s engine for its page alone.
 */
export function serveEngine(makeHost: () => WorkerApi): void {
  if ('onconnect' in globalThis) {
    const scope = globalThis as unknown as SharedScope;
    const engine = new SharedEngine(makeHost, () => scope.close());
    scope.onconnect = (event) => {
      const port = event.ports[0];
      if (port) engine.connect(port);
    };
  } else {
    Comlink.expose(makeHost());
  }
}
