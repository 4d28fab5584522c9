/**
 * Building blocks of the backbone graph, each a few plain ONNX ops (opset 17) chosen because
 * onnxruntime-web 1.30 has kernels for them on both WASM (CPU) and WebGPU: see
 * docs/onnx-ops.md. Every helper takes and returns value names in a GraphBuilder.
 */
import { attr, type GraphBuilder } from '../onnx/graph.js';
import { DataType } from '../onnx/proto.js';
import { quantizeBlocks, toFloat16Array, transpose2d } from './quantize.js';

/** How a linear layer's weight is stored and multiplied. */
export type LinearEncoding = 'fp32' | 'fp16' | 'q8' | 'q4';

/** MatMulNBits block size (values per scale along the input dimension). */
export const QUANT_BLOCK_SIZE = 32;

export class BackboneOps {
  private readonly consts = new Map<string, string>();

  constructor(
    readonly g: GraphBuilder,
    /** MatMulNBits accuracy_level: 0 = unset (float activations), 4 = int8 activations. */
    private readonly accuracyLevel = 0,
  ) {}

  /** A shared scalar/vector constant (created once per graph). */
  f32(values: number[], dims: number[] = values.length === 1 ? [] : [values.length]): string {
    return this.cached(`f:${dims.join('x')}:${values.join(',')}`, () =>
      this.g.constFloat(values, dims, 'c'),
    );
  }

  i64(values: number[], dims: number[] = [values.length]): string {
    return this.cached(`i:${dims.join('x')}:${values.join(',')}`, () =>
      this.g.constInt64(values, dims, 'shape'),
    );
  }

  reshape(x: string, shape: number[]): string {
    return this.g.op('Reshape', [x, this.i64(shape)]);
  }

  transpose(x: string, perm: number[]): string {
    return this.g.op('Transpose', [x], { perm: attr.ints(perm) });
  }

  /** x[..., start:end] along `axis` (end may be negative or huge, as in ONNX Slice). */
  slice(x: string, start: number, end: number, axis: number): string {
    return this.g.op('Slice', [x, this.i64([start]), this.i64([end]), this.i64([axis])]);
  }

  mul(a: string, b: string): string {
    return this.g.op('Mul', [a, b]);
  }

  add(a: string, b: string): string {
    return this.g.op('Add', [a, b]);
  }

  silu(x: string): string {
    return this.mul(x, this.g.op('Sigmoid', [x]));
  }

  /** log(1 + e^x) computed as max(x, 0) + log(1 + e^−|x|): no overflow for large x. */
  softplus(x: string): string {
    const negAbs = this.g.op('Neg', [this.g.op('Abs', [x])]);
    const tail = this.g.op('Log', [this.add(this.g.op('Exp', [negAbs]), this.f32([1]))]);
    return this.add(this.g.op('Relu', [x]), tail);
  }

  /** RMS norm over the last axis: x / sqrt(mean(x²) + eps) · weight (weight already final). */
  rmsNorm(x: string, weight: Float32Array, eps: number, hint: string): string {
    const w = this.g.initializer(hint, DataType.FLOAT, [weight.length], weight);
    return this.mul(this.normalize(x, eps, 'mean'), w);
  }

  /** x / sqrt(mean(x²) + eps) ('mean') or x / sqrt(sum(x²) + eps) ('sum'), last axis. */
  normalize(x: string, eps: number, reduce: 'mean' | 'sum'): string {
    const sq = this.mul(x, x);
    const op = reduce === 'mean' ? 'ReduceMean' : 'ReduceSum';
    // ReduceSum takes axes as an input from opset 13, ReduceMean only from 18.
    const red =
      reduce === 'mean'
        ? this.g.op(op, [sq], { axes: attr.ints([-1]), keepdims: attr.int(1) })
        : this.g.op(op, [sq, this.i64([-1])], { keepdims: attr.int(1) });
    const inv = this.g.op('Reciprocal', [this.g.op('Sqrt', [this.add(red, this.f32([eps]))])]);
    return this.mul(x, inv);
  }

  /**
   * y = x · Wᵀ for W = [outF, inF] (float32, row-major, as stored in safetensors).
   * fp32: MatMul with a float32 [inF, outF] initializer, over only the input columns that hold
   * a nonzero weight, and as a product by a vector where W is diagonal there (sparseLinear).
   * fp16: float16 initializer, x cast to float16, MatMul in float16, result cast back. q8/q4:
   * com.microsoft.MatMulNBits.
   */
  linear(x: string, w: Float32Array, outF: number, inF: number, enc: LinearEncoding, hint: string) {
    const g = this.g;
    if (enc === 'fp32') return this.sparseLinear(x, w, outF, inF, hint);
    if (enc === 'fp16') {
      const wt = toFloat16Array(transpose2d(w, outF, inF));
      const init = g.initializer(hint, DataType.FLOAT16, [inF, outF], wt);
      const xh = g.op('Cast', [x], { to: attr.int(DataType.FLOAT16) });
      return g.op('Cast', [g.op('MatMul', [xh, init])], { to: attr.int(DataType.FLOAT) });
    }
    const bits = enc === 'q8' ? 8 : 4;
    const qz = quantizeBlocks(w, outF, inF, bits, QUANT_BLOCK_SIZE);
    const blob = (QUANT_BLOCK_SIZE * bits) / 8;
    const b = g.initializer(`${hint}.q${bits}`, DataType.UINT8, [outF, qz.kBlocks, blob], qz.data);
    const s = g.initializer(`${hint}.scales`, DataType.FLOAT, [outF, qz.kBlocks], qz.scales);
    const zpCols = qz.zeroPoints.length / outF;
    const z = g.initializer(`${hint}.zero_points`, DataType.UINT8, [outF, zpCols], qz.zeroPoints);
    const attrs = {
      K: attr.int(inF),
      N: attr.int(outF),
      bits: attr.int(bits),
      block_size: attr.int(QUANT_BLOCK_SIZE),
      ...(this.accuracyLevel > 0 ? { accuracy_level: attr.int(this.accuracyLevel) } : {}),
    };
    return g.op('MatMulNBits', [x, b, s, z], attrs, 'com.microsoft');
  }

