/**
 * One engine per (package URL, device, shared) for the whole page: every `<clef-decide>` asking
 * for the same model shares one worker and one download (and with `shared`, the tabs share it
 * too: createClef({ shared: true })). Entries are reference-counted and disposed a
 * little after the last user leaves, so moving an element in the DOM does not reload the model.
 *
 * The registry lives on `globalThis` under a versioned symbol: two copies of the element script
 * on one page (a bundle included twice, or two bundles) still share engines.
 */
import type { DeviceRequest } from '../../core/devices.js';
import { createClef, type Clef, type ClefOptions } from '../../client/clef.js';
import type { LoadProgress } from '../../wire/wire.js';
import type { EngineInfo } from '../../wire/telemetry.js';

export type DeviceChoice = DeviceRequest;

export type ProgressListener = (progress: LoadProgress) => void;

/** A user's hold on a shared engine. Call `release` exactly once when done. */
export interface EngineLease {
  readonly key: string;
  readonly clef: Promise<Clef>;
  /** The engine's info() right after load (model name, device, package hash; counters then). */
  readonly info: Promise<EngineInfo>;
  /** The latest load progress, or null before the first report. */
  readonly progress: LoadProgress | null;
  release(): void;
}

interface Entry {
  key: string;
  clef: Promise<Clef>;
  info: Promise<EngineInfo>;
  users: number;
  listeners: Set<ProgressListener>;
  /** Boxed so the factory's progress callback can write it before the entry exists. */
  progress: { last: LoadProgress | null };
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

export type ClefFactory = (options: ClefOptions) => Promise<Clef>;

export interface RegistryOptions {
  create?: ClefFactory;
  /** How long an engine nobody uses is kept before it is disposed (default 2000 ms). */
  idleMs?: number;
}

export function engineKey(model: string, device: DeviceChoice, shared = false): string {
  const url = new URL(model, globalThis.location?.href).href;
  return `${device} ${url}${shared ? ' shared' : ''}`;
}

export class EngineRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly create: ClefFactory;
  private readonly idleMs: number;
  /** Engines created so far (a diagnostic: tests check that elements share one). */
  loadsStarted = 0;

  constructor(options: RegistryOptions = {}) {
    this.create = options.create ?? createClef;
    this.idleMs = options.idleMs ?? 2000;
  }

  /** Engines currently held or loading. */
  get size(): number {
    return this.entries.size;
  }

  acquire(
    model: string,
    device: DeviceChoice,
    onProgress?: ProgressListener,
    shared = false,
  ): EngineLease {
    const key = engineKey(model, device, shared);
    const entry = this.entries.get(key) ?? this.start(key, model, device, shared);
    entry.users++;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    if (onProgress) {
      entry.listeners.add(onProgress);
      // A late subscriber sees where the shared load already is.
      if (entry.progress.last) onProgress(entry.progress.last);
    }
    let released = false;
    return {
      key,
      clef: entry.clef,
      info: entry.info,
      get progress() {
        return entry.progress.last;
      },
      release: () => {
        if (released) return;
        released = true;
        if (onProgress) entry.listeners.delete(onProgress);
        this.releaseEntry(entry);
      },
    };
  }

  private start(key: string, model: string, device: DeviceChoice, shared: boolean): Entry {
    this.loadsStarted++;
    const listeners = new Set<ProgressListener>();
    const progress: { last: LoadProgress | null } = { last: null };
    const clef = this.create({
      model,
      device,
      ...(shared ? { shared } : {}),
      onProgress: (p) => {
        progress.last = p;
        for (const listener of [...listeners]) listener(p);
      },
    });
    const entry: Entry = {
      key,
      clef,
      info: clef.then((c) => c.info()),
      users: 0,
      listeners,
      progress,
      idleTimer: undefined,
    };
    // A failed load must not stick: the next acquire (a retry) starts a fresh one.
    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    entry.clef.catch(forget);
    entry.info.catch(forget);
    this.entries.set(key, entry);
    return entry;
  }

  private releaseEntry(entry: Entry): void {
    entry.users--;
    if (entry.users > 0) return;
    entry.idleTimer = setTimeout(() => {
      if (entry.users > 0) return;
      if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
      entry.clef.then((clef) => clef.dispose()).catch(() => undefined);
    }, this.idleMs);
  }
}

const GLOBAL_KEY = Symbol.for('clef-web.engine-registry.v1');

/** The page-wide registry, shared by every copy of the element script. */
export function sharedRegistry(): EngineRegistry {
  const holder = globalThis as typeof globalThis & { [GLOBAL_KEY]?: EngineRegistry };
  holder[GLOBAL_KEY] ??= new EngineRegistry();
  return holder[GLOBAL_KEY];
}
