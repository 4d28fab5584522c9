/**
 * The fit's shards (src/build/train/shards.ts) on worker threads (shard-worker.ts), for
 * `clef-web train` in Node. The threads start with the first fit that has more than one shard,
 * get each fit's examples once, and per evaluation the parameters through a SharedArrayBuffer;
 * each thread takes the next shard not yet taken (a slow core does fewer) and writes its loss and
 * gradient into the shard's own slot of another shared buffer. This thread then adds the slots in
 * shard order, so the sum is the same bits whichever thread did which shard, and the same as one
 * thread's.
 *
 * A small file's fits have one shard each, so there the same threads run a cross-fit's fits at
 * once instead (select.ts FoldRunner): the fits of every cross-fit asked for wait in one queue,
 * first come first, and each free thread takes the next (the search asks for the order layer's
 * probe early, so it runs beside the cross-fits after it: layer-search.ts). A thread gets a
 * cross-fit's examples with its first fit of it, runs each fit whole and sends back its answers
 * for the fold it left out. A fit is the same code on the same inputs wherever it runs, so the
 * answers are the same bits.
 *
 * Whoever makes the pool closes it (trainDecisionModel: in a finally, on success, error and
 * interrupt): the threads are terminated. A thread that fails fails the run (train_thread_failed).
 */
import type { Worker } from 'node:worker_threads';
import { TrainError } from '../../build/train/errors.js';
import type { Gradients } from '../../build/train/gradients.js';
import type { FitSettings } from '../../build/train/learner.js';
import type { LearnerSetup } from '../../build/train/learner-setup.js';
import type { ModelExample, ModelParams } from '../../build/train/model.js';
import type { FoldJob, FoldRunner } from '../../build/train/select.js';
import {
  shardLayout,
  sumShards,
  writeParams,
  type ShardFit,
  type ShardLayout,
  type ShardPool,
  type ShardSession,
} from '../../build/train/shards.js';
import { moduleWorker } from '../module-worker.js';

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
  /** A cross-fit's examples, for the `fit`s of its session. */
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
  /** Lets go of a cross-fit's examples. */
  | { type: 'forget'; session: number }
  /** Lets go of the open fit's examples. */
  | { type: 'close' };

/** What a thread sends back. */
export type ShardReply =
  | { type: 'done'; id: number }
  /** A `fit`'s answers: the logits of the examples of the fold it left out, in example order. */
  | { type: 'fitted'; id: number; answers: Float64Array[][] }
  /** Each iteration of a `fit` under way. */
  | { type: 'iteration'; id: number; iteration: number }
  | { type: 'failed'; id: number; message: string; stack?: string };

/** Threads at most by default: the fit's 8 shards share out evenly, memory stays modest. */
export const MAX_DEFAULT_THREADS = 4;

export interface NodeShardPool extends ShardPool, FoldRunner {
  /** Terminates the threads (an evaluation under way fails); the pool cannot be used after. */
  close(): Promise<void>;
  /** Threads started and not yet ended. */
  running(): number;
}

/** A cross-fit's fits (fitFolds), queued and run on whichever thread is free. */
interface Batch {
  session: Extract<ShardRequest, { type: 'folds' }>;
  jobs: readonly FoldJob[];
  maxIterations: number;
  answers: Float64Array[][][];
  /** Jobs not yet fitted. */
  left: number;
  /** Jobs under way: only the earliest one's iterations are reported, so they count up. */
  underWay: Set<number>;
  onFitted: (job: number) => void;
  onIteration?: (iteration: number) => void;
  /** Threads that hold its examples. */
  holders: Set<Thread>;
  settled: boolean;
  resolve: (answers: Float64Array[][][]) => void;
  reject: (e: unknown) => void;
}

interface Thread {
  worker: Worker;
  /** The evaluation or fit it runs, if any. */
  waiting: {
    id: number;
    done: (reply: ShardReply) => void;
    failed: (e: Error) => void;
    onIteration?: (iteration: number) => void;
  } | null;
}

