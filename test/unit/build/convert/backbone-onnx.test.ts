// The Qwen3.5 backbone as ONNX (src/build/convert/backbone.ts), checked on the tiny fixture against
// the independent float64 reference forward (src/build/reference/qwen35.ts):
// - fp32 equals the reference, fed whole or in uneven chunks with the state carried;
// - q8 / q4 / mixed equal the reference run on the weights they dequantise to (so the packing
//   is exactly what onnxruntime reads), and their distance to the float model is reported;
// - the q4 package runs the same on onnxruntime-web's WASM back end as on onnxruntime-node.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backboneIo,
  buildBackboneOnnx,
  layerEncodings,
  type BackboneDType,
} from '../../../../src/build/convert/backbone.js';
import { dequantizeBlocks, quantizeBlocks } from '../../../../src/build/convert/quantize.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { compare, randomIds, runChunks } from '../../support/backbone-run.js';
import { ReferenceBackbone } from '../../../../src/build/reference/qwen35.js';
import { writeSafetensors, type TensorToWrite } from '../../../../src/build/safetensors.js';
import { openRelease } from '../../../../src/build/release.js';

// Tolerances, relative to the largest |hidden| of the reference (≈ 4 on the fixture):
const FP32_TOL = 2e-5; // fp32 graph vs float64 reference (measured ≈ 7e-7)
const CHUNK_TOL = 1e-5; // chunked vs whole, same graph (measured ≈ 1e-7)
const FP16_TOL = 1e-3; // fp16 weights; bf16 → fp16 is exact, CPU computes the fp16 MatMul in fp32

const work = mkdtempSync(join(tmpdir(), 'backbone-onnx-'));
const releaseDir = join(work, 'release');
let reference: ReferenceBackbone;

