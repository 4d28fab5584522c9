/**
 * The trainer's thread pool, runtime-free: the fit's shards (shards.ts) and a small file's
 * cross-fits (select.ts FoldRunner) on threads that run thread-body.ts. The host starts each
 * thread (StartThread): Node's worker_threads for `clef-web train` (src/node/train/shard-pool.ts),
 * the page's Web Workers for the Train panel (workers/train.worker.ts). The pool and its threads
 * speak thread-wire.ts.
 *
 * The threads start with the first fit that has more than one shard (or the first cross-fit),
 * get each fit's examples once, and per evaluation the parameters through a SharedArrayBuffer;
 * each thread takes the next shard not yet taken (a slow core does fewer) and writes its loss and
 * gradient into the shard's own slot of another shared buffer. This thread then adds the slots in
 * shard order, so the sum is the same bits whichever thread did which shard, and the same as one
 * thread's.
 *
 * A small file's fits have one shard each, so there the same threads run a cross-fit's fits at
 * once instead: the fits of every cross-fit asked for wait in one queue, first come first, and
 * each free thread takes the next (the search asks for the order layer's probe early, so it runs
 * beside the cross-fits after it: layer-search.ts), and so do the starts of the model kept
 * (fitStarts: the order layer's two). A thread gets a cross-fit's examples with its first fit of
 * it, runs each fit whole and sends back its answers for the fold it left out (a start: its
 * model). A fit is the same code on the same inputs wherever it runs, so the answers are the same
 * bits.
 *
 * Whoever makes the pool closes it (in a finally, on success, error and interrupt): the threads
 * are terminated. A thread that fails fails the run (train_thread_failed).
 */
import { TrainError } from './errors.js';
import type { Gradients } from './gradients.js';
import type { ModelParams } from './model.js';
import type { FittedModel } from './learner.js';
import type { FoldJob, FoldRunner } from './select.js';
import {
  shardLayout,
  sumShards,
  writeParams,
  type ShardFit,
  type ShardPool,
  type ShardSession,
} from './shards.js';
import type {
  PoolThread,
  ShardReply,
  ShardRequest,
  StartThread,
  ThreadEvents,
} from './thread-wire.js';

export { MAX_DEFAULT_THREADS } from './thread-wire.js';

export interface TrainThreadPool extends ShardPool, FoldRunner {
  /** Terminates the threads (an evaluation under way fails); the pool cannot be used after. */
  close(): Promise<void>;
  /** Threads started and not yet ended. */
  running(): number;
}

/** A job's request as a batch makes it, before runFit gives it an id and the batch's session. */
type JobRequest =
  | Omit<Extract<ShardRequest, { type: 'fit' }>, 'id' | 'session'>
  | Omit<Extract<ShardRequest, { type: 'start' }>, 'id' | 'session'>;

/**
 * A cross-fit's fits (fitFolds) or a model's starts (fitStarts), queued and run on whichever
 * thread is free.
 */
interface Batch {
  session: Extract<ShardRequest, { type: 'folds' }>;
  /** Job j's request, but for its id and session (runFit adds them). */
  request: (j: number) => JobRequest;
  /** Job j's result from its reply (a reply of another kind throws). */
  read: (reply: ShardReply) => unknown;
  results: unknown[];
  /** Jobs not yet fitted. */
  left: number;
  /** Jobs under way: only the earliest one's iterations are reported, so they count up. */
  underWay: Set<number>;
  onFitted: (job: number) => void;
  onIteration?: (iteration: number) => void;
  /** Threads that hold its examples. */
  holders: Set<Thread>;
  settled: boolean;
  resolve: (results: unknown[]) => void;
  reject: (e: unknown) => void;
}

interface Thread {
  port: PoolThread;
  /** The evaluation or fit it runs, if any. */
  waiting: {
    id: number;
    done: (reply: ShardReply) => void;
    failed: (e: Error) => void;
    onIteration?: (iteration: number) => void;
  } | null;
}

/** How the pool's host starts a thread, and what its failure says to do. */
export interface ThreadPoolHost {
  start: StartThread;
  /** What a user does to fit without threads, as the failure says it: "run again with --threads 1". */
  oneThread: string;
}

