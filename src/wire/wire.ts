/**
 * What crosses the page ↔ worker boundary, as plain structured-clone data: the worker's API, its
 * load options and what a decision answers. Behaviour-free; errors cross as error-wire.ts writes
 * them, and info() and the timings are telemetry.ts's.
 */
import type { CalibratedDecision, CalibrationAsk } from '../calibrate/index.js';
import type { SystemOneResponse } from '../protocol/types.js';
import type { DeviceName, DeviceRequest } from './devices.js';
import type { WireError } from './error-wire.js';
import type { DecisionTimings, HostInfo } from './telemetry.js';

/** Load progress, as `onProgress` receives it. */
export interface LoadProgress {
  phase: 'manifest' | 'download' | 'verify' | 'compile' | 'ready';
  /** The package file being worked on, when there is one. */
  file?: string;
  loadedBytes: number;
  totalBytes: number;
  /** True when the bytes came from the local cache rather than the network. */
  fromCache?: boolean;
}

/** A worker call's outcome. Worker methods never throw across the boundary: they return this. */
export type WireResult<T> = { ok: true; value: T } | { ok: false; error: WireError };

export interface LoadOptionsWire {
  /** Absolute URL of the package directory (holding manifest.json). */
  model: string;
  device: DeviceRequest;
  dtype?: string;
  cacheBudgetBytes: number;
  /** Use Cache Storage for package files (default true). */
  cache: boolean;
  /** Make one small decision right after load, in the background (default true). */
  warmUp?: boolean;
  /** onnxruntime-web build for the WASM device (default 'plain'; see ClefOptions.wasmBuild). */
  wasmBuild?: 'plain' | 'asyncify';
  /** The KV cache's precision (default 'auto'; see ClefOptions.kvDtype). */
  kvDtype?: 'auto' | 'float32' | 'float16';
  /** On WASM, use the package's WASM-prepared graphs (default true; see ClefOptions). */
  preparedGraphs?: boolean;
  /**
   * At most this many WASM threads, and why (info().threadsReason): the page's cap after a
   * thread worker's start never returned (src/client/connection.ts). Absent: as the page allows.
   */
  threads?: number;
  threadsReason?: string;
}

/**
 * What a request asks beyond what a trained package was trained on (src/core/untrained.ts finds
 * it): one entry per question, option or description the training never saw.
 */
export interface UntrainedPart {
  /** The request's question id. */
  question: string;
  /** What was not trained: the question itself, one of its option ids, or an option's description. */
  kind: 'question' | 'option' | 'description';
  /** The option, for `option` and `description`. */
  option?: string;
  /** One sentence a person reads. */
  message: string;
}

export interface DecisionWire {
  response: SystemOneResponse;
  /** The body as JSON text, keys in request order (a JS object reorders integer-like keys). */
  json: string;
  timings: DecisionTimings;
  /**
   * The head's raw float32 logits, one array per question (request order), one value per option
   * in prompt order (noul true/false, choice in prompt order, score levels): unrounded, so tests
   * and tools can compare the engine with a reference forward. Set by the engine for
   * `decide()`; absent on answers that did not come from a local forward.
   */
  logits?: number[][];
  /**
   * Only when calibrated answers were asked for (createClef({ calibration }) or per call):
   * calibrated probabilities, prediction sets and abstention, beside the unchanged body.
   */
  calibrated?: CalibratedDecision;
  /**
   * Only for a package `clef-web train` wrote (`info().training`), when the request asks a
   * question, option id or option description it was not trained on: what, one entry each.
   * Those answers carry no information; the body is unchanged (docs/training.md).
   */
  untrained?: UntrainedPart[];
}

/** What a decision asks of the worker beyond the body. */
export interface DecideWireOptions {
  /** Ask for `AnswerWire.calibrated` (absent: the plain decision). */
  calibration?: CalibrationAsk;
  /** Send the head's logits (`AnswerWire.logits`); absent or false: none cross. */
  logits?: boolean;
}

/**
 * A decision's answer as the worker sends it: the body once, as its JSON text; the page reads
 * the response object back from it (src/client/answer.ts) and gives its callers a DecisionWire.
 */
export interface AnswerWire {
  /** The body as JSON text, keys in request order. */
  json: string;
  timings: DecisionTimings;
  /** The device that ran it (a lost WebGPU device moves the engine to WASM mid-session). */
  device: DeviceName;
  /** Only when asked for (`DecideWireOptions.logits`): as `DecisionWire.logits`. */
  logits?: number[][];
  calibrated?: CalibratedDecision;
  untrained?: UntrainedPart[];
}

/** The worker's surface, as Comlink exposes it. */
export interface WorkerApi {
  load(
    options: LoadOptionsWire,
    onProgress?: (p: LoadProgress) => void,
    /** Told before and after each thread worker the runtime starts (src/engine/thread-watch.ts). */
    onThreadWorker?: (notice: 'starting' | 'started') => void,
  ): Promise<WireResult<HostInfo>>;
  systemone(
    id: number,
    body: unknown,
    options?: DecideWireOptions,
  ): Promise<WireResult<AnswerWire>>;
  cancel(id: number): Promise<boolean>;
  /**
   * Takes the Web Lock `name` and holds it until the worker ends, resolving once it is held: the
   * page then waits for the same lock, which it is granted only when the worker is gone (a
   * terminated, closed or crashed worker sends no message). False where Web Locks are missing.
   */
  lifeline(name: string): Promise<boolean>;
  info(): Promise<WireResult<HostInfo>>;
  dispose(): Promise<void>;
}

/**
 * One tab's surface of a shared engine (src/engine/shared-engine.ts), on the MessagePort of its
 * SharedWorker connection: the engine's, with `load` joining the engine that is loaded or
 * loading, `dispose` leaving it (the last tab to leave ends the worker), and `join` first.
 */
export interface SharedEngineApi extends WorkerApi {
  /**
   * Makes this connection a tab of the engine. The tab holds the Web Lock `tabLock` for as
   * long as it is here, and `presenceLock` (shared mode) from before it connected: the worker
   * waits for `tabLock`, which it is granted once the tab has left, closed or navigated away,
   * and ends itself only when it can take `presenceLock` exclusively (no tab connecting).
   */
  join(tabLock: string, presenceLock: string): Promise<WireResult<void>>;
}
