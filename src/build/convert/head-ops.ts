/**
 * Node emitters for the joint head graphs (src/build/convert/head.ts): the PyTorch modules the
 * reference head uses (LayerNorm, Linear, exact GELU, nn.MultiheadAttention) written with plain
 * ONNX opset-17 ops that have kernels on onnxruntime-web's WASM and WebGPU back ends (MatMul,
 * Gemm, Add, Sub, Mul, Div, LayerNormalization, Softmax, Erf, Exp, Sqrt, Abs, Clip, ReduceSum,
 * ReduceMax, Gather, Concat, Slice, Reshape, Transpose, Cast). Avoided on purpose: Max/Min/And
 * and ConstantOfShape (no WebGPU kernel), int64 arithmetic on device, Range over runtime shapes.
 *
 * All activations are 2-D [rows, features]; torch Linear weights [out, in] are stored
 * transposed ([in, out]) so every projection is one MatMul.
 */
import { attr, type GraphBuilder, type WrittenModel } from '../onnx/graph.js';
import { DataType } from '../onnx/proto.js';
import type { JointHeadConfig } from '../release.js';

/** Reads head tensors by state_dict name, as float32 in their stored layout. */
export interface HeadTensorSource {
  read(name: string): Float32Array;
  shape(name: string): number[];
}

const LAYER_NORM_EPS = 1e-5; // torch.nn.LayerNorm default, used by every norm in the head
/** Stands in for -inf when masking other questions' options (finite, so 0 × it stays 0). */
const MASK_NEGATIVE = 1e30;

/** [rows, cols] row-major → [cols, rows]. */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c] as number;
  }
  return out;
}

export class HeadOps {
  private readonly consts = new Map<string, string>();
  private readonly heads: number;
  private readonly headDim: number;
  private readonly width: number;

  constructor(
    readonly g: GraphBuilder,
    private readonly weights: HeadTensorSource,
    config: JointHeadConfig,
    /** float → fp16 bits when matrices are stored fp16, else null (fp32). */
    private readonly toHalf: ((x: number) => number) | null,
  ) {
    this.width = config.width;
    this.heads = config.heads;
    this.headDim = config.width / config.heads;
  }

  finish(docString: string): WrittenModel {
    return this.g.finish({ docString, opsets: [{ domain: '', version: 17 }] });
  }

  // --- constants and weights ---------------------------------------------------------------

  private memo(key: string, make: () => string): string {
    let name = this.consts.get(key);
    if (name === undefined) {
      name = make();
      this.consts.set(key, name);
    }
    return name;
  }

  i64(values: number[]): string {
    return this.memo(`i64:${values.join(',')}`, () =>
      this.g.constInt64(values, [values.length], 'shape'),
    );
  }

  /** A float32 scalar constant (rank 0, broadcasts anywhere). */
  scalar(value: number): string {
    const v = Math.fround(value);
    return this.memo(`f:${v}`, () => this.g.constFloat([v], [], 'scalar'));
  }

  /** A scalar parameter of the head (prior_logit_scale, ...), as a number. */
  parameter(name: string): number {
    const values = this.weights.read(name);
    if (values.length !== 1) throw new Error(`${name}: expected a scalar`);
    return values[0] as number;
  }

  /** exp(min(p, ln 100)): the reference's clamped logit scales, folded at conversion. */
  clampedExp(name: string): number {
    return Math.exp(Math.min(this.parameter(name), Math.log(100)));
  }

  /**
   * A weight initializer. Matrices (rank ≥ 2) become fp16 + a Cast to float when storing fp16:
   * onnxruntime folds the Cast once at session creation, so compute stays fp32.
   */
  tensor(hint: string, dims: number[], data: Float32Array, half = dims.length >= 2): string {
    return this.memo(`w:${hint}`, () => {
      if (this.toHalf === null || !half) {
        return this.g.initializer(hint, DataType.FLOAT, dims, data);
      }
      const bits = Uint16Array.from(data, this.toHalf);
      const stored = this.g.initializer(`${hint}.fp16`, DataType.FLOAT16, dims, bits);
      return this.g.op('Cast', [stored], { to: attr.int(DataType.FLOAT) });
    });
  }