export function threadPool(threads: number, host: ThreadPoolHost): TrainThreadPool {
  if (!Number.isInteger(threads) || threads < 1) {
    throw new TrainError(
      'train_options_invalid',
      `threads must be an integer >= 1, got ${threads}`,
    );
  }
  const threadFailed = (message: string, details: Record<string, unknown> = {}): TrainError =>
    new TrainError(
      'train_thread_failed',
      `a training thread failed: ${message} (${host.oneThread} to fit in one thread)`,
      details,
    );
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
    // A thread still fitting for it keeps what it holds until that fit ends (thread-body.ts).
    if (!closed && broken === null)
      for (const t of batch.holders)
        t.port.post({
          type: 'forget',
          session: batch.session.session,
        } satisfies ShardRequest);
    if (error === undefined) batch.resolve(batch.results);
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
    if (!batch.holders.has(t)) {
      t.port.post(batch.session);
      batch.holders.add(t);
    }
    batch.underWay.add(j);
    const request = { ...batch.request(j), id: ++evaluation, session: batch.session.session };
    ask(t, request, (iteration) => {
      if (j === Math.min(...batch.underWay)) batch.onIteration?.(iteration);
    })
      .then((reply) => {
        batch.underWay.delete(j);
        if (batch.settled) return;
        batch.results[j] = batch.read(reply);
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
    let ended = false;
    const events: ThreadEvents = {
      reply(m: ShardReply) {
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
      },
      error: (message, details) => fail(threadFailed(message, details)),
      exit(details) {
        if (ended) return;
        ended = true;
        running--;
        if (!closed) {
          const code = details.exitCode === undefined ? '' : ` (code ${String(details.exitCode)})`;
          fail(threadFailed(`it exited${code}`, details));
        }
      },
    };
    const thread: Thread = { port: host.start(events), waiting: null };
    running++;
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
      t.port.post(request);
    });

  /** Queues `count` jobs of one session (its examples sent once a thread) and waits for all. */
  const queueBatch = <T>(
    held: Omit<Extract<ShardRequest, { type: 'folds' }>, 'type' | 'session'>,
    count: number,
    request: Batch['request'],
    read: (reply: ShardReply) => T,
    onFitted: (job: number) => void,
    onIteration?: (iteration: number) => void,
  ): Promise<T[]> => {
    usable();
    // No fit would settle it.
    if (count === 0) return Promise.resolve([]);
    return new Promise<T[]>((resolve, reject) => {
      const batch: Batch = {
        session: { type: 'folds', session: ++sessions, ...held },
        request,
        read,
        results: new Array<T>(count),
        left: count,
        underWay: new Set(),
        onFitted,
        onIteration,
        holders: new Set(),
        settled: false,
        resolve: resolve as (results: unknown[]) => void,
        reject,
      };
      batches.add(batch);
      for (let j = 0; j < count; j++) queue.push({ batch, j });
      pump();
    });
  };

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
      for (const t of mine) t.port.post(request satisfies ShardRequest);
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
          for (const t of mine) t.port.post({ type: 'close' } satisfies ShardRequest);
        },
      };
    },
    fitFolds(setup, examples, folds, jobs, { maxIterations, onFitted, onIteration }) {
      return queueBatch<Float64Array[][]>(
        { setup, examples, folds },
        jobs.length,
        (j) => ({ type: 'fit', ...(jobs[j] as FoldJob), maxIterations }),
        (reply) => {
          if (reply.type !== 'fitted') throw threadFailed(`a fit came back as ${reply.type}`);
          return reply.answers;
        },
        onFitted,
        onIteration,
      );
    },
    fitStarts(setup, examples, settings, seeds, { maxIterations, onFitted, onIteration }) {
      return queueBatch<FittedModel>(
        { setup, examples, folds: [] },
        seeds.length,
        (j) => ({ type: 'start', settings, seed: seeds[j] as number, maxIterations }),
        (reply) => {
          if (reply.type !== 'model') throw threadFailed(`a start came back as ${reply.type}`);
          return reply.model;
        },
        onFitted,
        onIteration,
      );
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
      const stopping = pool.map((t) => t.port.terminate());
      pool.length = 0;
      await Promise.all(stopping);
    },
  };
}
