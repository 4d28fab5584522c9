/**
 * What the host needs from a model session on one device: run an encoded request to per-option
 * logits. The ORT-backed implementation lives in clef-session.ts.
 */
import type { EncodedRequest } from '../clef/prompt.js';
import type { KvDtype } from '../core/manifest.js';
import type { DeviceName } from '../core/devices.js';
import type { PackageSource } from './package-fetch.js';
import type { JobContext } from '../core/queue.js';
import type { RunOptions, SessionRun } from '../core/runner.js';
import type { GroupLoad, RuntimePhases } from '../wire/telemetry.js';

export interface DecisionSession {
  readonly device: DeviceName;
  /** How the device's runtime came up, and session creation per graph (ms). */
  readonly runtime?: RuntimePhases;
  readonly sessionMs?: Record<string, number>;
  /** How each backbone graph was fetched and created, in order. */
  readonly groupLoads?: GroupLoad[];
  /** Where the lexicon's rows are read from (see EngineLoadTimes.lexicon). */
  readonly lexicon?: 'memory' | 'cache-storage';
  /** Time spent fetching and verifying files inside session creation (ms). */
  readonly fetchMs?: number;
  run(encoded: EncodedRequest, ctx: JobContext, options?: RunOptions): Promise<SessionRun>;
  /** True once the session's device is gone (a lost WebGPU device). */
  lost(): boolean;
  cacheStats(): { entries: number; bytes: number };
  /**
   * Cumulative bytes read back from the device to the CPU; tensors alive and those the prefix
   * cache holds (optional: benchmarks and leak checks read them).
   */
  counters?(): { readbackBytes: number; liveTensors?: number; cachedTensors?: number };
  dispose(): Promise<void>;
  /** How many of its graphs it created from WASM-prepared files (not optimised at load). */
  preparedGraphs?: number;
}

export interface SessionOptions {
  threads: number;
  wasmBuild?: 'plain' | 'asyncify';
  cacheBudgetBytes: number;
  /** The KV cache's precision (default float32; float16 runs the package's kv16 graphs). */
  kvDtype?: KvDtype;
  /**
   * A lexicon from this size on is read row by row from its cached copy, not held in memory
   * (default 64 MiB, clef-session.ts).
   */
  lexiconInMemoryBelowBytes?: number;
  /** On WASM, create the package's WASM-prepared graphs where it has them (default true). */
  preparedGraphs?: boolean;
}

/**
 * Creates the sessions, fetching the files it needs from `pkg` as it goes (one group at a time:
 * each group's bytes are let go once its session exists). Package errors (IntegrityError,
 * DownloadError, PackageError) come out as they are; a runtime failure as EngineError.
 */
export type SessionFactory = (
  pkg: PackageSource,
  device: DeviceName,
  options: SessionOptions,
) => Promise<DecisionSession>;

/** Starts a device's runtime ahead of session creation (overlapping the download). */
export type RuntimeStarter = (
  device: DeviceName,
  threads: number,
  wasmBuild?: 'plain' | 'asyncify',
) => Promise<RuntimePhases>;
