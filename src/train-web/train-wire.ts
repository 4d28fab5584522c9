/**
 * What crosses between the playground and its train worker (workers/train.worker.ts), through
 * Comlink. Types, and the threads the panel starts by default (as `clef-web train`'s); no
 * behaviour.
 */
import type { InputSummary, PickedFile } from '../build/train/input.js';
import type { TrainProgress, TrainResult } from '../build/train/options.js';

export type { InputSummary, PickedFile, TrainProgress, TrainResult };
export { MAX_DEFAULT_THREADS } from '../build/train/thread-wire.js';

/**
 * What the page asks for: the picked file (its bytes, decoded in the worker as `clef-web train`
 * decodes a file; labelled requests or a plain text-and-label file), and the few settings the
 * panel offers.
 */
export interface PageTrainRequest {
  file: PickedFile;
  name?: string;
  seed?: number;
  holdout?: number;
  /**
   * A port to each thread worker (workers/train-thread.worker.ts) the page started for the fits,
   * as `clef-web train --threads` starts worker threads; fewer than two: the train worker alone.
   * The page starts them, not the train worker: Firefox ESR can block for ever in a worker's own
   * `new Worker()` (src/engine/thread-watch.ts). Their shared buffers need a cross-origin-isolated
   * page.
   */
  threads?: MessagePort[];
}

/**
 * The page's side of the verify phase: the worker hands it the converted package, the page
 * loads it in its own engine (createClef) and answers the held-out requests with their logits.
 */
export interface PageVerifyHost {
  open(files: Record<string, Uint8Array>): Promise<void>;
  decide(request: unknown): Promise<number[][]>;
  close(): Promise<void>;
}

/** A refusal or failure, with its stable code (TrainError's, CalibrationError's) when it has one. */
export interface PageTrainFailure {
  code: string;
  message: string;
  details?: unknown;
}

export type PageTrainOutcome =
  | {
      ok: true;
      result: TrainResult;
      /** The browser package, by path inside it. */
      files: Record<string, Uint8Array>;
      /** The Clef release it was converted from. */
      release: Record<string, Uint8Array>;
      /** The threads that ran fits: 1 where no thread worker was used. */
      threads: number;
    }
  | { ok: false; failure: PageTrainFailure };

export type PageInspectOutcome =
  { ok: true; summary: InputSummary } | { ok: false; failure: PageTrainFailure };

export interface TrainWorkerApi {
  /** Reads the file as a run would (the same checks and messages) and says what it holds. */
  inspect(file: PickedFile): Promise<PageInspectOutcome>;
  train(
    request: PageTrainRequest,
    onProgress: (progress: TrainProgress) => void,
    host: PageVerifyHost,
  ): Promise<PageTrainOutcome>;
}
