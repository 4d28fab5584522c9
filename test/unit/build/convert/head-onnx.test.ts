// The joint head as ONNX (src/build/convert/head.ts) run by onnxruntime-node against the float64
// reference head (src/build/reference/head.ts) on the tiny fixture, given the same hidden states.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildHeadInputs,
  headSpanInputs,
  splitByQuestion,
} from '../../../../src/clef/head-inputs.js';
import { Lexicon } from '../../../../src/clef/lexicon.js';
import {
  encodeRequest,
  type EncodedQuestion,
  type EncodedRequest,
} from '../../../../src/clef/prompt.js';
import {
  buildHeadOnnx,
  HEAD_DECIDE_FILE,
  HEAD_MEMORY_FILE,
} from '../../../../src/build/convert/head.js';
import { buildLexicon } from '../../../../src/build/convert/lexicon.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { Rng } from '../../../../tools/fixture/weights.js';
import {
  loadHeadWeights,
  referenceHeadLogits,
  type HeadWeights,
} from '../../../../src/build/reference/head.js';
import { SafetensorsFile } from '../../../../src/build/safetensors.js';

// Tolerances (fp32 graph vs float64 reference; logits are O(1..10)).
const FP32_MAX_DLOGIT = 2e-5;
const FP32_MAX_DP = 1e-5;
// Weight matrices stored fp16 (relative rounding 2^-11), compute fp32.
const FP16_MAX_DP = 5e-3;
// Memory rows by chunk vs whole: the same arithmetic per row, only the batching differs.
const CHUNK_MAX_DMEMORY = 1e-6;

const TYPES = ['noul', 'choice', 'score'] as const;

interface Case {
  encoded: EncodedRequest;
  hidden: Float64Array[];
}

/**
 * A random request laid out as the prompt is (prefix, state, schema with question and option
 * spans, suffix) with random token ids and random hidden states: the head reads only spans,
 * ids and hidden states, so no tokenizer or backbone is needed here.
 */
function randomCase(rng: Rng, vocab: number, hiddenSize: number): Case {
  const ids: number[] = [];
  const push = (n: number): [number, number] => {
    const start = ids.length;
    for (let i = 0; i < n; i++) ids.push(rng.int(vocab));
    return [start, ids.length];
  };
  push(4 + rng.int(6)); // prefix
  push(rng.int(rng.int(2) === 0 ? 8 : 120)); // state: short or long
  const stateEnd = ids.length;
  push(3); // schema header
  const questions: EncodedQuestion[] = [];
  const count = 1 + rng.int(8);
  for (let k = 0; k < count; k++) {
    const typeId = rng.int(3) as 0 | 1 | 2;
    push(2 + rng.int(4)); // field header
    const span = push(1 + rng.int(6));
    push(2);
    const options = typeId === 0 ? 2 : typeId === 1 ? 1 + rng.int(6) : 2 + rng.int(5);
    const optionSpans: Array<[number, number]> = [];
    for (let j = 0; j < options; j++) {
      push(1 + rng.int(2));
      optionSpans.push(push(2 + rng.int(8)));
      push(1);
    }
    push(2);
    const optionIds = optionSpans.map((_, j) => String(j));
    questions.push({ id: `q${k}`, type: TYPES[typeId], typeId, span, optionIds, optionSpans });
  }
  push(4 + rng.int(4)); // suffix
  const hidden = ids.map(() => {
    const offset = rng.normal();
    return Float64Array.from({ length: hiddenSize }, () => offset + 1.5 * rng.normal());
  });
  const encoded: EncodedRequest = {
    inputIds: ids,
    questions,
    prefixTokens: 4,
    stateTokens: stateEnd - 4,
    stateEnd,
    truncatedStateTokens: 0,
  };
  return { encoded, hidden };
}

function rowsTensor(rows: Float64Array[], from: number, to: number, width: number): ort.Tensor {
  const data = new Float32Array((to - from) * width);
  for (let t = from; t < to; t++) data.set(rows[t] as Float64Array, (t - from) * width);
  return new ort.Tensor('float32', data, [1, to - from, width]);
}

