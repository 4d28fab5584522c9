/**
 * The interpreter's tensor: a typed array in CPU memory with its dims and ONNX element type. It
 * has the shape of onnxruntime's Tensor that ClefRunner uses (TensorLike), so the runner drives
 * graph sessions as it drives onnxruntime's.
 */
import type { RuntimeAdapter, TensorLike } from '../core/runtime-types.js';

export type DType = 'float32' | 'float16' | 'int64' | 'int32' | 'uint8' | 'int8' | 'bool';

export type TensorData =
  Float32Array | Uint16Array | BigInt64Array | Int32Array | Uint8Array | Int8Array;

export class Tensor implements TensorLike {
  readonly location = 'cpu';
  constructor(
    readonly type: DType,
    readonly dims: readonly number[],
    readonly data: TensorData,
  ) {
    const n = sizeOf(dims);
    if (data.length !== n) {
      throw new Error(
        `a ${type} tensor of dims [${dims.join(', ')}] needs ${n} values, not ${data.length}`,
      );
    }
  }

  get size(): number {
    return this.data.length;
  }

  getData(): Promise<TensorData> {
    return Promise.resolve(this.data);
  }

  /** Nothing to free: the garbage collector owns the array. */
  dispose(): void {}
}

export function sizeOf(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** Row-major strides of dims. */
export function stridesOf(dims: readonly number[]): number[] {
  const s = new Array<number>(dims.length);
  let acc = 1;
  for (let i = dims.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= dims[i]!;
  }
  return s;
}

/** A new zeroed array of `type` with `n` values. */
export function allocate(type: DType, n: number): TensorData {
  switch (type) {
    case 'float32':
      return new Float32Array(n);
    case 'float16':
      return new Uint16Array(n);
    case 'int64':
      return new BigInt64Array(n);
    case 'int32':
      return new Int32Array(n);
    case 'int8':
      return new Int8Array(n);
    case 'uint8':
    case 'bool':
      return new Uint8Array(n);
  }
}

/** The same values under new dims (no copy). */
export function reshaped(t: Tensor, dims: readonly number[]): Tensor {
  return new Tensor(t.type, dims, t.data);
}

/** Integer values of an int64 or int32 tensor, as numbers (shapes, indices, axes). */
export function intsOf(t: Tensor): number[] {
  if (t.data instanceof BigInt64Array) return Array.from(t.data, Number);
  if (t.data instanceof Int32Array) return Array.from(t.data);
  throw new Error(`expected an integer tensor, got ${t.type}`);
}

export function float32Of(t: Tensor, what: string): Float32Array {
  if (!(t.data instanceof Float32Array))
    throw new Error(`${what}: expected float32, got ${t.type}`);
  return t.data;
}

/** The runner's tensor factory for graph sessions. */
export const GRAPH_RUNTIME: RuntimeAdapter = {
  float32: (data, dims) => new Tensor('float32', dims, data),
  float16: (data, dims) => new Tensor('float16', dims, data),
  int64: (data, dims) => new Tensor('int64', dims, data),
};

// --- float16 ------------------------------------------------------------------------------

const F16_TO_F32 = (() => {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    let v: number;
    if (exp === 0) v = frac * 2 ** -24;
    else if (exp === 31) v = frac ? NaN : Infinity;
    else v = (1 + frac / 1024) * 2 ** (exp - 15);
    table[h] = sign * v;
  }
  return table;
})();

/** IEEE binary16 bits → float32 values. */
export function widenFloat16(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = F16_TO_F32[bits[i]!]!;
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → IEEE binary16 bits, round to nearest even (as onnxruntime's Cast). */
export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let h = mant >>> shift;
    if (rest > half || (rest === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++;
  e = h >>> 10;
  return sign | (e >= 31 ? 0x7c00 : h);
}

export function narrowToFloat16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toFloat16Bits(values[i]!);
  return out;
}
