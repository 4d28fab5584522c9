/**
 * Reductions and normalisations: ReduceMean, ReduceSum, ReduceMax, Softmax and
 * LayerNormalization. Sums accumulate in double precision and are stored as float32.
 */
import { input, normAxis, sameType, type OpImpl, type OpNode } from '../op-types.js';
import { Tensor, intsOf } from '../tensor.js';
import { forEachRun, planBroadcast } from './broadcast.js';

type Reduction = 'mean' | 'sum' | 'max';

function reduceAxes(x: Tensor, axes: number[], kind: Reduction, keep: boolean): Tensor {
  const rank = x.dims.length;
  const set = new Set((axes.length ? axes : x.dims.map((_, i) => i)).map((a) => normAxis(a, rank)));
  const keptDims = x.dims.map((d, i) => (set.has(i) ? 1 : d));
  const outDims = keep ? keptDims : x.dims.filter((_, i) => !set.has(i));
  const xd = x.data as Float32Array;
  let count = 1;
  for (const a of set) count *= x.dims[a]!;
  const outSize = keptDims.reduce((a, b) => a * b, 1);
  const out = new Float32Array(outSize);
  // The common case, the last axis alone: one run per output value.
  if (set.size === 1 && set.has(rank - 1)) {
    const n = x.dims[rank - 1]!;
    for (let o = 0; o < outSize; o++) {
      const base = o * n;
      if (kind === 'max') {
        let m = -Infinity;
        for (let j = 0; j < n; j++) if (xd[base + j]! > m) m = xd[base + j]!;
        out[o] = m;
      } else {
        let s = 0;
        for (let j = 0; j < n; j++) s += xd[base + j]!;
        out[o] = kind === 'mean' ? s / n : s;
      }
    }
    return new Tensor('float32', outDims, out);
  }
  const acc = new Float64Array(outSize).fill(kind === 'max' ? -Infinity : 0);
  const plan = planBroadcast([x.dims, keptDims]);
  const xs = plan.strides[0]!.at(-1)!;
  const os = plan.strides[1]!.at(-1)!;
  forEachRun(plan, (_o, [xi, oi], n) => {
    for (let j = 0; j < n; j++) {
      const v = xd[xi! + j * xs]!;
      const k = oi! + j * os;
      acc[k] = kind === 'max' ? Math.max(acc[k]!, v) : acc[k]! + v;
    }
  });
  for (let o = 0; o < outSize; o++) out[o] = kind === 'mean' ? acc[o]! / count : acc[o]!;
  return new Tensor('float32', outDims, out);
}

/** Axes from the attribute (ReduceMean/ReduceMax before opset 18) or the second input. */
function reduction(kind: Reduction): OpImpl {
  return {
    types(inputs, node) {
      if (node.attrs.int('noop_with_empty_axes', 0) !== 0) return 'noop_with_empty_axes = 1';
      if (inputs[1] !== undefined && inputs[1] !== 'int64') return `axes of type ${inputs[1]}`;
      return sameType(['float32'])(inputs, node);
    },
    run(inputs, node: OpNode) {
      const axes = inputs[1] ? intsOf(inputs[1]) : node.attrs.ints('axes', []);
      const keep = node.attrs.int('keepdims', 1) !== 0;
      return [reduceAxes(input(inputs, 0), axes, kind, keep)];
    },
  };
}

const softmax: OpImpl = {
  types: sameType(['float32']),
  run(inputs, node) {
    const x = input(inputs, 0);
    const axis = normAxis(node.attrs.int('axis', -1), x.dims.length);
    const n = x.dims[axis]!;
    const inner = x.dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    const outer = x.size / (n * inner);
    const xd = x.data as Float32Array;
    const out = new Float32Array(xd.length);
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        const base = o * n * inner + i;
        let max = -Infinity;
        for (let j = 0; j < n; j++) max = Math.max(max, xd[base + j * inner]!);
        let sum = 0;
        for (let j = 0; j < n; j++) {
          const d = xd[base + j * inner]! - max;
          const e = d < -104 ? 0 : Math.exp(d);
          out[base + j * inner] = e;
          sum += e;
        }
        const scale = 1 / sum;
        for (let j = 0; j < n; j++) out[base + j * inner] = out[base + j * inner]! * scale;
      }
    }
    return [new Tensor('float32', x.dims, out)];
  },
};

const layerNorm: OpImpl = {
  types(inputs, node) {
    if (node.outputs.slice(1).some((o) => o !== '')) {
      return 'LayerNormalization with its Mean or InvStdDev output';
    }
    return sameType(['float32'], inputs[2] === undefined ? 2 : 3)(inputs, node);
  },
  run(inputs, node) {
    const x = input(inputs, 0);
    const scale = input(inputs, 1).data as Float32Array;
    const bias = inputs[2] ? (inputs[2].data as Float32Array) : null;
    const axis = normAxis(node.attrs.int('axis', -1), x.dims.length);
    const eps = node.attrs.float('epsilon', 1e-5);
    const n = x.dims.slice(axis).reduce((a, b) => a * b, 1);
    if (scale.length !== n || (bias && bias.length !== n)) {
      throw new Error(`LayerNormalization: scale and bias must have ${n} values`);
    }
    const xd = x.data as Float32Array;
    const out = new Float32Array(xd.length);
    for (let base = 0; base < xd.length; base += n) {
      let mean = 0;
      for (let j = 0; j < n; j++) mean += xd[base + j]!;
      mean /= n;
      let variance = 0;
      for (let j = 0; j < n; j++) {
        const d = xd[base + j]! - mean;
        variance += d * d;
      }
      const inv = 1 / Math.sqrt(variance / n + eps);
      for (let j = 0; j < n; j++) {
        const y = (xd[base + j]! - mean) * inv * scale[j]!;
        out[base + j] = bias ? y + bias[j]! : y;
      }
    }
    return [new Tensor('float32', x.dims, out)];
  },
};

export const REDUCE_OPS: Record<string, OpImpl> = {
  ReduceMean: reduction('mean'),
  ReduceSum: reduction('sum'),
  ReduceMax: reduction('max'),
  Softmax: softmax,
  LayerNormalization: layerNorm,
};
