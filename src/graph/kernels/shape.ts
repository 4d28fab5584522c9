/**
 * Layout ops: Reshape (a view: no copy), Transpose, Slice, Concat, Shape, Gather and Range, for
 * every element type the graphs move (float32, float16, int64, bool).
 */
import { input, normAxis, type InputTypes, type OpImpl } from '../op-types.js';
import { Tensor, allocate, intsOf, sizeOf, stridesOf, type DType } from '../tensor.js';

const ANY: readonly DType[] = ['float32', 'float16', 'int64', 'int32', 'uint8', 'bool'];

function first(inputs: InputTypes, what: string): DType[] | string {
  const t = inputs[0];
  if (t === undefined || !ANY.includes(t)) return `${what} on ${t ?? 'nothing'}`;
  return [t];
}

function needsInt(inputs: InputTypes, at: number[], what: string): string | null {
  for (const i of at) {
    const t = inputs[i];
    if (t !== undefined && t !== 'int64' && t !== 'int32') return `${what}: input ${i} is ${t}`;
  }
  return null;
}

/** ONNX Reshape: 0 copies the input's dim (allowzero = 0), one -1 is inferred. */
export function reshapeDims(from: readonly number[], spec: readonly number[]): number[] {
  const dims = spec.map((d, i) => (d === 0 ? from[i]! : d));
  const known = dims.reduce((a, d) => (d === -1 ? a : a * d), 1);
  const total = sizeOf(from);
  const free = dims.indexOf(-1);
  if (free >= 0) dims[free] = known === 0 ? 0 : total / known;
  if (sizeOf(dims) !== total || dims.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new Error(`cannot reshape [${from.join(', ')}] to [${spec.join(', ')}]`);
  }
  return dims;
}

const reshape: OpImpl = {
  types(inputs, node) {
    if (node.attrs.int('allowzero', 0) !== 0) return 'Reshape with allowzero = 1';
    return needsInt(inputs, [1], 'Reshape') ?? first(inputs, 'Reshape');
  },
  run(inputs) {
    const x = input(inputs, 0);
    return [new Tensor(x.type, reshapeDims(x.dims, intsOf(input(inputs, 1))), x.data)];
  },
};

/** Transposes `x` by `perm` into a new array. */
export function transposeTensor(x: Tensor, perm: readonly number[]): Tensor {
  const rank = x.dims.length;
  const dims = perm.map((p) => x.dims[p]!);
  const out = allocate(x.type, x.size);
  const src = x.data;
  const inStrides = stridesOf(x.dims);
  // Stride in the source of each output axis.
  const s = perm.map((p) => inStrides[p]!);
  if (rank === 0 || x.size === 0) return new Tensor(x.type, dims, src.slice());
  const inner = dims[rank - 1]!;
  const innerStride = s[rank - 1]!;
  const counter = new Array<number>(rank - 1).fill(0);
  let offset = 0;
  for (let o = 0; o < out.length; o += inner) {
    for (let j = 0; j < inner; j++) out[o + j] = src[offset + j * innerStride]!;
    for (let axis = rank - 2; axis >= 0; axis--) {
      counter[axis]!++;
      offset += s[axis]!;
      if (counter[axis]! < dims[axis]!) break;
      offset -= s[axis]! * dims[axis]!;
      counter[axis] = 0;
    }
  }
  return new Tensor(x.type, dims, out);
}

const transpose: OpImpl = {
  types: (inputs) => first(inputs, 'Transpose'),
  run(inputs, node) {
    const x = input(inputs, 0);
    const rank = x.dims.length;
    const perm = node.attrs.ints(
      'perm',
      Array.from({ length: rank }, (_, i) => rank - 1 - i),
    );
    return [transposeTensor(x, perm)];
  },
};

/** ONNX Slice's clamping of a start or end on an axis of `n` (the step's sign decides). */
function clampIndex(i: number, n: number, step: number, isEnd: boolean): number {
  const v = i < 0 ? i + n : i;
  if (step > 0) return Math.min(Math.max(v, 0), n);
  return Math.min(Math.max(v, isEnd ? -1 : 0), n - 1);
}

const slice: OpImpl = {
  types(inputs) {
    return needsInt(inputs, [1, 2, 3, 4], 'Slice') ?? first(inputs, 'Slice');
  },
  run(inputs) {
    const x = input(inputs, 0);
    const rank = x.dims.length;
    const starts = intsOf(input(inputs, 1));
    const ends = intsOf(input(inputs, 2));
    const axes = inputs[3] ? intsOf(inputs[3]) : starts.map((_, i) => i);
    const steps = inputs[4] ? intsOf(inputs[4]) : starts.map(() => 1);
    const begin = new Array<number>(rank).fill(0);
    const step = new Array<number>(rank).fill(1);
    const dims = [...x.dims];
    axes.forEach((a, k) => {
      const axis = normAxis(a, rank);
      const n = x.dims[axis]!;
      const st = steps[k]!;
      if (st === 0) throw new Error('Slice with step 0');
      const b = clampIndex(starts[k]!, n, st, false);
      const e = clampIndex(ends[k]!, n, st, true);
      begin[axis] = b;
      step[axis] = st;
      dims[axis] =
        st > 0 ? Math.max(0, Math.ceil((e - b) / st)) : Math.max(0, Math.ceil((b - e) / -st));
    });
    const size = sizeOf(dims);
    const out = allocate(x.type, size);
    if (size > 0) {
      const strides = stridesOf(x.dims);
      const src = x.data;
      const inner = dims[rank - 1]!;
      const innerStep = strides[rank - 1]! * step[rank - 1]!;
      const counter = new Array<number>(rank).fill(0);
      let base = 0;
      for (let a = 0; a < rank; a++) base += begin[a]! * strides[a]!;
      let offset = base;
      for (let o = 0; o < size; o += inner) {
        if (innerStep === 1) {
          // A contiguous run: copy it whole.
          (out as Float32Array).set((src as Float32Array).subarray(offset, offset + inner), o);
        } else {
          for (let j = 0; j < inner; j++) out[o + j] = src[offset + j * innerStep]!;
        }
        for (let axis = rank - 2; axis >= 0; axis--) {
          counter[axis]!++;
          offset += strides[axis]! * step[axis]!;
          if (counter[axis]! < dims[axis]!) break;
          offset -= strides[axis]! * step[axis]! * dims[axis]!;
          counter[axis] = 0;
        }
      }
    }
    return [new Tensor(x.type, dims, out)];
  },
};