function softmax64(logits: Float64Array): Float64Array {
  const max = Math.max(...logits);
  const e = logits.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

let dir: string;
let head: HeadWeights;
let lmHead: SafetensorsFile;
let vocab: number;
const sessions: Record<string, { memory: ort.InferenceSession; decide: ort.InferenceSession }> = {};
let exactLexicon: { hidden: number; spanMean(ids: ArrayLike<number>): Float32Array };
let int8Lexicon: Lexicon;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clef-head-'));
  writeTinyFixture(dir, { dtype: 'fp32', seed: 3 });
  head = loadHeadWeights(dir);
  const variants = {
    folded: { crossAttention: 'folded' },
    direct: { crossAttention: 'direct' },
    fp16: { dtype: 'fp16' },
  } as const;
  for (const [name, options] of Object.entries(variants)) {
    const out = join(dir, name);
    buildHeadOnnx(dir, out, options);
    sessions[name] = {
      memory: await ort.InferenceSession.create(join(out, HEAD_MEMORY_FILE)),
      decide: await ort.InferenceSession.create(join(out, HEAD_DECIDE_FILE)),
    };
  }
  const shards = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
  lmHead = SafetensorsFile.open(join(dir, shards.weight_map['lm_head.weight']));
  vocab = lmHead.info('lm_head.weight').shape[0] as number;
  const H = head.config.hidden_size;
  exactLexicon = {
    hidden: H,
    spanMean: (ids) => {
      const mean = new Float64Array(H);
      for (const id of Array.from(ids)) {
        lmHead.readRows('lm_head.weight', id, 1).forEach((v, i) => (mean[i] += v / ids.length));
      }
      return Float32Array.from(mean);
    },
  };
  buildLexicon(dir, join(dir, 'rows-int8.bin'), { dtype: 'int8', rowsPerBlock: 100 });
  int8Lexicon = new Lexicon(readFileSync(join(dir, 'rows-int8.bin')));
}, 60_000);

