/**
 * What crosses between the playground and its train worker (workers/train.worker.ts), through
 * Comlink. Types only.
 */
import type { TrainProgress, TrainResult } from '../node/train/pipeline.js';

export type { TrainProgress, TrainResult };

/** What the page asks for: the labelled JSONL and the few settings the panel offers. */
export interface PageTrainRequest {
  examples: string;
  name?: string;
  seed?: number;
  holdout?: number;
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
    }
  | { ok: false; failure: PageTrainFailure };

export interface TrainWorkerApi {
  train(
    request: PageTrainRequest,
    onProgress: (progress: TrainProgress) => void,
    host: PageVerifyHost,
  ): Promise<PageTrainOutcome>;
}
