/**
 * Inputs of the joint head's ONNX graphs (built by src/build/convert/head.ts), from an encoded
 * request and the lm_head rows. Plain typed arrays and dims: no onnxruntime import, so the
 * engine wraps them in whatever tensors its back end uses.
 *
 * ## head_memory.onnx (per chunk of the backbone's output, any chunking)
 *   in   hidden       float32 [1, chunk, hidden_size]  final normed backbone hidden states
 *   in   past_memory  float32 [1, past, width]         the rows so far (0 rows at the start)
 *   out  memory       float32 [1, past + chunk, width] past_memory, then
 *                                                       memory_projection(hidden_norm(hidden))
 * Row-wise, so rows computed per chunk equal rows computed over the whole input. The engine
 * runs it over positions [0, stateEnd) (prefix + state) and keeps the rows, concatenated in
 * position order, as the prefix cache entry's head memory (width floats per token).
 *
 * ## head_decide.onnx (once per request)
 *   in   memory            float32 [1, prefix, width]     head_memory rows of positions
 *                                                          [0, stateEnd), prefix = stateEnd ≥ 1
 *   in   hidden            float32 [1, tail, hidden_size] backbone hidden states of positions
 *                                                          [stateEnd, T): schema + suffix
 *   in   question_weights  float32 [questions, tail]      row k: 1/len on question k's span
 *   in   option_weights    float32 [options, tail]        row o: 1/len on option o's span
 *   in   option_question   float32 [options, questions]   one-hot: option o belongs to k
 *   in   question_type     int64   [questions]            noul 0, choice 1, score 2
 *   in   lex               float32 [options, hidden_size] mean lm_head row over option o's
 *                                                          span token ids
 *   out  logits            float32 [options]              the reference head's logits
 *   out  probabilities     float32 [options]              float32 softmax within each question
 * Spans are relative to stateEnd (tail position = absolute position − stateEnd). Options are
 * listed question by question, each question's in prompt order. Every span and the global
 * vector (the last token) lie in the tail, since the prompt is prefix, state, schema, suffix.
 * Variable question and option counts need no per-request graph: the weight and one-hot
 * matrices carry the structure.
 *
 * ## Engine flow
 * Cold: backbone over [0, stateEnd) in chunks (one chunk boundary at stateEnd, where the
 * backbone state is cached) → head_memory per chunk → rows concatenated into `memory`; backbone
 * over the tail → head_decide. Prefix-cache hit (same model, prefix and state): reuse the cached
 * backbone state and `memory`; run only the tail through the backbone, then head_decide.
 * On WebGPU `memory` stays a GPU buffer (preferredOutputLocation 'gpu-buffer'), fed back as
 * `past_memory` and finally into head_decide; only `logits` (4 bytes per option) is read back.
 * Sizes to budget: `memory` is 4 · width bytes per prefix token (4 KiB for Clef-flash); the
 * attention scores inside head_decide are 4 · heads · options · (prefix + tail) bytes per layer
 * (e.g. 16 heads, 100 options, 65,536 tokens: 420 MB), below WebGPU's storage binding limit
 * only while options × tokens stays under about 1.6e7 (1 GiB binding).
 */
import type { EncodedRequest } from './prompt.js';

export interface HeadTensorData {
  type: 'float32' | 'int64';
  data: Float32Array | BigInt64Array;
  dims: number[];
}

/** head_decide's request-dependent inputs (memory and hidden come from the engine's tensors). */
export interface HeadRequestInputs {
  question_weights: HeadTensorData;
  option_weights: HeadTensorData;
  option_question: HeadTensorData;
  question_type: HeadTensorData;
  lex: HeadTensorData;
}

export interface HeadRequestLayout {
  /** First tail position: hidden states [tailStart, tailStart + tailLength) feed head_decide. */
  tailStart: number;
  tailLength: number;
  questionCount: number;
  optionCount: number;
  /** Index of each question's first option in the flat option list, plus the total at the end. */
  optionOffsets: number[];
}