afterAll(() => {
  lmHead?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function reference(c: Case): Float64Array[] {
  return referenceHeadLogits(head, c.hidden, c.encoded.inputIds, c.encoded.questions, (id) =>
    Float64Array.from(lmHead.readRows('lm_head.weight', id, 1)),
  );
}

/** head_memory over the given chunk boundaries of [0, stateEnd), then head_decide. */
async function runOnnx(
  variant: string,
  c: Case,
  lexicon: typeof exactLexicon,
  cuts: number[] = [],
): Promise<{ logits: Float32Array[]; probabilities: Float32Array[]; memory: Float32Array }> {
  const { memory: memorySession, decide } = sessions[variant]!;
  const { hidden_size: H, width: W } = head.config;
  const stateEnd = c.encoded.stateEnd;
  const bounds = [0, ...cuts, stateEnd];
  let memoryTensor: ort.Tensor = new ort.Tensor('float32', new Float32Array(0), [1, 0, W]);
  for (let i = 0; i + 1 < bounds.length; i++) {
    const [from, to] = [bounds[i] as number, bounds[i + 1] as number];
    const out = await memorySession.run({
      hidden: rowsTensor(c.hidden, from, to, H),
      past_memory: memoryTensor,
    });
    memoryTensor = out.memory!;
    expect(memoryTensor.dims).toEqual([1, to, W]);
  }
  const memory = memoryTensor.data as Float32Array;
  const inputs = await buildHeadInputs(c.encoded, lexicon);
  const feeds: Record<string, ort.Tensor> = {
    memory: new ort.Tensor('float32', memory, [1, stateEnd, W]),
    hidden: rowsTensor(c.hidden, stateEnd, c.hidden.length, H),
  };
  for (const name of [
    'question_weights',
    'option_weights',
    'option_question',
    'question_type',
    'lex',
  ] as const) {
    const t = inputs[name];
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  const out = await decide.run(feeds);
  return {
    logits: splitByQuestion(inputs.layout, out.logits!.data as Float32Array),
    probabilities: splitByQuestion(inputs.layout, out.probabilities!.data as Float32Array),
    memory,
  };
}

/** max |Δlogit| and max |Δp| over all options of all questions. */
function compare(
  ref: Float64Array[],
  got: { logits: Float32Array[]; probabilities: Float32Array[] },
): { dLogit: number; dp: number } {
  let dLogit = 0;
  let dp = 0;
  ref.forEach((logits, k) => {
    const p = softmax64(logits);
    expect(got.logits[k]!.length).toBe(logits.length);
    logits.forEach((v, j) => {
      dLogit = Math.max(dLogit, Math.abs(v - got.logits[k]![j]!));
      dp = Math.max(dp, Math.abs(p[j]! - got.probabilities[k]![j]!));
    });
  });
  return { dLogit, dp };
}

describe('joint head ONNX vs float64 reference (tiny fixture)', () => {
  const requests = 10;

  it.each(['folded', 'direct'])(
    '%s cross-attention, fp32: random requests with 1-8 questions of all types',
    async (variant) => {
      const rng = new Rng(variant === 'folded' ? 11 : 12);
      let worst = { dLogit: 0, dp: 0 };
      const typesSeen = new Set<number>();
      for (let r = 0; r < requests; r++) {
        const c = randomCase(rng, vocab, head.config.hidden_size);
        c.encoded.questions.forEach((q) => typesSeen.add(q.typeId));
        const got = await runOnnx(variant, c, exactLexicon);
        const d = compare(reference(c), got);
        worst = { dLogit: Math.max(worst.dLogit, d.dLogit), dp: Math.max(worst.dp, d.dp) };
        // The graph's own softmax is a per-question softmax of its own logits.
        got.logits.forEach((logits, k) => {
          const p = softmax64(Float64Array.from(logits));
          p.forEach((v, j) => expect(Math.abs(v - got.probabilities[k]![j]!)).toBeLessThan(1e-6));
        });
      }
      console.log(
        `head ${variant} fp32: max |Δlogit| ${worst.dLogit.toExponential(2)}, max |Δp| ${worst.dp.toExponential(2)}`,
      );
      expect(typesSeen.size).toBe(3);
      expect(worst.dLogit).toBeLessThanOrEqual(FP32_MAX_DLOGIT);
      expect(worst.dp).toBeLessThanOrEqual(FP32_MAX_DP);
    },
  );

  it('memory rows computed in uneven chunks equal the rows computed whole (and the reference)', async () => {
    const rng = new Rng(21);
    let c = randomCase(rng, vocab, head.config.hidden_size);
    while (c.encoded.stateEnd < 40) c = randomCase(rng, vocab, head.config.hidden_size);
    const end = c.encoded.stateEnd;
    const whole = await runOnnx('folded', c, exactLexicon);
    const chunked = await runOnnx('folded', c, exactLexicon, [1, 8, 9, end - 13]);
    let dMemory = 0;
    whole.memory.forEach((v, i) => (dMemory = Math.max(dMemory, Math.abs(v - chunked.memory[i]!))));
    expect(dMemory).toBeLessThanOrEqual(CHUNK_MAX_DMEMORY);
    whole.logits.forEach((logits, k) =>
      logits.forEach((v, j) => expect(Math.abs(v - chunked.logits[k]![j]!)).toBeLessThan(1e-5)),
    );
    // memory = memory_projection(hidden_norm(H)) in float64, row 5 as a spot check.
    const { hidden_size: H, width: W } = head.config;
    const x = c.hidden[5]!;
    const mean = x.reduce((a, b) => a + b, 0) / H;
    const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / H;
    const g = head.tensors.get('hidden_norm.weight')!;
    const b = head.tensors.get('hidden_norm.bias')!;
    const n = x.map((v, i) => ((v - mean) / Math.sqrt(variance + 1e-5)) * g[i]! + b[i]!);
    const wm = head.tensors.get('memory_projection.weight')!;
    for (let o = 0; o < W; o++) {
      let sum = 0;
      for (let i = 0; i < H; i++) sum += wm[o * H + i]! * n[i]!;
      expect(Math.abs(sum - chunked.memory[5 * W + o]!)).toBeLessThan(1e-5);
    }
  });

  it('fp16-stored weights stay close to the reference', async () => {
    const rng = new Rng(31);
    let worst = 0;
    for (let r = 0; r < 6; r++) {
      const c = randomCase(rng, vocab, head.config.hidden_size);
      worst = Math.max(worst, compare(reference(c), await runOnnx('fp16', c, exactLexicon)).dp);
    }
    console.log(`head fp16 weights: max |Δp| ${worst.toExponential(2)}`);
    expect(worst).toBeLessThanOrEqual(FP16_MAX_DP);
  });

  it('lm_head rows at int8: effect on probabilities (measured)', async () => {
    const rng = new Rng(41);
    let worst = 0;
    for (let r = 0; r < 6; r++) {
      const c = randomCase(rng, vocab, head.config.hidden_size);
      const exact = await runOnnx('folded', c, exactLexicon);
      const int8 = await runOnnx('folded', c, int8Lexicon);
      exact.probabilities.forEach((p, k) =>
        p.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - int8.probabilities[k]![j]!)))),
      );
    }
    console.log(`lm_head int8 rows: max |Δp| ${worst.toExponential(2)} vs exact rows`);
    // Other ports measured 4.4e-4 on the real model (clef-recipe.md §4); the tiny head's
    // prior scale is 6, so rounding lex by ≤ scale/2 per element moves p by far less than 0.01.
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(2e-2);
  });
});