  /**
   * h + x · Wᵀ, where only W's output rows [r0, r1) hold a nonzero weight (fp32): the other
   * dims of h pass through untouched (adding W's zeros would not change them), and a W of
   * zeros adds nothing. Dense weights (every real model's) take the plain Add.
   */
  addLinear(
    h: string,
    x: string,
    w: Float32Array,
    outF: number,
    inF: number,
    enc: LinearEncoding,
    hint: string,
  ): string {
    const [r0, r1] = enc === 'fp32' ? nonzeroSpan(w, outF, inF, 'rows') : [0, outF];
    if (r1 - r0 === outF) return this.add(h, this.linear(x, w, outF, inF, enc, hint));
    if (r1 <= r0) return h;
    const y = this.linear(x, w.subarray(r0 * inF, r1 * inF), r1 - r0, inF, enc, hint);
    const parts = [this.add(this.slice(h, r0, r1, -1), y)];
    if (r0 > 0) parts.unshift(this.slice(h, 0, r0, -1));
    if (r1 < outF) parts.push(this.slice(h, r1, outF, -1));
    return this.g.op('Concat', parts, { axis: attr.int(-1) });
  }

  /**
   * A float32 linear layer reading only the input columns [c0, c1) where W has a nonzero
   * weight: the columns left out would add exact zeros. Where W is diagonal on them (one
   * weight per output, on its own column), the product is x's columns times that diagonal, or
   * the columns themselves where it is all ones. A model written by `clef-web train` has such
   * weights (its pooling layer's queries read one dim, its values copy the content); real
   * weights are dense and keep their one MatMul.
   */
  private sparseLinear(x: string, w: Float32Array, outF: number, inF: number, hint: string) {
    const g = this.g;
    let [c0, c1] = nonzeroSpan(w, outF, inF, 'cols');
    if (c1 <= c0) [c0, c1] = [0, inF]; // a W of zeros keeps its one (zero) product
    const width = c1 - c0;
    const sub = width === inF ? w : columns(w, outF, inF, c0, c1);
    const xs = width === inF ? x : this.slice(x, c0, c1, -1);
    const diagonal = outF === width ? diagonalOf(sub, width) : null;
    if (diagonal !== null) {
      if (diagonal.every((v) => v === 1)) return xs;
      return this.mul(xs, g.initializer(hint, DataType.FLOAT, [width], diagonal));
    }
    const wt = g.initializer(hint, DataType.FLOAT, [width, outF], transpose2d(sub, outF, width));
    return g.op('MatMul', [xs, wt]);
  }

  private cached(key: string, make: () => string): string {
    let name = this.consts.get(key);
    if (name === undefined) {
      name = make();
      this.consts.set(key, name);
    }
    return name;
  }
}

/**
 * The contiguous range of W's output rows ('rows') or input columns ('cols') outside which every
 * weight is zero; [0, 0) for a W of zeros. A dense W is found at once: its first and last row
 * (column) are nonzero.
 */
export function nonzeroSpan(
  w: Float32Array,
  outF: number,
  inF: number,
  along: 'rows' | 'cols',
): [number, number] {
  const [n, m] = along === 'rows' ? [outF, inF] : [inF, outF];
  const at =
    along === 'rows'
      ? (r: number, j: number) => r * inF + j
      : (c: number, i: number) => i * inF + c;
  const nonzero = (k: number): boolean => {
    for (let j = 0; j < m; j++) if (w[at(k, j)] !== 0) return true;
    return false;
  };
  let lo = 0;
  while (lo < n && !nonzero(lo)) lo++;
  if (lo === n) return [0, 0];
  let hi = n;
  while (!nonzero(hi - 1)) hi--;
  return [lo, hi];
}

/** Columns [c0, c1) of W [outF, inF], row-major. */
function columns(w: Float32Array, outF: number, inF: number, c0: number, c1: number): Float32Array {
  const out = new Float32Array(outF * (c1 - c0));
  for (let i = 0; i < outF; i++) out.set(w.subarray(i * inF + c0, i * inF + c1), i * (c1 - c0));
  return out;
}

/** W [n, n]'s diagonal where every other weight is zero, else null. */
function diagonalOf(w: Float32Array, n: number): Float32Array | null {
  const diagonal = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = w[i * n + j] as number;
      if (i === j) diagonal[i] = v;
      else if (v !== 0) return null;
    }
  }
  return diagonal;
}