  /** A head tensor by state_dict name, in its stored layout. */
  weight(name: string): string {
    return this.tensor(name, this.weights.shape(name), this.weights.read(name));
  }

  /** torch Linear weight [out, in] transposed to [in, out] for MatMul. */
  private linearWeight(name: string): string {
    const [out, inp] = this.weights.shape(name) as [number, number];
    return this.tensor(`${name}.T`, [inp, out], transpose2d(this.weights.read(name), out, inp));
  }

  // --- elementwise and shape ---------------------------------------------------------------

  add(a: string, b: string): string {
    return this.g.op('Add', [a, b]);
  }

  sub(a: string, b: string): string {
    return this.g.op('Sub', [a, b]);
  }

  mul(a: string, b: string): string {
    return this.g.op('Mul', [a, b]);
  }

  reshape(x: string, dims: number[]): string {
    return this.g.op('Reshape', [x, this.i64(dims)]);
  }

  transpose(x: string, perm: number[] = [1, 0]): string {
    return this.g.op('Transpose', [x], { perm: attr.ints(perm) });
  }

  // --- modules -----------------------------------------------------------------------------

  layerNorm(x: string, prefix: string): string {
    const scale = this.weight(`${prefix}.weight`);
    const bias = this.weight(`${prefix}.bias`);
    return this.g.op('LayerNormalization', [x, scale, bias], {
      axis: attr.int(-1),
      epsilon: attr.float(LAYER_NORM_EPS),
    });
  }

  linear(x: string, prefix: string, bias = true): string {
    const y = this.g.op('MatMul', [x, this.linearWeight(`${prefix}.weight`)]);
    return bias ? this.add(y, this.weight(`${prefix}.bias`)) : y;
  }

  /** Exact GELU (torch.nn.GELU default): x/2 · (1 + erf(x/√2)). */
  gelu(x: string): string {
    const erf = this.g.op('Erf', [this.mul(x, this.scalar(Math.SQRT1_2))]);
    return this.mul(this.mul(x, this.scalar(0.5)), this.add(erf, this.scalar(1)));
  }

  feedForward(x: string, first: string, second: string): string {
    return this.linear(this.gelu(this.linear(x, first)), second);
  }

  /** Σ a·b over features: [n, f] × [n, f] → [n, 1]. */
  rowDot(a: string, b: string): string {
    return this.g.op('ReduceSum', [this.mul(a, b), this.i64([1])], { keepdims: attr.int(1) });
  }

  /** x / max(‖x‖₂, eps) per row (F.normalize; cosine_similarity's per-vector clamp). */
  l2Normalize(x: string, eps: number): string {
    const norm = this.g.op('Sqrt', [this.rowDot(x, x)]);
    return this.g.op('Div', [x, this.g.op('Clip', [norm, this.scalar(eps)])]);
  }

  /**
   * Softmax of `values` [O, 1] within each question's options; `membership` [O, Q] is the
   * one-hot option → question matrix. Per-question max for stability, found by pushing other
   * questions' entries far down; sums and broadcasts back are MatMuls with the one-hot matrix
   * (exact: a single non-zero term).
   */
  segmentSoftmax(values: string, membership: string): string {
    const byQuestion = this.transpose(membership); // [Q, O]
    const row = this.transpose(values); // [1, O]
    const masked = this.add(
      this.mul(row, byQuestion),
      this.mul(this.sub(byQuestion, this.scalar(1)), this.scalar(MASK_NEGATIVE)),
    );
    const max = this.g.op('ReduceMax', [masked], { axes: attr.ints([1]), keepdims: attr.int(1) });
    const shifted = this.sub(values, this.g.op('MatMul', [membership, max]));
    const exps = this.g.op('Exp', [shifted]);
    const sums = this.g.op('MatMul', [byQuestion, exps]); // [Q, 1]
    return this.g.op('Div', [exps, this.g.op('MatMul', [membership, sums])]);
  }

