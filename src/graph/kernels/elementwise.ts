/**
 * Elementwise ops in float32 (values stored as float32, each result rounded once): the
 * broadcasting binary ops, the unary maths of the norms, gates, rotary and GELU, Where, Clip,
 * Cast and Identity.
 */
import { input, sameType, type OpImpl } from '../op-types.js';
import {
  Tensor,
  allocate,
  narrowToFloat16,
  toFloat16Bits,
  widenFloat16,
  type DType,
  type TensorData,
} from '../tensor.js';
import { forEachRun, planBroadcast } from './broadcast.js';

type Loop = (
  out: Float32Array,
  o: number,
  a: Float32Array,
  ai: number,
  as: number,
  b: Float32Array,
  bi: number,
  bs: number,
  n: number,
) => void;

/**
 * One loop per op (not a callback per element, so each stays monomorphic for the JIT), in the
 * three forms a run of the innermost axis takes: both inputs run along it (strides 1, 1), or one
 * of them is broadcast along it (stride 0).
 */
const LOOPS: Record<'Add' | 'Sub' | 'Mul' | 'Div', Loop> = {
  Add(out, o, a, ai, as, b, bi, bs, n) {
    if (as === bs) for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! + b[bi + j]!;
    else if (bs === 0) {
      const y = b[bi]!;
      for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! + y;
    } else {
      const x = a[ai]!;
      for (let j = 0; j < n; j++) out[o + j] = x + b[bi + j]!;
    }
  },
  Sub(out, o, a, ai, as, b, bi, bs, n) {
    if (as === bs) for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! - b[bi + j]!;
    else if (bs === 0) {
      const y = b[bi]!;
      for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! - y;
    } else {
      const x = a[ai]!;
      for (let j = 0; j < n; j++) out[o + j] = x - b[bi + j]!;
    }
  },
  Mul(out, o, a, ai, as, b, bi, bs, n) {
    if (as === bs) for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! * b[bi + j]!;
    else if (bs === 0) {
      const y = b[bi]!;
      for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! * y;
    } else {
      const x = a[ai]!;
      for (let j = 0; j < n; j++) out[o + j] = x * b[bi + j]!;
    }
  },
  Div(out, o, a, ai, as, b, bi, bs, n) {
    if (as === bs) for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! / b[bi + j]!;
    else if (bs === 0) {
      const y = b[bi]!;
      for (let j = 0; j < n; j++) out[o + j] = a[ai + j]! / y;
    } else {
      const x = a[ai]!;
      for (let j = 0; j < n; j++) out[o + j] = x / b[bi + j]!;
    }
  },
};

function arithmetic(op: keyof typeof LOOPS): OpImpl {
  const loop = LOOPS[op];
  return {
    types: sameType(['float32'], 2),
    run(inputs) {
      const a = input(inputs, 0);
      const b = input(inputs, 1);
      const plan = planBroadcast([a.dims, b.dims]);
      const out = new Float32Array(plan.size);
      const ad = a.data as Float32Array;
      const bd = b.data as Float32Array;
      // Strides along the innermost merged axis are 1 (runs along it) or 0 (broadcast).
      const as = plan.strides[0]!.at(-1)!;
      const bs = plan.strides[1]!.at(-1)!;
      forEachRun(plan, (o, [ai, bi], n) => loop(out, o, ad, ai!, as, bd, bi!, bs, n));
      return [new Tensor('float32', plan.dims, out)];
    },
  };
}

/** A unary op whose loop is its own function (`loop` fills out from x). */
function unary(loop: (x: Float32Array, out: Float32Array) => void): OpImpl {
  return {
    types: sameType(['float32']),
    run(inputs) {
      const x = input(inputs, 0);
      const out = new Float32Array(x.size);
      loop(x.data as Float32Array, out);
      return [new Tensor('float32', x.dims, out)];
    },
  };
}

/**
 * erf in double precision: its Taylor series below 2.5, the continued fraction of erfc above
 * (both converge to full double precision there), then rounded to float32 by the caller.
 */
export function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let term = ax;
    let sum = ax;
    const x2 = ax * ax;
    for (let n = 1; n < 100; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * 1.1283791670955126 * sum;
  }
  if (ax > 6) return Math.sign(x);
  let f = ax;
  for (let n = 60; n >= 1; n--) f = ax + n / 2 / f;
  return Math.sign(x) * (1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f);
}

const compare: OpImpl = {
  types(inputs, node) {
    const t = sameType(['float32', 'int64'], 2)(inputs, node);
    return typeof t === 'string' ? t : ['bool'];
  },
  run(inputs) {
    const a = input(inputs, 0);
    const b = input(inputs, 1);
    const plan = planBroadcast([a.dims, b.dims]);
    const out = new Uint8Array(plan.size);
    const ad = a.data as Float32Array | BigInt64Array;
    const bd = b.data as Float32Array | BigInt64Array;
    const as = plan.strides[0]!.at(-1)!;
    const bs = plan.strides[1]!.at(-1)!;
    forEachRun(plan, (o, [ai, bi], n) => {
      for (let j = 0; j < n; j++) out[o + j] = ad[ai! + j * as]! <= bd[bi! + j * bs]! ? 1 : 0;
    });
    return [new Tensor('bool', plan.dims, out)];
  },
};

