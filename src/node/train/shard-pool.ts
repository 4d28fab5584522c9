/**
 * The trainer's thread pool (src/build/train/thread-pool.ts) on worker threads, for
 * `clef-web train` in Node: each thread runs shard-worker.ts. The pool's host here only starts a
 * thread and tells the pool what it says and when it ends.
 */
import type { Worker } from 'node:worker_threads';
import { threadPool, type TrainThreadPool } from '../../build/train/thread-pool.js';
import type { ShardReply, ShardRequest, StartThread } from '../../build/train/thread-wire.js';
import { moduleWorker } from '../module-worker.js';

export { MAX_DEFAULT_THREADS } from '../../build/train/thread-pool.js';

export type NodeShardPool = TrainThreadPool;

const startThread: StartThread = (events) => {
  const worker: Worker = moduleWorker(import.meta.url, 'shard-worker', null);
  worker.on('message', (m: ShardReply) => events.reply(m));
  worker.on('error', (e) => events.error(e.message, { stack: e.stack }));
  worker.on('exit', (code) => events.exit({ exitCode: code }));
  return {
    post: (message: ShardRequest) => worker.postMessage(message),
    terminate: async () => {
      await worker.terminate();
    },
  };
};

export function nodeShardPool(threads: number): NodeShardPool {
  return threadPool(threads, { start: startThread, oneThread: 'run again with --threads 1' });
}