describe('head_decide inputs from a real encoded request', () => {
  // One token per code point, so a span's ids spell the text it covers.
  const tokenizer = { encode: (text: string) => Array.from(text, (c) => c.codePointAt(0)!) };
  const encoded = encodeRequest(
    tokenizer,
    {
      model: 'clef-flash',
      state: { order: 42, note: 'late' },
      questions: [
        { id: 'late', type: 'noul', instructions: 'Is it late?', criteria: [] },
        {
          id: 'tone',
          type: 'choice',
          instructions: null,
          criteria: [
            ['b', 'second'],
            ['a', null],
          ],
        },
      ],
    },
    { maxTokens: 10_000 },
  );
  const text = (ids: ArrayLike<number>): string => String.fromCodePoint(...Array.from(ids));

  it('spans become tail-relative averaging rows; one-hot membership; type ids', async () => {
    const inputs = await buildHeadInputs(encoded, {
      hidden: 2,
      spanMean: (ids) => Float32Array.of(ids.length, ids[0]!),
    });
    const { tailStart: start, tailLength: S, questionCount, optionCount } = inputs.layout;
    expect(start).toBe(encoded.stateEnd);
    expect(S).toBe(encoded.inputIds.length - encoded.stateEnd);
    expect([questionCount, optionCount]).toEqual([2, 4]);
    const tail = encoded.inputIds.slice(start);
    const covered = (weights: Float32Array, row: number): string => {
      const ids: number[] = [];
      for (let t = 0; t < S; t++) {
        const w = weights[row * S + t]!;
        if (w !== 0) {
          ids.push(tail[t]!);
          expect(w).toBeCloseTo(
            1 / weights.subarray(row * S, (row + 1) * S).filter((x) => x).length,
            7,
          );
        }
      }
      return text(ids);
    };
    const qw = inputs.question_weights.data as Float32Array;
    expect(inputs.question_weights.dims).toEqual([2, S]);
    expect([covered(qw, 0), covered(qw, 1)]).toEqual(['Is it late?', 'tone']);
    const ow = inputs.option_weights.data as Float32Array;
    expect([0, 1, 2, 3].map((o) => covered(ow, o))).toEqual([
      '{"description":"The proposition is true or the answer is yes.","option_id":"true"}',
      '{"description":"The proposition is false or the answer is no.","option_id":"false"}',
      '{"option_id":"a"}',
      '{"description":"second","option_id":"b"}',
    ]);
    expect(Array.from(inputs.option_question.data as Float32Array)).toEqual([
      1, 0, 1, 0, 0, 1, 0, 1,
    ]);
    expect(inputs.option_question.dims).toEqual([4, 2]);
    expect(Array.from(inputs.question_type.data as BigInt64Array)).toEqual([0n, 1n]);
    // lex rows: the source's span mean of each option's ids, in option order.
    const lex = inputs.lex.data as Float32Array;
    expect(inputs.lex.dims).toEqual([4, 2]);
    encoded.questions
      .flatMap((q) => q.optionSpans)
      .forEach(([s, e], o) => {
        expect([lex[2 * o], lex[2 * o + 1]]).toEqual([e - s, encoded.inputIds[s]]);
      });
  });

  it('refuses a span outside the tail', () => {
    const broken = structuredClone(encoded);
    broken.questions[0]!.span = [encoded.stateEnd - 1, encoded.stateEnd + 2];
    expect(() => headSpanInputs(broken)).toThrow(/outside the tail/);
  });
});
