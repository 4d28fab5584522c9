/**
 * The fit's objective as a sum over shards of the examples, so that it can run on several threads
 * and still give the same bits on one.
 *
 * The examples are cut into a number of contiguous shards that depends on their count only
 * (shardRanges), never on the threads at hand. Each shard's loss and gradient is accumulated on
 * its own, from zero, in example order; the shards' sums are then added in shard order. Which
 * thread computed a shard changes nothing, so the page (one thread) and `clef-web train` on any
 * number of threads fit the same weights to the bit.
 *
 * Where the shards run is the host's business: runtime-free code here runs them one after the
 * other (localShards); Node and the page hand in a pool of threads (thread-pool.ts: worker
 * threads, Web Workers) that gets each fit's examples once and the parameters per evaluation, in
 * shared buffers laid out as below.
 */
import { accumulate, addGradients, clearGradients, zeroGradients } from './gradients.js';
import { zeroPairParams } from './pairs.js';
import type { Gradients } from './gradients.js';
import type { ModelExample, ModelParams } from './model.js';

/**
 * Examples per shard at least. A plain fit of fewer than twice as many has one shard and sums
 * exactly as an unsharded fit would; threads would not pay there (the bag's pass on 1,600
 * examples took 1.1× its one-thread time on 2 threads, idle 2 cores: docs/benchmarks.md, "The
 * layers' fits on the threads").
 */
export const SHARD_EXAMPLES = 1000;
/**
 * Examples per shard at least in a fit with the pointer or the order layer, which takes 17 to 96
 * times a plain fit's time: threads pay there from a few hundred examples (the order layer's pass
 * on 2 threads, idle 2 cores: 1.3× as fast at 250 examples, 1.45× at 500, 1.6× at 1,000 and
 * 1,600).
 */
export const LAYER_SHARD_EXAMPLES = 250;
/** Shards at most: enough for 4 threads to share out evenly when one of them runs slower. */
export const MAX_SHARDS = 8;

/**
 * How many shards `count` examples make: a function of the count and of whether the fit has the
 * pointer or the order layer (`layered`), never of the threads.
 */
export function shardCount(count: number, layered = false): number {
  const per = layered ? LAYER_SHARD_EXAMPLES : SHARD_EXAMPLES;
  return Math.max(1, Math.min(MAX_SHARDS, Math.floor(count / per)));
}

/**
 * The shards of `count` examples: contiguous [start, end) ranges, sizes differing by one at most;
 * `shards` overrides their number (tests and benchmarks on small files).
 */
export function shardRanges(
  count: number,
  shards = shardCount(count),
): Array<readonly [number, number]> {
  return Array.from({ length: shards }, (_, s) => {
    const start = Math.floor((s * count) / shards);
    return [start, Math.floor(((s + 1) * count) / shards)] as const;
  });
}

/** A fit's objective over its shards: the loss summed, the gradient into `total` (cleared first). */
export interface ShardSession {
  evaluate(params: ModelParams, total: Gradients): Promise<number>;
  /** Lets go of the fit's examples (the pool itself stays). */
  close(): void;
}

/**
 * ModelParams' fields a fit sends its threads once; the others are the parameters, which travel
 * per evaluation in the parameter buffer (paramArrays and the two scalars). The pass reads every
 * field, so a field that reached no thread would have the threads fit another function than
 * this thread: the check below does not compile until a new field is listed as one or the other.
 */
const FIT_FIELDS = ['shape', 'rowOf', 'baseNorm', 'pointerMarks', 'scope'] as const;
type FitField = (typeof FIT_FIELDS)[number];
type BufferField = 'theta' | 'rho' | 'rows' | 'scaleLogit' | 'logBias' | 'pairs' | 'emb';
const everyFieldReachesThreads: [Exclude<keyof ModelParams, FitField | BufferField>] extends [never]
  ? true
  : never = true;
void everyFieldReachesThreads;