const where: OpImpl = {
  types(inputs, node) {
    if (inputs[0] !== 'bool') return `Where needs a bool condition, not ${inputs[0]}`;
    return sameType(['float32', 'int64', 'float16'], 2)(inputs.slice(1), node);
  },
  run(inputs) {
    const c = input(inputs, 0);
    const x = input(inputs, 1);
    const y = input(inputs, 2);
    const plan = planBroadcast([c.dims, x.dims, y.dims]);
    const out = allocate(x.type, plan.size);
    const cd = c.data as Uint8Array;
    const xd = x.data;
    const yd = y.data;
    const [cs, xs, ys] = plan.strides.map((s) => s.at(-1)!) as [number, number, number];
    if (x.size === 1 && y.size === 1 && out instanceof Float32Array) {
      // Two constants picked by the condition (the causal mask): a typed loop.
      const [a, b] = [(xd as Float32Array)[0]!, (yd as Float32Array)[0]!];
      forEachRun(plan, (o, [ci], n) => {
        for (let j = 0; j < n; j++) out[o + j] = cd[ci! + j * cs] ? a : b;
      });
      return [new Tensor(x.type, plan.dims, out)];
    }
    forEachRun(plan, (o, [ci, xi, yi], n) => {
      for (let j = 0; j < n; j++) {
        out[o + j] = cd[ci! + j * cs] ? xd[xi! + j * xs]! : yd[yi! + j * ys]!;
      }
    });
    return [new Tensor(x.type, plan.dims, out)];
  },
};

const clip: OpImpl = {
  types(inputs, node) {
    for (const t of inputs.slice(1)) {
      if (t !== undefined && t !== 'float32') return `Clip bounds of type ${t}`;
    }
    return sameType(['float32'])(inputs, node);
  },
  run(inputs) {
    const x = input(inputs, 0);
    const lo = inputs[1] ? (inputs[1].data as Float32Array)[0]! : -Infinity;
    const hi = inputs[2] ? (inputs[2].data as Float32Array)[0]! : Infinity;
    const xd = x.data as Float32Array;
    const out = new Float32Array(xd.length);
    for (let i = 0; i < xd.length; i++) {
      const v = xd[i]!;
      out[i] = v < lo ? lo : v > hi ? hi : v;
    }
    return [new Tensor('float32', x.dims, out)];
  },
};

/** ONNX TensorProto.DataType → the interpreter's types (those Cast can produce). */
const CAST_TARGETS: Record<number, DType> = {
  1: 'float32',
  6: 'int32',
  7: 'int64',
  9: 'bool',
  10: 'float16',
};

function castData(x: Tensor, to: DType): TensorData {
  if (x.type === to) return x.data;
  // Through float32 (or exact integers) for every pair the converter writes.
  let wide: Float32Array | null = null;
  if (x.type === 'float32') wide = x.data as Float32Array;
  else if (x.type === 'float16') wide = widenFloat16(x.data as Uint16Array);
  if (to === 'float16') {
    if (wide) return narrowToFloat16(wide);
    return Uint16Array.from(x.data as ArrayLike<number | bigint>, (v) => toFloat16Bits(Number(v)));
  }
  if (to === 'float32') {
    if (wide) return wide === x.data ? Float32Array.from(wide) : wide;
    return Float32Array.from(x.data as ArrayLike<number | bigint>, (v) => Number(v));
  }
  const source: ArrayLike<number | bigint> = wide ?? (x.data as ArrayLike<number | bigint>);
  const out = allocate(to, source.length);
  for (let i = 0; i < source.length; i++) {
    const v = source[i]!;
    if (to === 'bool') out[i] = v ? 1 : 0;
    else if (to === 'int64') {
      (out as BigInt64Array)[i] = typeof v === 'bigint' ? v : BigInt(Math.trunc(v));
    } else out[i] = Math.trunc(Number(v));
  }
  return out;
}

const cast: OpImpl = {
  types(inputs, node) {
    const to = CAST_TARGETS[node.attrs.int('to')];
    if (!to) return `Cast to ONNX type ${node.attrs.int('to')} is not implemented`;
    const from = inputs[0];
    if (from === undefined) return 'Cast needs an input';
    return [to];
  },
  run(inputs, node) {
    const x = input(inputs, 0);
    const to = CAST_TARGETS[node.attrs.int('to')]!;
    return [new Tensor(to, x.dims, castData(x, to))];
  },
};

const identity: OpImpl = {
  types: (inputs) => (inputs[0] ? [inputs[0]] : 'Identity needs an input'),
  run: (inputs) => [input(inputs, 0)],
};

export const ELEMENTWISE_OPS: Record<string, OpImpl> = {
  Add: arithmetic('Add'),
  Sub: arithmetic('Sub'),
  Mul: arithmetic('Mul'),
  Div: arithmetic('Div'),
  Neg: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = -x[i]!;
  }),
  Abs: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.abs(x[i]!);
  }),
  Exp: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.exp(x[i]!);
  }),
  Log: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.log(x[i]!);
  }),
  Relu: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = x[i]! > 0 ? x[i]! : 0;
  }),
  Sigmoid: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = 1 / (1 + Math.exp(-x[i]!));
  }),
  Sqrt: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.sqrt(x[i]!);
  }),
  Reciprocal: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = 1 / x[i]!;
  }),
  Cos: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.cos(x[i]!);
  }),
  Sin: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.sin(x[i]!);
  }),
  Erf: unary((x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = erf(x[i]!);
  }),
  LessOrEqual: compare,
  Where: where,
  Clip: clip,
  Cast: cast,
  Identity: identity,
};
