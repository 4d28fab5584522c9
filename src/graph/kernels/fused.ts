/**
 * The kernels of the chains fuse.ts rewrites: the same arithmetic as the ops they replace, in
 * one pass (sums in double precision, each value rounded to float32 once).
 */
import { input, sameType, type OpImpl } from '../op-types.js';
import { Tensor } from '../tensor.js';
import { Attributes, type OpNode } from '../op-types.js';
import { ELEMENTWISE_OPS } from './elementwise.js';
import { attention } from './attention.js';

const ADD_NODE: OpNode = {
  opType: 'Add',
  domain: '',
  name: 'Add',
  inputs: [],
  outputs: [],
  attrs: new Attributes(new Map(), 'Add'),
};

/** x / √(mean(x²) + ε) or x / √(Σx² + ε) over the last axis, times w when given. */
const normalize: OpImpl = {
  types: sameType(['float32']),
  run(inputs, node) {
    const x = input(inputs, 0);
    const w = inputs[1]?.data as Float32Array | undefined;
    const mean = node.attrs.int('mean') === 1;
    const eps = node.attrs.float('epsilon');
    const n = x.dims.at(-1)!;
    if (w && w.length !== n && w.length !== 1) {
      throw new Error(`a norm weight of ${w.length} values for rows of ${n}`);
    }
    const xd = x.data as Float32Array;
    const out = new Float32Array(xd.length);
    for (let base = 0; base < xd.length; base += n) {
      let ss = 0;
      for (let j = 0; j < n; j++) ss += xd[base + j]! * xd[base + j]!;
      const inv = 1 / Math.sqrt((mean ? ss / n : ss) + eps);
      if (!w) for (let j = 0; j < n; j++) out[base + j] = xd[base + j]! * inv;
      else if (w.length === 1) {
        const scale = inv * w[0]!;
        for (let j = 0; j < n; j++) out[base + j] = xd[base + j]! * scale;
      } else {
        for (let j = 0; j < n; j++) out[base + j] = xd[base + j]! * inv * w[j]!;
      }
    }
    return [new Tensor('float32', x.dims, out)];
  },
};

const silu: OpImpl = {
  types: sameType(['float32']),
  run(inputs) {
    const x = input(inputs, 0);
    const xd = x.data as Float32Array;
    const out = new Float32Array(xd.length);
    for (let i = 0; i < xd.length; i++) {
      const v = xd[i]!;
      out[i] = v * Math.fround(1 / (1 + Math.exp(-v)));
    }
    return [new Tensor('float32', x.dims, out)];
  },
};

/**
 * softmax(x + mask) along the last axis, with the mask broadcast over x's leading axes (its dims
 * are x's trailing ones); any other pair of shapes is added first, then softmaxed.
 */
const addSoftmax: OpImpl = {
  types: sameType(['float32'], 2),
  run(inputs) {
    const x = input(inputs, 0);
    let mask = input(inputs, 1);
    const n = x.dims.at(-1)!;
    const trailing = x.dims.slice(x.dims.length - mask.dims.length);
    const aligned =
      mask.dims.length <= x.dims.length && mask.dims.every((d, i) => d === trailing[i]);
    const xd = x.data as Float32Array;
    if (!aligned) {
      mask = ELEMENTWISE_OPS.Add!.run([x, mask], ADD_NODE, undefined)[0]!;
      return softmaxRows(
        new Float32Array(mask.size),
        mask.dims,
        null,
        0,
        n,
        mask.data as Float32Array,
      );
    }
    return softmaxRows(
      new Float32Array(xd.length),
      x.dims,
      mask.data as Float32Array,
      mask.size,
      n,
      xd,
    );
  },
};

function softmaxRows(
  out: Float32Array,
  dims: readonly number[],
  mask: Float32Array | null,
  maskSize: number,
  n: number,
  xd: Float32Array,
): Tensor[] {
  for (let base = 0; base < xd.length; base += n) {
    const m = mask ? base % maskSize : 0;
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      const v = mask ? xd[base + j]! + mask[m + j]! : xd[base + j]!;
      out[base + j] = v;
      if (v > max) max = v;
    }
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const d = out[base + j]! - max;
      const e = d < -104 ? 0 : Math.exp(d);
      out[base + j] = e;
      sum += e;
    }
    const scale = 1 / sum;
    for (let j = 0; j < n; j++) out[base + j] = out[base + j]! * scale;
  }
  return [new Tensor('float32', dims, out)];
}

export const FUSED_OPS: Record<string, OpImpl> = {
  Normalize: normalize,
  Silu: silu,
  AddSoftmax: addSoftmax,
  Attention: attention,
};