/** Where the lexical vectors come from (`Lexicon` or `RangeLexicon` in ./lexicon.ts). */
export interface SpanMeanSource {
  readonly hidden: number;
  spanMean(ids: ArrayLike<number>): Float32Array | Promise<Float32Array>;
}

function headRequestLayout(encoded: EncodedRequest): HeadRequestLayout {
  const tailStart = encoded.stateEnd;
  const tailLength = encoded.inputIds.length - tailStart;
  if (tailStart < 1 || tailLength < 1) throw new Error('head: empty prefix or tail');
  const optionOffsets = [0];
  for (const question of encoded.questions) {
    optionOffsets.push(
      (optionOffsets[optionOffsets.length - 1] as number) + question.optionSpans.length,
    );
  }
  return {
    tailStart,
    tailLength,
    questionCount: encoded.questions.length,
    optionCount: optionOffsets[optionOffsets.length - 1] as number,
    optionOffsets,
  };
}

/** Writes 1/len over [start, end) − tailStart into `row`. */
function fillSpan(row: Float32Array, [start, end]: [number, number], tailStart: number): void {
  if (start < tailStart || end > tailStart + row.length || end <= start) {
    throw new Error(`head: span [${start}, ${end}) outside the tail starting at ${tailStart}`);
  }
  const weight = 1 / (end - start);
  row.fill(weight, start - tailStart, end - tailStart);
}

/** The inputs that need no lm_head rows. */
export function headSpanInputs(
  encoded: EncodedRequest,
): Omit<HeadRequestInputs, 'lex'> & { layout: HeadRequestLayout } {
  const layout = headRequestLayout(encoded);
  const { tailStart, tailLength: S, questionCount: Q, optionCount: O } = layout;
  const questionWeights = new Float32Array(Q * S);
  const optionWeights = new Float32Array(O * S);
  const optionQuestion = new Float32Array(O * Q);
  const questionType = new BigInt64Array(Q);
  encoded.questions.forEach((question, k) => {
    fillSpan(questionWeights.subarray(k * S, (k + 1) * S), question.span, tailStart);
    questionType[k] = BigInt(question.typeId);
    question.optionSpans.forEach((span, j) => {
      const o = (layout.optionOffsets[k] as number) + j;
      fillSpan(optionWeights.subarray(o * S, (o + 1) * S), span, tailStart);
      optionQuestion[o * Q + k] = 1;
    });
  });
  return {
    layout,
    question_weights: { type: 'float32', data: questionWeights, dims: [Q, S] },
    option_weights: { type: 'float32', data: optionWeights, dims: [O, S] },
    option_question: { type: 'float32', data: optionQuestion, dims: [O, Q] },
    question_type: { type: 'int64', data: questionType, dims: [Q] },
  };
}

/** The lexical vectors [options, hidden]: mean lm_head row over each option span's ids. */
async function headLexicalVectors(
  encoded: EncodedRequest,
  lexicon: SpanMeanSource,
): Promise<HeadTensorData> {
  const spans = encoded.questions.flatMap((question) => question.optionSpans);
  const H = lexicon.hidden;
  const lex = new Float32Array(spans.length * H);
  const means = await Promise.all(
    spans.map(([start, end]) => lexicon.spanMean(encoded.inputIds.slice(start, end))),
  );
  means.forEach((mean, o) => lex.set(mean, o * H));
  return { type: 'float32', data: lex, dims: [spans.length, H] };
}

/** Every request-dependent head_decide input, plus the layout to read the outputs back. */
export async function buildHeadInputs(
  encoded: EncodedRequest,
  lexicon: SpanMeanSource,
): Promise<HeadRequestInputs & { layout: HeadRequestLayout }> {
  return { ...headSpanInputs(encoded), lex: await headLexicalVectors(encoded, lexicon) };
}

/** Splits the flat per-option outputs (logits or probabilities) back into questions. */
export function splitByQuestion(
  layout: HeadRequestLayout,
  values: ArrayLike<number>,
): Float32Array[] {
  const flat = Float32Array.from(values);
  return layout.optionOffsets
    .slice(0, -1)
    .map((start, k) => flat.slice(start, layout.optionOffsets[k + 1] as number));
}
