/**
 * One thread of the fit's shard pool (shard-pool.ts): it holds the open fit's examples, and on
 * each `evaluate` takes shards not yet taken, one at a time, and writes each one's loss and
 * gradient into the shard's slot of the shared gradient buffer (shards.ts evaluateShard).
 */
import { parentPort } from 'node:worker_threads';
import type { Gradients } from '../../build/train/gradients.js';
import type { ModelExample, ModelParams } from '../../build/train/model.js';
import {
  evaluateShard,
  gradientsOver,
  paramsOver,
  type ShardFit,
  type ShardLayout,
} from '../../build/train/shards.js';
import type { ShardReply, ShardRequest } from './shard-pool.js';

const port = parentPort;
if (port === null) throw new Error('shard-worker.ts runs as a worker thread only');

interface OpenFit {
  fit: ShardFit;
  layout: ShardLayout;
  params: ModelParams;
  refresh: () => void;
  slices: ModelExample[][];
  grads: Gradients[];
  gradBuffer: Float64Array;
  control: Int32Array;
}

let open: OpenFit | null = null;

function evaluate(state: OpenFit): void {
  state.refresh();
  const shards = state.slices.length;
  for (;;) {
    const s = Atomics.add(state.control, 0, 1);
    if (s >= shards) return;
    const { fit, layout, params, gradBuffer } = state;
    const slice = state.slices[s] as ModelExample[];
    evaluateShard(params, slice, fit.weight, state.grads[s] as Gradients, layout, gradBuffer, s);
    Atomics.add(state.control, 1, 1);
  }
}

port.on('message', (m: ShardRequest) => {
  if (m.type === 'open') {
    const paramBuffer = new Float64Array(m.params);
    const gradBuffer = new Float64Array(m.grads);
    const { params, refresh } = paramsOver(m.fit, m.layout, paramBuffer);
    open = {
      fit: m.fit,
      layout: m.layout,
      params,
      refresh,
      slices: m.fit.ranges.map(([a, b]) => m.fit.examples.slice(a, b)),
      grads: m.fit.ranges.map((_, s) => gradientsOver(m.fit, m.layout, gradBuffer, s)),
      gradBuffer,
      control: new Int32Array(m.control),
    };
  } else if (m.type === 'close') {
    open = null;
  } else {
    let reply: ShardReply;
    try {
      if (open === null) throw new Error('no fit is open');
      evaluate(open);
      reply = { type: 'done', id: m.id };
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      reply = { type: 'failed', id: m.id, message: error.message, stack: error.stack };
    }
    port.postMessage(reply);
  }
});