beforeAll(async () => {
  writeTinyFixture(releaseDir, { seed: 3 });
  reference = await ReferenceBackbone.load(releaseDir);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function build(dtype: BackboneDType, name: string = dtype) {
  const release = openRelease(releaseDir);
  try {
    return buildBackboneOnnx(release, join(work, `${name}.onnx`), { dtype });
  } finally {
    release.close();
  }
}

describe('graph inputs and outputs', () => {
  it('names, dtypes and shapes follow the documented contract', async () => {
    const built = build('fp32');
    const session = await ort.InferenceSession.create(built.onnxPath);
    // The fixture: layers 0–2 linear attention, layer 3 full attention (see TINY_TEXT).
    // convDim = 2·2·16 + 4·16 = 128; kv heads 2 of dim 16; 4 value heads of 16×16.
    const meta = (m: readonly ort.InferenceSession.ValueMetadata[]) =>
      m.map((v) => (v.isTensor ? `${v.name}:${v.type}:[${v.shape.join(',')}]` : v.name));
    const linearIn = (i: number) => [
      `conv_state.${i}:float32:[1,128,3]`,
      `recurrent_state.${i}:float32:[1,4,16,16]`,
    ];
    const linearOut = (i: number) => [
      `present_conv_state.${i}:float32:[1,128,3]`,
      `present_recurrent_state.${i}:float32:[1,4,16,16]`,
    ];
    expect(meta(session.inputMetadata)).toEqual([
      'input_ids:int64:[1,sequence_length]',
      ...linearIn(0),
      ...linearIn(1),
      ...linearIn(2),
      'past_key.3:float32:[1,2,past_sequence_length,16]',
      'past_value.3:float32:[1,2,past_sequence_length,16]',
    ]);
    expect(meta(session.outputMetadata)).toEqual([
      'hidden:float32:[1,sequence_length,64]',
      ...linearOut(0),
      ...linearOut(1),
      ...linearOut(2),
      'present_key.3:float32:[1,2,total_sequence_length,16]',
      'present_value.3:float32:[1,2,total_sequence_length,16]',
    ]);
    expect(backboneIo(openRelease(releaseDir).text)).toEqual(built.io);
  });

  it('mixed puts the first layers at 8 bits (16, or half of a small model)', () => {
    expect(layerEncodings('mixed', 4)).toEqual(['q8', 'q8', 'q4', 'q4']);
    expect(layerEncodings('mixed', 32).filter((e) => e === 'q8')).toHaveLength(16);
    expect(layerEncodings('mixed', 32)[15]).toBe('q8');
    expect(layerEncodings('mixed', 6, 1)).toEqual(['q8', 'q4', 'q4', 'q4', 'q4', 'q4']);
    expect(layerEncodings('q4', 3)).toEqual(['q4', 'q4', 'q4']);
  });
});

describe('fp32 backbone', () => {
  it('equals the float64 reference on random sequences', async () => {
    const built = build('fp32');
    const session = await ort.InferenceSession.create(built.onnxPath);
    const vocab = reference.config.vocab_size;
    for (const [length, seed] of [
      [1, 11],
      [13, 12],
      [48, 13],
    ] as const) {
      const ids = randomIds(length, seed, vocab);
      const got = await runChunks(session, built.io, [ids]);
      const { relative } = compare(got, reference.forward(ids));
      expect(relative, `length ${length}`).toBeLessThan(FP32_TOL);
    }
  });

  it('fed in uneven chunks with the state carried equals fed whole', async () => {
    const built = build('fp32');
    const session = await ort.InferenceSession.create(built.onnxPath);
    const ids = randomIds(48, 99, reference.config.vocab_size);
    const whole = await runChunks(session, built.io, [ids]);
    const chunked = await runChunks(session, built.io, [
      ids.slice(0, 5),
      ids.slice(5, 6),
      ids.slice(6),
    ]);
    expect(compare(chunked, whole).relative).toBeLessThan(CHUNK_TOL);
    expect(compare(chunked, reference.forward(ids)).relative).toBeLessThan(FP32_TOL);
  });
});

/**
 * A copy of the fixture whose weights are what a variant's graph actually multiplies by:
 * every layer linear quantised and dequantised at its bits, the embedding at 8 bits (the
 * default for quantised variants). Everything else float32 as released.
 */
function dequantizedRelease(dtype: BackboneDType): string {
  const dir = join(work, `dequantized-${dtype}`);
  mkdirSync(dir, { recursive: true });
  const release = openRelease(releaseDir);
  const encodings = layerEncodings(dtype, release.text.num_hidden_layers);
  const linear =
    /layers\.(\d+)\.(self_attn\.[qkvo]_proj|linear_attn\.(in_proj_\w+|out_proj)|mlp\.\w+_proj)\.weight$/;
  const tensors: TensorToWrite[] = [];
  for (const name of release.names()) {
    if (!name.startsWith('model.language_model.') && name !== 'lm_head.weight') continue;
    const shape = release.info(name).shape;
    let data = release.read(name);
    const match = linear.exec(name);
    const bits = match
      ? encodings[Number(match[1])] === 'q8'
        ? 8
        : 4
      : name.endsWith('embed_tokens.weight')
        ? 8
        : 0;
    if (bits !== 0) {
      const [n, k] = shape as [number, number];
      data = dequantizeBlocks(quantizeBlocks(data, n, k, bits as 4 | 8));
    }
    tensors.push({ name, dtype: 'F32', shape, data });
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(release.config));
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  release.close();
  return dir;
}

/**
 * Bounds on max |Δhidden| / max |hidden| against the float model. Measured here (fixture and ids
 * seeded, so deterministic up to float32 summation order): q8 0.033, mixed 0.146, q4 0.615. The
 * bounds leave 3× (q8), 2× (mixed) and 1.3× (q4; its error is already large, and a quantizer that
 * scrambles blocks lands at 1 or above), so each fails if its scheme gets visibly coarser.
 */
const MAX_DRIFT = { q8: 0.1, mixed: 0.3, q4: 0.8 } as const;

describe('quantised and fp16 backbones', () => {
  const figures: Record<string, number> = {};
  afterAll(() => {
    console.log('backbone error vs float64 reference (max |Δhidden| / max |hidden|):', figures);
  });

  for (const dtype of ['q8', 'q4', 'mixed'] as const) {
    it(`${dtype} computes exactly its dequantised weights, and stays near the float model`, async () => {
      const built = build(dtype);
      const session = await ort.InferenceSession.create(built.onnxPath);
      const own = await ReferenceBackbone.load(dequantizedRelease(dtype));
      const ids = randomIds(40, 7, reference.config.vocab_size);
      const got = await runChunks(session, built.io, [ids.slice(0, 17), ids.slice(17)]);
      expect(compare(got, own.forward(ids)).relative).toBeLessThan(FP32_TOL);
      const drift = compare(got, reference.forward(ids));
      figures[dtype] = drift.relative;
      expect(drift.maxAbs).toBeGreaterThan(0);
      expect(drift.relative).toBeLessThan(MAX_DRIFT[dtype]);
    });
  }

  it('q8 is closer to the float model than q4', () => {
    expect(figures.q8).toBeLessThan(figures.q4 as number);
  });

  it('fp16 runs and matches the reference at fp16 precision', async () => {
    const built = build('fp16');
    const session = await ort.InferenceSession.create(built.onnxPath);
    const ids = randomIds(24, 5, reference.config.vocab_size);
    const got = await runChunks(session, built.io, [ids]);
    figures.fp16 = compare(got, reference.forward(ids)).relative;
    expect(figures.fp16).toBeLessThan(FP16_TOL);
  });
});

describe('onnxruntime-web WASM back end', () => {
  it('runs the q4 package like onnxruntime-node', async () => {
    const built = build('q4', 'web-q4');
    const web = await import('onnxruntime-web');
    web.env.wasm.numThreads = 1;
    const dataName = `${built.onnxPath.split('/').pop()}.data`;
    const session = await web.InferenceSession.create(readFileSync(built.onnxPath), {
      executionProviders: ['wasm'],
      externalData: [{ path: dataName, data: readFileSync(built.dataPaths[0] as string) }],
    });
    const nodeSession = await ort.InferenceSession.create(built.onnxPath);
    const ids = randomIds(20, 21, reference.config.vocab_size);
    const chunks = [ids.slice(0, 9), ids.slice(9)];
    const want = await runChunks(nodeSession, built.io, chunks);
    const got = await runChunks(
      session,
      built.io,
      chunks,
      web.Tensor as unknown as typeof ort.Tensor,
    );
    expect(compare(got, want).relative).toBeLessThan(CHUNK_TOL);
  });
});