  /** Rows [part·W, (part+1)·W) of an nn.MultiheadAttention in_proj weight / bias. */
  private inProj(prefix: string, part: 0 | 1 | 2): { weight: Float32Array; bias: Float32Array } {
    const W = this.width;
    const weight = this.weights.read(`${prefix}.in_proj_weight`);
    const bias = this.weights.read(`${prefix}.in_proj_bias`);
    return {
      weight: weight.slice(part * W * W, (part + 1) * W * W),
      bias: bias.slice(part * W, (part + 1) * W),
    };
  }

  /** in-projection `part` as MatMul weight [W, W] (transposed) + bias: x → x Wᵀ + b. */
  private project(x: string, prefix: string, part: 0 | 1 | 2): string {
    const W = this.width;
    const names = ['q', 'k', 'v'][part] as string;
    const { weight, bias } = this.inProj(prefix, part);
    const wT = this.tensor(`${prefix}.W${names}.T`, [W, W], transpose2d(weight, W, W));
    return this.add(this.g.op('MatMul', [x, wT]), this.tensor(`${prefix}.b${names}`, [W], bias));
  }

  /** Scaled queries split into heads: [n, W] → [heads, n, d]. */
  private headQueries(x: string, prefix: string): string {
    const q = this.mul(this.project(x, prefix, 0), this.scalar(1 / Math.sqrt(this.headDim)));
    return this.transpose(this.reshape(q, [-1, this.heads, this.headDim]), [1, 0, 2]);
  }

  /** [heads, n, d] → [n, W] → out_proj. */
  private mergeHeads(x: string, prefix: string): string {
    const merged = this.reshape(this.transpose(x, [1, 0, 2]), [-1, this.width]);
    return this.linear(merged, `${prefix}.out_proj`);
  }

  /** nn.MultiheadAttention(query = xq [n, W], key = value = kv [T, W]), no mask, as written. */
  attention(xq: string, kv: string, prefix: string): string {
    const [h, d] = [this.heads, this.headDim];
    const q = this.headQueries(xq, prefix);
    const k = this.transpose(this.reshape(this.project(kv, prefix, 1), [-1, h, d]), [1, 2, 0]);
    const v = this.transpose(this.reshape(this.project(kv, prefix, 2), [-1, h, d]), [1, 0, 2]);
    const probs = this.g.op('Softmax', [this.g.op('MatMul', [q, k])], { axis: attr.int(-1) });
    return this.mergeHeads(this.g.op('MatMul', [probs, v]), prefix);
  }

  /**
   * The same attention when key = value = `memory` [T, W] is long and the queries few: the key
   * and value projections are moved to the query side (see head.ts), so memory is only read.
   */
  foldedCrossAttention(xq: string, memory: string, prefix: string): string {
    const [h, d, W] = [this.heads, this.headDim, this.width];
    const q = this.headQueries(xq, prefix); // [h, n, d]
    // W_k rows h·d..(h+1)·d are head h's [d, W] block: the row-major [W, W] is already [h, d, W].
    const wk = this.tensor(`${prefix}.Wk.heads`, [h, d, W], this.inProj(prefix, 1).weight);
    const keyQueries = this.reshape(this.g.op('MatMul', [q, wk]), [-1, W]); // [h·n, W]
    const scores = this.g.op('Gemm', [keyQueries, memory], { transB: attr.int(1) }); // [h·n, T]
    const probs = this.g.op('Softmax', [scores], { axis: attr.int(-1) });
    const mixed = this.reshape(this.g.op('MatMul', [probs, memory]), [h, -1, W]); // [h, n, W]
    const { weight: wv, bias: bv } = this.inProj(prefix, 2);
    const wvHeads = new Float32Array(h * W * d); // [h, W, d]: head h's block of W_v, transposed
    for (let head = 0; head < h; head++) {
      const block = transpose2d(wv.subarray(head * d * W, (head + 1) * d * W), d, W);
      wvHeads.set(block, head * W * d);
    }
    const values = this.add(
      this.g.op('MatMul', [mixed, this.tensor(`${prefix}.Wv.heads`, [h, W, d], wvHeads)]),
      this.tensor(`${prefix}.bv.heads`, [h, 1, d], bv, false),
    );
    return this.mergeHeads(values, prefix);
  }
}