/** What a pool's threads need of a fit, sent once (structured-cloneable). */
export interface ShardFit extends Pick<ModelParams, FitField> {
  /** The order layer's out_proj width (pairs.ts), when the model has one. */
  pairOutDims?: number;
  examples: readonly ModelExample[];
  ranges: ReadonlyArray<readonly [number, number]>;
  /** Each labelled question's weight in the loss (1 / the questions of the whole fit). */
  weight: number;
}

/** The fields of `params` a fit sends its threads (FIT_FIELDS, those it has). */
export function fitFields(params: Pick<ModelParams, FitField>): Pick<ModelParams, FitField> {
  const out: Partial<Record<FitField, unknown>> = {};
  for (const f of FIT_FIELDS) if (params[f] !== undefined) out[f] = params[f];
  return out as Pick<ModelParams, FitField>;
}

/** Runs fits' shards elsewhere (Node: worker threads); the host that makes one closes it. */
export interface ShardPool {
  readonly threads: number;
  open(fit: ShardFit): ShardSession;
}

/** The parameters' arrays in a fixed order (the same as gradientArrays'). */
export function paramArrays(params: ModelParams): Float64Array[] {
  const out = [params.theta, params.rho, params.rows];
  if (params.emb !== undefined) out.push(params.emb);
  const p = params.pairs;
  if (p !== undefined) out.push(p.u, p.z, p.zBias, p.b, p.bBias, p.wo);
  return out;
}

/** Parameters of a fit's shape with their arrays zeroed (the lengths a layout needs). */
function zeroParams(fit: Omit<ShardFit, 'examples' | 'ranges' | 'weight'>): ModelParams {
  const width = fit.shape.heads * fit.shape.headDim;
  const pairs = fit.shape.pairs;
  const params: ModelParams = {
    ...fitFields(fit),
    theta: new Float64Array(fit.shape.vocab * width),
    rho: new Float64Array(fit.shape.vocab * fit.shape.heads),
    rows: new Float64Array(fit.rowOf.size * (1 + width)),
    scaleLogit: 0,
    logBias: 0,
  };
  if (pairs === undefined) return params;
  return {
    ...params,
    emb: new Float64Array(fit.shape.vocab * pairs.m),
    pairs: zeroPairParams(pairs, fit.pairOutDims ?? 0),
  };
}

/**
 * Where a fit's values sit in the flat buffers a pool shares with its threads: the parameters'
 * arrays then [scaleLogit, logBias]; per shard, the gradient's arrays then [scaleLogit, logBias,
 * loss, questions].
 */
export interface ShardLayout {
  lengths: number[];
  params: number;
  gradient: number;
}

export function shardLayout(fit: Omit<ShardFit, 'examples' | 'ranges' | 'weight'>): ShardLayout {
  const lengths = paramArrays(zeroParams(fit)).map((a) => a.length);
  const arrays = lengths.reduce((n, l) => n + l, 0);
  return { lengths, params: arrays + 2, gradient: arrays + 4 };
}

/** Views of `buffer`'s arrays, in the layout's order, from `at`. */
function views(buffer: Float64Array, at: number, lengths: readonly number[]): Float64Array[] {
  return lengths.map((l) => {
    const view = buffer.subarray(at, at + l);
    at += l;
    return view;
  });
}

/**
 * Puts `arrays` (paramArrays' order) in place of `target`'s arrays: parameters and gradients
 * name their arrays alike.
 */
function attachArrays(target: ModelParams | Gradients, arrays: readonly Float64Array[]): void {
  const [theta, rho, rows, emb, u, z, zBias, b, bBias, wo] = arrays;
  Object.assign(target, { theta, rho, rows });
  if (target.pairs !== undefined) {
    Object.assign(target, { emb });
    Object.assign(target.pairs, { u, z, zBias, b, bBias, wo });
  }
}

