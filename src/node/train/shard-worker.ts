/**
 * One thread of `clef-web train`'s pool (shard-pool.ts): the runtime-free thread
 * (src/build/train/thread-body.ts) on a worker_threads port.
 */
import { parentPort } from 'node:worker_threads';
import { shardThread } from '../../build/train/thread-body.js';

const parent = parentPort;
if (parent === null) throw new Error('shard-worker.ts runs as a worker thread only');
const port = parent;
port.on(
  'message',
  shardThread((reply) => port.postMessage(reply)),
);
