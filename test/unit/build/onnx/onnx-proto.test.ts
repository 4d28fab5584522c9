// The ONNX protobuf encoder and graph builder: hand-built graphs must load in onnxruntime-node
// and compute numbers worked out here by hand; large initializers must stream to external data
// files (several when a size limit is set) and still load.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { GraphBuilder, attr } from '../../../../src/build/onnx/graph.js';
import { DataType } from '../../../../src/build/onnx/proto.js';

const dir = mkdtempSync(join(tmpdir(), 'onnx-proto-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f32 = (t: ort.Tensor) => Array.from(t.data as Float32Array);

describe('hand-built graph with inline initializers', () => {
  it('runs in onnxruntime-node and computes the expected values', async () => {
    const path = join(dir, 'small.onnx');
    const g = new GraphBuilder({ name: 'small', onnxPath: path });
    g.input('x', DataType.FLOAT, [2, 'n']);
    g.input('idx', DataType.INT64, ['m']);
    // W = [[1, 0], [0, 1], [1, 1]], b = [0.5, -10]
    const w = g.initializer('W', DataType.FLOAT, [3, 2], Float32Array.from([1, 0, 0, 1, 1, 1]));
    const b = g.constFloat([0.5, -10], [2], 'b');
    const y = g.op('Add', [g.op('MatMul', ['x', w]), b]);
    const leaky = g.op('LeakyRelu', [y], { alpha: attr.float(0.25) });
    const t = g.op('Transpose', [leaky], { perm: attr.ints([1, 0]) });
    const sum = g.op('ReduceSum', [t, g.constInt64([-1])], { keepdims: attr.int(0) });
    const tail = g.op('Slice', ['x', g.constInt64([-2]), g.constInt64([1000]), g.constInt64([1])]);
    const picked = g.op('Gather', [t, 'idx'], { axis: attr.int(1) });
    const idxF = g.op('Cast', ['idx'], { to: attr.int(DataType.FLOAT) });
    g.output(leaky, 'leaky', DataType.FLOAT, [2, 2]);
    g.output(sum, 'sum', DataType.FLOAT, [2]);
    g.output(tail, 'tail', DataType.FLOAT, [2, 2]);
    g.output(picked, 'picked', DataType.FLOAT, [2, 'm']);
    g.output(idxF, 'idx_f', DataType.FLOAT, ['m']);
    const written = g.finish();
    expect(written.dataPaths).toEqual([]); // everything small stays inline

    const session = await ort.InferenceSession.create(path);
    expect(session.inputMetadata.map((m) => (m.isTensor ? [m.name, m.type, m.shape] : []))).toEqual(
      [
        ['x', 'float32', [2, 'n']],
        ['idx', 'int64', ['m']],
      ],
    );
    const x = new ort.Tensor('float32', Float32Array.from([1, 2, 3, -4, 5, 6]), [2, 3]);
    const idx = new ort.Tensor('int64', BigInt64Array.from([1n, 0n, 1n]), [3]);
    const out = await session.run({ x, idx });
    // x·W + b: row 0 = [1+3+0.5, 2+3-10] = [4.5, -5]; row 1 = [-4+6+0.5, 5+6-10] = [2.5, 1]
    // LeakyRelu(0.25): [[4.5, -1.25], [2.5, 1]]
    expect(f32(out.leaky!)).toEqual([4.5, -1.25, 2.5, 1]);
    // transpose [[4.5, 2.5], [-1.25, 1]], row sums [7, -0.25]
    expect(f32(out.sum!)).toEqual([7, -0.25]);
    expect(f32(out.tail!)).toEqual([2, 3, 5, 6]);
    expect(out.picked!.dims).toEqual([2, 3]);
    expect(f32(out.picked!)).toEqual([2.5, 4.5, 2.5, 1, -1.25, 1]);
    expect(f32(out.idx_f!)).toEqual([1, 0, 1]);
  });

  it('encodes string attributes and com.microsoft ops', async () => {
    // LinearAttention, update_rule "linear": S_t = S_{t-1} + k_t v_tᵀ, o_t = scale · q_tᵀ S_t.
    const path = join(dir, 'linear.onnx');
    const g = new GraphBuilder({ name: 'linear', onnxPath: path });
    for (const n of ['q', 'k', 'v']) g.input(n, DataType.FLOAT, [1, 'T', 2]);
    const [o] = g.node('LinearAttention', ['q', 'k', 'v'], {
      domain: 'com.microsoft',
      outputs: 2,
      attrs: {
        q_num_heads: attr.int(1),
        kv_num_heads: attr.int(1),
        update_rule: attr.string('linear'),
        scale: attr.float(0.5),
      },
    });
    g.output(o as string, 'o', DataType.FLOAT, [1, 'T', 2]);
    g.finish();
    const session = await ort.InferenceSession.create(path);
    const t = (v: number[]) => new ort.Tensor('float32', Float32Array.from(v), [1, 2, 2]);
    const out = await session.run({ q: t([1, 0, 1, 1]), k: t([1, 0, 0, 1]), v: t([2, 3, 4, 5]) });
    // S1 = [[2, 3], [0, 0]]; o1 = 0.5·[1, 0]·S1 = [1, 1.5]
    // S2 = S1 + [0, 1]ᵀ[4, 5] = [[2, 3], [4, 5]]; o2 = 0.5·[1, 1]·S2 = [3, 4]
    expect(f32(out.o!)).toEqual([1, 1.5, 3, 4]);
  });

  it('rejects duplicate names and mis-sized initializers', () => {
    const g = new GraphBuilder({ name: 'bad', onnxPath: join(dir, 'bad.onnx') });
    g.input('x', DataType.FLOAT, [1]);
    expect(() => g.input('x', DataType.FLOAT, [1])).toThrow(/already used/);
    expect(() => g.initializer('w', DataType.FLOAT, [3], new Float32Array(2))).toThrow(/bytes/);
    g.abort();
  });
});

describe('external data', () => {
  it('streams large initializers to side files, split at the size limit, and loads them', async () => {
    const path = join(dir, 'ext.onnx');
    const rows = 64;
    const cols = 300; // 76,800 bytes per float32 matrix
    const a = Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7) % 13) - 6);
    const bRows = Float32Array.from({ length: rows * cols }, (_, i) => (i % cols) / cols);
    const g = new GraphBuilder({ name: 'ext', onnxPath: path, maxDataFileBytes: 100_000 });
    g.input('x', DataType.FLOAT, [1, rows]);
    const wa = g.initializer('A', DataType.FLOAT, [rows, cols], a);
    // B arrives in 4 pieces of 16 rows, as a converter streams an embedding table.
    const pieces = [0, 1, 2, 3].map((k) => bRows.subarray(k * 16 * cols, (k + 1) * 16 * cols));
    const wb = g.initializerFromChunks('B', DataType.FLOAT, [rows, cols], pieces);
    const ya = g.op('MatMul', ['x', wa]);
    const yb = g.op('MatMul', ['x', wb]);
    g.output(ya, 'ya', DataType.FLOAT, [1, cols]);
    g.output(yb, 'yb', DataType.FLOAT, [1, cols]);
    const written = g.finish();

    // Two tensors of 76,800 bytes do not fit one 100,000-byte file: two data files.
    expect(written.dataPaths).toEqual([`${path}.data`, `${path}.data.1`]);
    for (const p of written.dataPaths) expect(statSync(p).size).toBe(76_800);
    expect(statSync(path).size).toBeLessThan(2000); // weights are not inline
    // The first file holds A's bytes verbatim.
    const first = readFileSync(`${path}.data`);
    expect(new Float32Array(first.buffer, first.byteOffset, first.length / 4)).toEqual(a);
    expect(() => g.initializerFromChunks('C', DataType.FLOAT, [2], [new Float32Array(2)])).toThrow(
      /finished/,
    );

    const session = await ort.InferenceSession.create(path);
    const x = Float32Array.from({ length: rows }, (_, i) => (i % 5) - 2);
    const out = await session.run({ x: new ort.Tensor('float32', x, [1, rows]) });
    const expected = (w: Float32Array) =>
      Array.from({ length: cols }, (_, c) =>
        x.reduce((acc, xi, r) => acc + xi * (w[r * cols + c] as number), 0),
      );
    const close = (got: number[], want: number[]) =>
      got.forEach((v, i) => expect(Math.abs(v - (want[i] as number))).toBeLessThan(1e-4));
    close(f32(out.ya!), expected(a));
    close(f32(out.yb!), expected(bRows));
  });

  it('aligns each external tensor and rejects a chunk stream of the wrong length', () => {
    const path = join(dir, 'align.onnx');
    const g = new GraphBuilder({ name: 'align', onnxPath: path, inlineBelowBytes: 0 });
    g.initializer('a', DataType.UINT8, [3], Uint8Array.from([1, 2, 3]));
    g.initializer('b', DataType.UINT8, [2], Uint8Array.from([4, 5]));
    expect(() => g.initializerFromChunks('c', DataType.FLOAT, [4], [new Float32Array(3)])).toThrow(
      /expected 16/,
    );
    g.abort();
    const bytes = readFileSync(`${path}.data`);
    expect(Array.from(bytes.subarray(0, 3))).toEqual([1, 2, 3]);
    expect(Array.from(bytes.subarray(64, 66))).toEqual([4, 5]); // 64-byte alignment
  });
});
