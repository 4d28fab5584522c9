/// <reference lib="webworker" />
// One thread of the Train panel's pool: the page starts it and hands it a port, whose other end
// it hands the train worker (workers/train.worker.ts); on that port it runs the trainer's
// runtime-free thread (src/build/train/thread-body.ts).
import { shardThread } from '../src/build/train/thread-body.js';
import type { ShardRequest } from '../src/build/train/thread-wire.js';

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = (e: MessageEvent<{ port: MessagePort }>) => {
  const { port } = e.data;
  scope.onmessage = null;
  const handle = shardThread((reply) => port.postMessage(reply));
  port.onmessage = (m: MessageEvent<ShardRequest>) => handle(m.data);
};
