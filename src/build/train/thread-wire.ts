/**
 * What crosses between the trainer's thread pool (thread-pool.ts) and each of its threads
 * (thread-body.ts), and what a host hands the pool to start a thread: Node's worker_threads
 * (src/node/train/shard-pool.ts) or the page's Web Workers (workers/train.worker.ts). Types, and
 * the threads both hosts start by default; no behaviour.
 */
import type { LearnerSetup } from './learner-setup.js';
import type { FitSettings, FittedModel } from './learner.js';
import type { ModelExample } from './model.js';
import type { ShardFit, ShardLayout } from './shards.js';

/**
 * Threads at most by default (`clef-web train --threads`, the Train panel's Threads): the fit's
 * 8 shards share out evenly, memory stays modest.
 */
export const MAX_DEFAULT_THREADS = 4;

/** What the pool sends a thread. */
export type ShardRequest =
  | {
      type: 'open';
      fit: ShardFit;
      layout: ShardLayout;
      /** Float64: the parameters (shardLayout). */
      params: SharedArrayBuffer;
      /** Float64: one gradient slot per shard. */
      grads: SharedArrayBuffer;
      /** Int32: [next shard to take, shards done]. */
      control: SharedArrayBuffer;
    }
  | { type: 'evaluate'; id: number }
  /** A cross-fit's examples (or a model's, `folds` empty), for the `fit`s or `start`s of its session. */
  | {
      type: 'folds';
      session: number;
      setup: LearnerSetup;
      examples: readonly ModelExample[];
      folds: readonly number[];
    }
  | {
      type: 'fit';
      id: number;
      session: number;
      settings: FitSettings;
      fold: number;
      maxIterations: number;
    }
  /** A model's start on every example of its session (fitModel's `starts`, one at a time). */
  | {
      type: 'start';
      id: number;
      session: number;
      settings: FitSettings;
      seed: number;
      maxIterations: number;
    }
  /** Lets go of a cross-fit's examples. */
  | { type: 'forget'; session: number }
  /** Lets go of the open fit's examples. */
  | { type: 'close' };

/** What a thread sends back. */
export type ShardReply =
  | { type: 'done'; id: number }
  /** A `fit`'s answers: the logits of the examples of the fold it left out, in example order. */
  | { type: 'fitted'; id: number; answers: Float64Array[][] }
  /** A `start`'s fitted model. */
  | { type: 'model'; id: number; model: FittedModel }
  /** Each iteration of a `fit` under way. */
  | { type: 'iteration'; id: number; iteration: number }
  | { type: 'failed'; id: number; message: string; stack?: string };

/** What the pool is told of a thread it started. */
export interface ThreadEvents {
  reply(message: ShardReply): void;
  /** An error the thread did not catch (its own failures come as `failed` replies). */
  error(message: string, details: Record<string, unknown>): void;
  /** The thread is gone: terminated by the pool, or ended of itself. Called once. */
  exit(details: Record<string, unknown>): void;
}

/** One thread running thread-body.ts, as the host starts it. */
export interface PoolThread {
  post(message: ShardRequest): void;
  /** Ends the thread; `exit` is called once it is gone. */
  terminate(): Promise<void>;
}

/** Starts one thread, whose events go to `events`. */
export type StartThread = (events: ThreadEvents) => PoolThread;