/** Writes the parameters into a pool's parameter buffer. */
export function writeParams(params: ModelParams, layout: ShardLayout, buffer: Float64Array): void {
  let at = 0;
  for (const a of paramArrays(params)) {
    buffer.set(a, at);
    at += a.length;
  }
  buffer[layout.params - 2] = params.scaleLogit;
  buffer[layout.params - 1] = params.logBias;
}

/**
 * Parameters whose arrays are views of a pool's parameter buffer; `refresh` reads the scalars
 * again after the buffer was written.
 */
export function paramsOver(
  fit: Omit<ShardFit, 'examples' | 'ranges' | 'weight'>,
  layout: ShardLayout,
  buffer: Float64Array,
): { params: ModelParams; refresh: () => void } {
  const params = zeroParams(fit);
  attachArrays(params, views(buffer, 0, layout.lengths));
  const refresh = () => {
    params.scaleLogit = buffer[layout.params - 2] as number;
    params.logBias = buffer[layout.params - 1] as number;
  };
  refresh();
  return { params, refresh };
}

/** Gradients whose arrays are views of shard `shard`'s part of a pool's gradient buffer. */
export function gradientsOver(
  fit: Omit<ShardFit, 'examples' | 'ranges' | 'weight'>,
  layout: ShardLayout,
  buffer: Float64Array,
  shard: number,
): Gradients {
  const base = shard * layout.gradient;
  const grads = zeroGradients(zeroParams(fit));
  attachArrays(grads, views(buffer, base, layout.lengths));
  return grads;
}

/**
 * One shard's loss and gradient, from zero, into `grads` (a thread's view of its slot); the
 * scalars and the loss go to the slot's tail.
 */
export function evaluateShard(
  params: ModelParams,
  examples: readonly ModelExample[],
  weight: number,
  grads: Gradients,
  layout: ShardLayout,
  buffer: Float64Array,
  shard: number,
): void {
  clearGradients(grads);
  const { loss, questions } = accumulate(params, examples, grads, weight, false);
  const tail = (shard + 1) * layout.gradient;
  buffer[tail - 4] = grads.scaleLogit;
  buffer[tail - 3] = grads.logBias;
  buffer[tail - 2] = loss;
  buffer[tail - 1] = questions;
}

/**
 * The shards' sums, added in shard order into `total` (cleared first); returns the summed loss.
 * A pool calls it once every shard's slot is written.
 */
export function sumShards(
  fit: Omit<ShardFit, 'examples' | 'ranges' | 'weight'>,
  layout: ShardLayout,
  buffer: Float64Array,
  shards: number,
  total: Gradients,
): number {
  clearGradients(total);
  let loss = 0;
  for (let s = 0; s < shards; s++) {
    const part = gradientsOver(fit, layout, buffer, s);
    const tail = (s + 1) * layout.gradient;
    part.scaleLogit = buffer[tail - 4] as number;
    part.logBias = buffer[tail - 3] as number;
    addGradients(total, part);
    loss += buffer[tail - 2] as number;
  }
  return loss;
}

/**
 * The shards one after the other, in this thread. One shard is accumulated straight into the
 * total (as an unsharded fit); more are each accumulated from zero and added in order, the same
 * arithmetic as a pool's.
 */
export function localShards(fit: ShardFit): ShardSession {
  const slices = fit.ranges.map(([a, b]) => fit.examples.slice(a, b));
  let scratch: Gradients | null = null;
  return {
    evaluate(params, total) {
      clearGradients(total);
      if (slices.length === 1) {
        const only = slices[0] as ModelExample[];
        return Promise.resolve(accumulate(params, only, total, fit.weight, false).loss);
      }
      scratch ??= zeroGradients(params);
      let loss = 0;
      for (const slice of slices) {
        clearGradients(scratch);
        loss += accumulate(params, slice, scratch, fit.weight, false).loss;
        addGradients(total, scratch);
      }
      return Promise.resolve(loss);
    },
    close() {
      scratch = null;
    },
  };
}