function threadFailed(message: string, details: Record<string, unknown> = {}): TrainError {
  return new TrainError(
    'train_thread_failed',
    `a training thread failed: ${message} (run again with --threads 1 to fit in one thread)`,
    details,
  );
}

export function nodeShardPool(threads: number): NodeShardPool {
  if (!Number.isInteger(threads) || threads < 1) {
    throw new TrainError(
      'train_options_invalid',
      `threads must be an integer >= 1, got ${threads}`,
    );
  }
  const pool: Thread[] = [];
  let running = 0;
  let broken: TrainError | null = null;
  let closed = false;
  let session = 0;
  let evaluation = 0;

  // Cross-fits under way (fitFolds) and their fits not yet taken by a thread, first come first.
  const batches = new Set<Batch>();
  const queue: Array<{ batch: Batch; j: number }> = [];
  let sessions = 0;

  /** Ends a batch: its answers, or the first error (its queued fits are dropped). */
  const settle = (batch: Batch, error?: unknown): void => {
    if (batch.settled) return;
    batch.settled = true;
    batches.delete(batch);
    for (let q = queue.length - 1; q >= 0; q--) if (queue[q]?.batch === batch) queue.splice(q, 1);
    // A thread still fitting for it keeps what it holds until that fit ends (shard-worker.ts).
    if (!closed && broken === null)
      for (const t of batch.holders)
        t.worker.postMessage({
          type: 'forget',
          session: batch.session.session,
        } satisfies ShardRequest);
    if (error === undefined) batch.resolve(batch.answers);
    else batch.reject(error);
  };

  const fail = (error: TrainError): void => {
    broken ??= error;
    for (const t of pool) {
      t.waiting?.failed(error);
      t.waiting = null;
    }
    for (const batch of [...batches]) settle(batch, error);
  };

  /** Runs job j of a batch on thread t, then whatever is queued next. */
  const runFit = (t: Thread, batch: Batch, j: number): void => {
    const { settings, fold } = batch.jobs[j] as FoldJob;
    if (!batch.holders.has(t)) {
      t.worker.postMessage(batch.session);
      batch.holders.add(t);
    }
    batch.underWay.add(j);
    const request = {
      type: 'fit' as const,
      id: ++evaluation,
      session: batch.session.session,
      settings,
      fold,
      maxIterations: batch.maxIterations,
    };
    ask(t, request, (iteration) => {
      if (j === Math.min(...batch.underWay)) batch.onIteration?.(iteration);
    })
      .then((reply) => {
        batch.underWay.delete(j);
        if (batch.settled) return;
        if (reply.type !== 'fitted') throw threadFailed(`a fit came back as ${reply.type}`);
        batch.answers[j] = reply.answers;
        // An interrupt throws here: the batch ends with it, its queued fits dropped.
        batch.onFitted(j);
        batch.left -= 1;
        if (batch.left === 0) settle(batch);
      })
      .catch((e: unknown) => settle(batch, e))
      .finally(pump);
  };

  /** Gives each free thread (started up to `threads`) the next queued fit. */
  const pump = (): void => {
    while (queue.length > 0 && !closed && broken === null) {
      const t =
        pool.find((x) => x.waiting === null) ?? (pool.length < threads ? start() : undefined);
      if (t === undefined) return;
      const { batch, j } = queue.shift() as { batch: Batch; j: number };
      runFit(t, batch, j);
    }
  };

  const start = (): Thread => {
    const thread: Thread = {
      worker: moduleWorker(import.meta.url, 'shard-worker', null),
      waiting: null,
    };
    thread.worker.on('message', (m: ShardReply) => {
      const waiting = thread.waiting;
      if (waiting === null || m.id !== waiting.id) return;
      if (m.type === 'iteration') {
        waiting.onIteration?.(m.iteration);
        return;
      }
      thread.waiting = null;
      if (m.type !== 'failed') {
        waiting.done(m);
        return;
      }
      // This thread's own evaluation fails too: fail() reaches only those still waiting, and
      // this one no longer is (when it replies last, no other is either).
      const error = threadFailed(m.message, { stack: m.stack });
      fail(error);
      waiting.failed(error);
    });
    thread.worker.on('error', (e) => fail(threadFailed(e.message, { stack: e.stack })));
    thread.worker.on('exit', (code) => {
      if (!closed) fail(threadFailed(`it exited (code ${code})`, { exitCode: code }));
    });
    running++;
    thread.worker.once('exit', () => running--);
    pool.push(thread);
    return thread;
  };

  const usable = (): void => {
    if (closed) throw new Error('the shard pool is closed');
    if (broken !== null) throw broken;
  };
  /** The first `used` threads, started where they are not yet. */
  const threadsFor = (used: number): Thread[] => {
    while (pool.length < used) start();
    return pool.slice(0, used);
  };
  /** Sends a thread a request and waits for its reply (a failure fails the pool). */
  const ask = (
    t: Thread,
    request: ShardRequest & { id: number },
    onIteration?: (iteration: number) => void,
  ): Promise<ShardReply> =>
    new Promise<ShardReply>((done, failed) => {
      t.waiting = { id: request.id, done, failed, onIteration };
      t.worker.postMessage(request);
    });

  return {
    threads,
    open(fit: ShardFit): ShardSession {
      usable();
      const shards = fit.ranges.length;
      const used = Math.min(threads, shards);
      const layout = shardLayout(fit);
      const request = {
        type: 'open' as const,
        fit,
        layout,
        params: new SharedArrayBuffer(layout.params * 8),
        grads: new SharedArrayBuffer(layout.gradient * shards * 8),
        control: new SharedArrayBuffer(8),
      };
      const paramBuffer = new Float64Array(request.params);
      const gradBuffer = new Float64Array(request.grads);
      const control = new Int32Array(request.control);
      const mine = threadsFor(used);
      for (const t of mine) t.worker.postMessage(request satisfies ShardRequest);
      const id = ++session;
      return {
        async evaluate(params: ModelParams, total: Gradients): Promise<number> {
          if (broken !== null) throw broken;
          if (id !== session || closed) throw new Error('this fit is no longer open in the pool');
          writeParams(params, layout, paramBuffer);
          Atomics.store(control, 1, 0);
          // The store to the shard counter publishes the parameters (the threads' Atomics.add
          // on it reads them after).
          Atomics.store(control, 0, 0);
          const n = ++evaluation;
          await Promise.all(mine.map((t) => ask(t, { type: 'evaluate', id: n })));
          const finished = Atomics.load(control, 1);
          if (finished !== shards) throw threadFailed(`${finished} of ${shards} shards came back`);
          return sumShards(fit, layout, gradBuffer, shards, total);
        },
        close(): void {
          if (id !== session || closed || broken !== null) return;
          for (const t of mine) t.worker.postMessage({ type: 'close' } satisfies ShardRequest);
        },
      };
    },
    fitFolds(setup, examples, folds, jobs, { maxIterations, onFitted, onIteration }) {
      usable();
      // No fit would settle it.
      if (jobs.length === 0) return Promise.resolve([]);
      return new Promise<Float64Array[][][]>((resolve, reject) => {
        const batch: Batch = {
          session: { type: 'folds', session: ++sessions, setup, examples, folds },
          jobs,
          maxIterations,
          answers: new Array<Float64Array[][]>(jobs.length),
          left: jobs.length,
          underWay: new Set(),
          onFitted,
          onIteration,
          holders: new Set(),
          settled: false,
          resolve,
          reject,
        };
        batches.add(batch);
        jobs.forEach((_, j) => queue.push({ batch, j }));
        pump();
      });
    },
    running: () => running,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const t of pool) {
        t.waiting?.failed(new Error('the shard pool was closed during an evaluation'));
        t.waiting = null;
      }
      // A cross-fit whose fits were all still queued has no thread to fail it.
      for (const batch of [...batches]) settle(batch, new Error('the shard pool was closed'));
      const stopping = pool.map((t) => t.worker.terminate());
      pool.length = 0;
      await Promise.all(stopping);
    },
  };
}
