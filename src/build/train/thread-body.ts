/**
 * One thread of the trainer's pool (thread-pool.ts), runtime-free: the host's thread module
 * (src/node/train/shard-worker.ts, workers/train-thread.worker.ts) hands each message it gets to
 * the handler made here and posts what it sends back.
 *
 * It holds the open fit's examples, and on each `evaluate` takes shards not yet taken, one at a
 * time, and writes each one's loss and gradient into the shard's slot of the shared gradient
 * buffer (shards.ts evaluateShard). Or it holds a cross-fit's examples, and on each `fit` runs
 * that fit whole, as crossFit would on the pool's own thread (select.ts foldAnswers), and sends
 * back its answers for the fold it left out; or, on each `start`, fits a model from one seed on
 * every example and sends the model back.
 */
import type { Gradients } from './gradients.js';
import { fitModel } from './learner.js';
import type { ModelExample, ModelParams } from './model.js';
import { heldAnswers } from './select.js';
import {
  evaluateShard,
  gradientsOver,
  paramsOver,
  type ShardFit,
  type ShardLayout,
} from './shards.js';
import type { ShardReply, ShardRequest } from './thread-wire.js';

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

function failure(id: number, e: unknown): ShardReply {
  const error = e instanceof Error ? e : new Error(String(e));
  return { type: 'failed', id, message: error.message, stack: error.stack };
}

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

/** A thread's state, and the handler of each message the pool sends it. */
export function shardThread(post: (reply: ShardReply) => void): (m: ShardRequest) => void {
  let open: OpenFit | null = null;
  /** The cross-fits whose fits this thread may be given, by session. */
  const crossFits = new Map<number, Extract<ShardRequest, { type: 'folds' }>>();

  const fit = async (m: Extract<ShardRequest, { type: 'fit' }>): Promise<void> => {
    let reply: ShardReply;
    try {
      const held = crossFits.get(m.session);
      if (held === undefined) throw new Error(`cross-fit ${m.session} is not open here`);
      const { setup, examples, folds } = held;
      const fitted = await fitModel(
        setup,
        examples.filter((_, i) => folds[i] !== m.fold),
        {
          settings: m.settings,
          maxIterations: m.maxIterations,
          onIteration: (iteration) => post({ type: 'iteration', id: m.id, iteration }),
        },
      );
      reply = {
        type: 'fitted',
        id: m.id,
        answers: heldAnswers(fitted.params, examples, folds, m.fold),
      };
    } catch (e) {
      reply = failure(m.id, e);
    }
    post(reply);
  };

  const start = async (m: Extract<ShardRequest, { type: 'start' }>): Promise<void> => {
    let reply: ShardReply;
    try {
      const held = crossFits.get(m.session);
      if (held === undefined) throw new Error(`session ${m.session} is not open here`);
      const model = await fitModel(held.setup, held.examples, {
        settings: m.settings,
        seed: m.seed,
        maxIterations: m.maxIterations,
        onIteration: (iteration) => post({ type: 'iteration', id: m.id, iteration }),
      });
      reply = { type: 'model', id: m.id, model };
    } catch (e) {
      reply = failure(m.id, e);
    }
    post(reply);
  };

  return (m) => {
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
    } else if (m.type === 'folds') {
      crossFits.set(m.session, m);
    } else if (m.type === 'forget') {
      crossFits.delete(m.session);
    } else if (m.type === 'fit') {
      void fit(m);
    } else if (m.type === 'start') {
      void start(m);
    } else {
      let reply: ShardReply;
      try {
        if (open === null) throw new Error('no fit is open');
        evaluate(open);
        reply = { type: 'done', id: m.id };
      } catch (e) {
        reply = failure(m.id, e);
      }
      post(reply);
    }
  };
}
