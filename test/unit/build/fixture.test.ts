// Safetensors reading/writing and the tiny Clef fixture's layout (names, shapes, dtypes, config).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SafetensorsFile,
  toBf16Bits,
  toF16Bits,
  writeSafetensors,
} from '../../../src/build/safetensors.js';
import { openRelease } from '../../../src/build/release.js';
import { writeTinyFixture } from '../../../tools/fixture/cli.js';

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'clef-fixture-test-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('bf16 / f16 rounding (hand-computed bit patterns)', () => {
  it('rounds float32 to bf16 to nearest, ties to even', () => {
    expect(toBf16Bits(1)).toBe(0x3f80);
    expect(toBf16Bits(-2.5)).toBe(0xc020);
    // 1 + 2^-8 is halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): stays at 1.
    expect(toBf16Bits(1 + 2 ** -8)).toBe(0x3f80);
    // 1 + 3·2^-8 is halfway between 0x3f81 (odd) and 0x3f82 (even): goes up to even.
    expect(toBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    // Just above halfway rounds up.
    expect(toBf16Bits(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    // 0.1f = 0x3dcccccd: lower half 0xcccd > 0x8000 → 0x3dcd.
    expect(toBf16Bits(0.1)).toBe(0x3dcd);
    expect(toBf16Bits(Infinity)).toBe(0x7f80);
    expect(toBf16Bits(NaN) & 0x7f80).toBe(0x7f80);
    expect(toBf16Bits(NaN) & 0x007f).not.toBe(0);
  });

  it('rounds to binary16 with subnormals and overflow', () => {
    expect(toF16Bits(1)).toBe(0x3c00);
    expect(toF16Bits(-2)).toBe(0xc000);
    expect(toF16Bits(65504)).toBe(0x7bff);
    expect(toF16Bits(65520)).toBe(0x7c00); // halfway to 65536 → even → overflow to inf
    expect(toF16Bits(0.1)).toBe(0x2e66);
    expect(toF16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(toF16Bits(2 ** -25)).toBe(0x0000); // halfway to it: ties to even (0)
    expect(toF16Bits(1.5 * 2 ** -25)).toBe(0x0001);
    expect(toF16Bits(3 * 2 ** -25)).toBe(0x0002); // 1.5 units: tie → even 2
    expect(toF16Bits(2 ** -14)).toBe(0x0400); // smallest normal
  });
});

describe('safetensors round trip', () => {
  it('writes a file that reads back bit-exactly after rounding, header 8-aligned', () => {
    const path = join(work, 'roundtrip.safetensors');
    const values = Float32Array.of(1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 0.1, 65520);
    writeSafetensors(
      path,
      [
        { name: 'a.bf16', dtype: 'BF16', shape: [2, 3], data: values },
        { name: 'b.f16', dtype: 'F16', shape: [6], data: values },
        { name: 'c.f32', dtype: 'F32', shape: [3, 2], data: values },
        { name: 'scalar', dtype: 'F32', shape: [], data: Float32Array.of(0.75) },
      ],
      { format: 'pt' },
    );
    const raw = readFileSync(path);
    const headerLength = Number(raw.readBigUInt64LE(0));
    expect((8 + headerLength) % 8).toBe(0);
    const header = JSON.parse(raw.subarray(8, 8 + headerLength).toString('utf8'));
    expect(header.__metadata__).toEqual({ format: 'pt' });
    expect(header['a.bf16']).toEqual({ dtype: 'BF16', shape: [2, 3], data_offsets: [0, 12] });
    expect(header['scalar'].shape).toEqual([]);

    const file = SafetensorsFile.open(path);
    try {
      expect(file.names()).toEqual(['a.bf16', 'b.f16', 'c.f32', 'scalar']);
      expect(Array.from(file.read('a.bf16'))).toEqual([
        1,
        1,
        1 + 2 ** -6,
        -2.5,
        0.10009765625,
        65536,
      ]);
      expect(Array.from(file.read64('b.f16'))).toEqual([
        1,
        1 + 2 ** -8,
        1 + 3 * 2 ** -8,
        -2.5,
        0.0999755859375,
        Infinity,
      ]);
      expect(file.read('c.f32')).toEqual(values);
      expect(Array.from(file.read64('scalar'))).toEqual([0.75]);
      // Rows 1..2 of the [3, 2] tensor.
      expect(Array.from(file.readRows('c.f32', 1, 2))).toEqual(Array.from(values.subarray(2, 6)));
      expect(file.info('b.f16')).toMatchObject({ dtype: 'F16', shape: [6] });
      expect(() => file.read('missing')).toThrow(/no tensor missing/);
    } finally {
      file.close();
    }
  });
});

/** The tiny release's backbone tensors, written out by hand from the config (not generated). */
function expectedBackbone(vocab: number): Map<string, number[]> {
  const m = new Map<string, number[]>();
  m.set('lm_head.weight', [vocab, 64]);
  m.set('model.language_model.embed_tokens.weight', [vocab, 64]);
  m.set('model.language_model.norm.weight', [64]);
  for (const i of [0, 1, 2, 3]) {
    const p = `model.language_model.layers.${i}.`;
    m.set(p + 'input_layernorm.weight', [64]);
    m.set(p + 'post_attention_layernorm.weight', [64]);
    m.set(p + 'mlp.gate_proj.weight', [128, 64]);
    m.set(p + 'mlp.up_proj.weight', [128, 64]);
    m.set(p + 'mlp.down_proj.weight', [64, 128]);
    if (i < 3) {
      // key dim 2·16 = 32, value dim 4·16 = 64, conv channels 32 + 32 + 64 = 128
      m.set(p + 'linear_attn.in_proj_qkv.weight', [128, 64]);
      m.set(p + 'linear_attn.in_proj_z.weight', [64, 64]);
      m.set(p + 'linear_attn.in_proj_b.weight', [4, 64]);
      m.set(p + 'linear_attn.in_proj_a.weight', [4, 64]);
      m.set(p + 'linear_attn.conv1d.weight', [128, 1, 4]);
      m.set(p + 'linear_attn.A_log', [4]);
      m.set(p + 'linear_attn.dt_bias', [4]);
      m.set(p + 'linear_attn.norm.weight', [16]);
      m.set(p + 'linear_attn.out_proj.weight', [64, 64]);
    } else {
      m.set(p + 'self_attn.q_proj.weight', [128, 64]); // 4 heads · 16 · (query + gate)
      m.set(p + 'self_attn.k_proj.weight', [32, 64]);
      m.set(p + 'self_attn.v_proj.weight', [32, 64]);
      m.set(p + 'self_attn.o_proj.weight', [64, 64]);
      m.set(p + 'self_attn.q_norm.weight', [16]);
      m.set(p + 'self_attn.k_norm.weight', [16]);
    }
  }
  return m;
}

/** JointSchemaHead(hidden 64, width 32, routing 1, layers 2, heads 4, feedforward 64). */
function expectedHead(): Map<string, number[]> {
  const m = new Map<string, number[]>();
  const ln = (p: string, n: number): void => {
    m.set(`${p}.weight`, [n]);
    m.set(`${p}.bias`, [n]);
  };
  const mha = (p: string): void => {
    m.set(`${p}.in_proj_weight`, [96, 32]);
    m.set(`${p}.in_proj_bias`, [96]);
    m.set(`${p}.out_proj.weight`, [32, 32]);
    m.set(`${p}.out_proj.bias`, [32]);
  };
  ln('hidden_norm', 64);
  for (const p of [
    'memory',
    'question',
    'option_question',
    'global',
    'option_context',
    'option_lexical',
  ]) {
    m.set(`${p}_projection.weight`, [32, 64]);
  }
  m.set('type_embedding.weight', [3, 32]);
  ln('evidence_layers.0.query_norm', 32);
  ln('evidence_layers.0.memory_norm', 32);
  mha('evidence_layers.0.attention');
  ln('evidence_layers.0.feedforward_norm', 32);
  m.set('evidence_layers.0.feedforward.0.weight', [64, 32]);
  m.set('evidence_layers.0.feedforward.0.bias', [64]);
  m.set('evidence_layers.0.feedforward.3.weight', [32, 64]);
  m.set('evidence_layers.0.feedforward.3.bias', [32]);
  ln('option_summary_norm', 32);
  for (const i of [0, 1]) {
    mha(`layers.${i}.self_attn`);
    mha(`layers.${i}.multihead_attn`);
    m.set(`layers.${i}.linear1.weight`, [64, 32]);
    m.set(`layers.${i}.linear1.bias`, [64]);
    m.set(`layers.${i}.linear2.weight`, [32, 64]);
    m.set(`layers.${i}.linear2.bias`, [32]);
    for (const n of [1, 2, 3]) ln(`layers.${i}.norm${n}`, 32);
  }
  ln('field_norm', 32);
  ln('option_norm', 32);
  m.set('residual_scorer.0.weight', [32, 128]);
  m.set('residual_scorer.0.bias', [32]);
  m.set('residual_scorer.3.weight', [1, 32]);
  m.set('residual_scorer.3.bias', [1]);
  for (const s of ['prior_logit_scale', 'joint_logit_scale', 'residual_gate']) m.set(s, []);
  return m;
}

describe('tiny fixture layout', () => {
  let bf16Dir: string;
  let fp32Dir: string;
  beforeAll(() => {
    bf16Dir = join(work, 'bf16');
    fp32Dir = join(work, 'fp32');
    writeTinyFixture(bf16Dir, { seed: 1 });
    writeTinyFixture(fp32Dir, { seed: 1, dtype: 'fp32' });
  });

  it('has the release files and a config.json with the real structure', () => {
    expect(readdirSync(bf16Dir).sort()).toEqual([
      'config.json',
      'joint_head.safetensors',
      'joint_head_config.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
      'model.safetensors.index.json',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const config = JSON.parse(readFileSync(join(bf16Dir, 'config.json'), 'utf8'));
    expect(config.model_type).toBe('qwen3_5');
    expect(config.architectures).toEqual(['Qwen3_5ForConditionalGeneration']);
    expect(config.tie_word_embeddings).toBe(false);
    const text = config.text_config;
    expect(text).toMatchObject({
      model_type: 'qwen3_5_text',
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 4,
      layer_types: ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention'],
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      linear_num_key_heads: 2,
      linear_num_value_heads: 4,
      linear_key_head_dim: 16,
      linear_value_head_dim: 16,
      linear_conv_kernel_dim: 4,
      max_position_embeddings: 4096,
      rms_norm_eps: 1e-6,
      attn_output_gate: true,
      dtype: 'bfloat16',
    });
    expect(text.rope_parameters).toMatchObject({
      rope_type: 'default',
      partial_rotary_factor: 0.25,
    });
    expect(typeof text.rope_parameters.rope_theta).toBe('number');
    const tokenizer = JSON.parse(readFileSync(join(bf16Dir, 'tokenizer.json'), 'utf8'));
    const vocab = Object.keys(tokenizer.model.vocab).length + tokenizer.added_tokens.length;
    expect(text.vocab_size).toBe(vocab);
    const imEnd = tokenizer.added_tokens.find(
      (t: { content: string }) => t.content === '<|im_end|>',
    );
    expect(text.eos_token_id).toBe(imEnd.id);
    expect(JSON.parse(readFileSync(join(fp32Dir, 'config.json'), 'utf8')).text_config.dtype).toBe(
      'float32',
    );
  });

  it('shards the backbone under the real names, shapes and dtypes', () => {
    const release = openRelease(bf16Dir);
    try {
      const expected = expectedBackbone(release.text.vocab_size);
      const textNames = release.names().filter((n) => !n.startsWith('model.visual.'));
      expect(new Set(textNames)).toEqual(new Set(expected.keys()));
      expect(release.names().some((n) => n.startsWith('model.visual.blocks.0.'))).toBe(true);
      for (const [name, shape] of expected) {
        const info = release.info(name);
        expect(info.shape, name).toEqual(shape);
        expect(info.dtype, name).toBe(name.endsWith('.A_log') ? 'F32' : 'BF16');
      }
      const index = JSON.parse(readFileSync(join(bf16Dir, 'model.safetensors.index.json'), 'utf8'));
      expect(new Set(Object.values(index.weight_map))).toEqual(
        new Set(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']),
      );
      let total = 0;
      for (const name of release.names())
        total += release.info(name).end - release.info(name).begin;
      expect(index.metadata.total_size).toBe(total);
      expect(release.text.partial_rotary_factor).toBe(0.25);
    } finally {
      release.close();
    }
  });

  it('stores fp32 on request, the same draws as the bf16 release before rounding', () => {
    const a = openRelease(bf16Dir);
    const b = openRelease(fp32Dir);
    try {
      for (const name of b.names()) expect(b.info(name).dtype, name).toBe('F32');
      const name = 'model.language_model.layers.3.self_attn.q_proj.weight';
      const bf = a.read(name);
      const fp = b.read(name);
      for (let i = 0; i < fp.length; i++) {
        const bits = toBf16Bits(fp[i] as number);
        expect(bf[i]).toBe(new Float32Array(new Uint32Array([bits << 16]).buffer)[0]);
      }
    } finally {
      a.close();
      b.close();
    }
  });

  it('writes the joint head with the reference state_dict names and config keys', () => {
    const config = JSON.parse(readFileSync(join(bf16Dir, 'joint_head_config.json'), 'utf8'));
    expect(config).toEqual({
      hidden_size: 64,
      width: 32,
      routing_layers: 1,
      layers: 2,
      heads: 4,
      feedforward: 64,
      dropout: 0,
    });
    const release = openRelease(bf16Dir);
    try {
      const head = release.head as SafetensorsFile;
      const expected = expectedHead();
      expect(new Set(head.names())).toEqual(new Set(expected.keys()));
      for (const [name, shape] of expected) expect(head.info(name).shape, name).toEqual(shape);
    } finally {
      release.close();
    }
  });

  it('is deterministic per seed', () => {
    const again = join(work, 'again');
    const other = join(work, 'other');
    writeTinyFixture(again, { seed: 1 });
    writeTinyFixture(other, { seed: 2 });
    for (const file of ['model-00001-of-00002.safetensors', 'joint_head.safetensors']) {
      expect(readFileSync(join(again, file)).equals(readFileSync(join(bf16Dir, file)))).toBe(true);
      expect(readFileSync(join(other, file)).equals(readFileSync(join(bf16Dir, file)))).toBe(false);
    }
  });
});