const concat: OpImpl = {
  types(inputs, node) {
    const t = inputs[0];
    if (t === undefined) return 'Concat needs inputs';
    if (inputs.some((u) => u !== t)) return `Concat of ${inputs.join(' and ')}`;
    return first(inputs, node.opType);
  },
  run(inputs, node) {
    const parts = inputs.map((_, i) => input(inputs, i));
    const rank = parts[0]!.dims.length;
    const axis = normAxis(node.attrs.int('axis'), rank);
    const dims = [...parts[0]!.dims];
    dims[axis] = parts.reduce((n, p) => n + p.dims[axis]!, 0);
    for (const p of parts) {
      if (p.dims.length !== rank || p.dims.some((d, i) => i !== axis && d !== dims[i])) {
        throw new Error(`Concat of [${parts.map((q) => q.dims.join(', ')).join('] and [')}]`);
      }
    }
    const out = allocate(parts[0]!.type, sizeOf(dims));
    const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
    const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    const row = dims[axis]! * inner;
    let at = 0;
    for (const p of parts) {
      const chunk = p.dims[axis]! * inner;
      const src = p.data as Float32Array;
      for (let o = 0; o < outer; o++) {
        (out as Float32Array).set(src.subarray(o * chunk, (o + 1) * chunk), o * row + at);
      }
      at += chunk;
    }
    return [new Tensor(parts[0]!.type, dims, out)];
  },
};

const shape: OpImpl = {
  types: (inputs) => (inputs[0] ? ['int64'] : 'Shape needs an input'),
  run(inputs, node) {
    const x = input(inputs, 0);
    const rank = x.dims.length;
    const clamp = (v: number) => Math.min(Math.max(v < 0 ? v + rank : v, 0), rank);
    const start = clamp(node.attrs.int('start', 0));
    const end = clamp(node.attrs.int('end', rank));
    const dims = x.dims.slice(start, Math.max(start, end));
    return [new Tensor('int64', [dims.length], BigInt64Array.from(dims, BigInt))];
  },
};

const gather: OpImpl = {
  types(inputs) {
    return needsInt(inputs, [1], 'Gather') ?? first(inputs, 'Gather');
  },
  run(inputs, node) {
    const x = input(inputs, 0);
    const indices = input(inputs, 1);
    const rank = x.dims.length;
    const axis = normAxis(node.attrs.int('axis', 0), rank);
    const n = x.dims[axis]!;
    const outer = x.dims.slice(0, axis).reduce((a, b) => a * b, 1);
    const inner = x.dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    const ids = intsOf(indices).map((i) => {
      if (i < -n || i >= n) throw new Error(`Gather index ${i} is outside [${-n}, ${n})`);
      return i < 0 ? i + n : i;
    });
    const dims = [...x.dims.slice(0, axis), ...indices.dims, ...x.dims.slice(axis + 1)];
    const out = allocate(x.type, sizeOf(dims));
    const src = x.data as Float32Array;
    let o = 0;
    for (let a = 0; a < outer; a++) {
      for (const id of ids) {
        const from = (a * n + id) * inner;
        (out as Float32Array).set(src.subarray(from, from + inner), o);
        o += inner;
      }
    }
    return [new Tensor(x.type, dims, out)];
  },
};

const range: OpImpl = {
  types(inputs) {
    const t = inputs[0];
    if (t !== 'float32' && t !== 'int64') return `Range on ${t}`;
    if (inputs[1] !== t || inputs[2] !== t) return 'Range with inputs of different types';
    return [t];
  },
  run(inputs) {
    const [start, limit, delta] = [0, 1, 2].map((i) => Number(input(inputs, i).data[0]!));
    const n = Math.max(Math.ceil((limit! - start!) / delta!), 0);
    const t = input(inputs, 0).type;
    if (t === 'int64') {
      const out = new BigInt64Array(n);
      for (let i = 0; i < n; i++) out[i] = BigInt(start! + i * delta!);
      return [new Tensor('int64', [n], out)];
    }
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = start! + i * delta!;
    return [new Tensor('float32', [n], out)];
  },
};

export const SHAPE_OPS: Record<string, OpImpl> = {
  Reshape: reshape,
  Transpose: transpose,
  Slice: slice,
  Concat: concat,
  Shape: shape,
  Gather: gather,
  Range: range,
};
