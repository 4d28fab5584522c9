/// <reference lib="webworker" />
// One thread of the Train panel's pool, started by the train worker (workers/train.worker.ts):
// the trainer's runtime-free thread (src/build/train/thread-body.ts) on a Web Worker's port.
import { shardThread } from '../src/build/train/thread-body.js';
import type { ShardRequest } from '../src/build/train/thread-wire.js';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const handle = shardThread((reply) => scope.postMessage(reply));
scope.onmessage = (e: MessageEvent<ShardRequest>) => handle(e.data);
