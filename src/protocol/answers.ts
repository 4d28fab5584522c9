/**
 * From per-option logits to the System One response body (docs/system-one.md,
 * "Response body"), following the reference's `systemone_answer` in joint_schema_model.py.
 */
import { internalError } from './errors.js';
import { isJsonObject, objectEntries } from './json-value.js';
import { pythonRound } from './round.js';
import { pythonFloatRepr, pythonJsonString, renderValue } from './render.js';
import type {
  Answer,
  ChoiceAnswer,
  Description,
  JsonValue,
  NoulAnswer,
  ScoreAnswer,
  SystemOneResponse,
  Usage,
  ValidQuestion,
  ValidRequest,
} from './types.js';

const DECIMALS = 4;

/**
 * Softmax in float32 arithmetic, the way `logits.float().softmax(-1)` computes it:
 *   x_i = f32(logit_i); m = max_i x_i; e_i = f32(exp(f32(x_i - m)));
 *   s = f32 running sum of e_i in index order; p_i = f32(e_i / s).
 * Every intermediate is rounded to float32 (Float32Array stores / Math.fround). exp is taken in
 * double and rounded once, i.e. a correctly rounded expf in all but rare double-rounding cases.
 * torch's kernels differ in the last bits only (vectorized expf within ~1 ulp, tree-order sums,
 * on CPU a multiply by 1/s instead of a divide): |Δp| of a few 1e-8, which changes a 4-decimal
 * rounded answer only when p sits within that distance of a rounding boundary.
 */
export function softmaxF32(logits: ArrayLike<number>): Float32Array {
  const x = Float32Array.from(logits);
  if (x.length === 0) throw new Error('softmax of no logits');
  let max = x[0] as number;
  for (const v of x) if (v > max) max = v;
  const out = new Float32Array(x.length);
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    out[i] = Math.exp(Math.fround((x[i] as number) - max));
    sum = Math.fround(sum + (out[i] as number));
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** Sets an own enumerable property, so that an id such as "__proto__" stays plain data. */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function getOwn<T>(source: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(source, key) ? source[key] : undefined;
}

function round4(x: number): number {
  return pythonRound(x, DECIMALS);
}

/** Option id → probability (the float32 value as a double), for one question. */
function probabilityMap(
  question: ValidQuestion,
  optionIds: readonly string[],
  logits: ArrayLike<number>,
) {
  if (logits.length !== optionIds.length) {
    throw internalError(
      `question ${question.id}: ${logits.length} logits for ${optionIds.length} options`,
    );
  }
  const probabilities = softmaxF32(logits);
  const byId = new Map<string, number>();
  optionIds.forEach((id, index) => {
    const p = probabilities[index] as number;
    // NaN/Infinity logits would make an answer that is not JSON; fail loudly instead.
    if (!Number.isFinite(p)) throw internalError(`question ${question.id}: non-finite probability`);
    byId.set(id, p);
  });
  return byId;
}

function probabilityOf(byId: Map<string, number>, id: string, questionId: string): number {
  const p = byId.get(id);
  if (p === undefined)
    throw internalError(`question ${questionId}: no probability for option ${id}`);
  return p;
}

function noulAnswer(question: ValidQuestion, byId: Map<string, number>): NoulAnswer {
  return { type: 'noul', noul: round4(probabilityOf(byId, 'true', question.id)) };
}

function choiceAnswer(question: ValidQuestion, byId: Map<string, number>): ChoiceAnswer {
  // Request order, not prompt (sorted) order; the first largest wins, as Python's max() does.
  const names = question.criteria.map(([name]) => name);
  let best = names[0] as string;
  let bestP = probabilityOf(byId, best, question.id);
  const probabilities: Record<string, number> = {};
  for (const name of names) {
    const p = probabilityOf(byId, name, question.id);
    if (p > bestP) {
      best = name;
      bestP = p;
    }
    setOwn(probabilities, name, round4(p));
  }
  return { type: 'choice', choice: best, confidence: round4(bestP), probabilities };
}

function scoreAnswer(question: ValidQuestion, byId: Map<string, number>): ScoreAnswer {
  // Expectation and max in float64 over the float32 probabilities, summed from level 0 up,
  // like Python's sum(index * p) over the values torch's .tolist() hands back.
  let expectation = 0;
  let confidence = -Infinity;
  const legend: Record<string, Description> = {};
  const probabilities: Record<string, number> = {};
  question.criteria.forEach(([, description], level) => {
    const p = probabilityOf(byId, String(level), question.id);
    expectation += level * p;
    if (p > confidence) confidence = p;
    setOwn(legend, String(level), description);
    setOwn(probabilities, String(level), round4(p));
  });
  return {
    type: 'score',
    score: round4(expectation),
    confidence: round4(confidence),
    legend,
    probabilities,
  };
}

/**
 * What the answers need of an encoded request (Clef's `EncodedRequest` fits): each question's
 * option ids in the order its logits come, and the prompt's token counts for `usage`.
 */
export interface AnswerLayout {
  readonly questions: readonly { readonly id: string; readonly optionIds: readonly string[] }[];
  readonly inputIds: ArrayLike<number>;
  readonly truncatedStateTokens: number;
}

/**
 * Builds the response. `logitsPerQuestion[k]` holds question k's logits (request order) in the
 * encoded option order, `encoded.questions[k].optionIds`.
 */
export function buildResponse(
  request: ValidRequest,
  encoded: AnswerLayout,
  logitsPerQuestion: ArrayLike<number>[],
  model: string,
): SystemOneResponse {
  const count = request.questions.length;
  if (encoded.questions.length !== count || logitsPerQuestion.length !== count) {
    throw internalError(
      `${count} questions, ${encoded.questions.length} encoded, ${logitsPerQuestion.length} logit rows`,
    );
  }
  const answers: Record<string, Answer> = {};
  request.questions.forEach((question, k) => {
    const encodedQuestion = encoded.questions[k];
    if (encodedQuestion === undefined || encodedQuestion.id !== question.id) {
      throw internalError(`question ${question.id}: encoded question out of order`);
    }
    const byId = probabilityMap(
      question,
      encodedQuestion.optionIds,
      logitsPerQuestion[k] as ArrayLike<number>,
    );
    const answer =
      question.type === 'noul'
        ? noulAnswer(question, byId)
        : question.type === 'choice'
          ? choiceAnswer(question, byId)
          : scoreAnswer(question, byId);
    setOwn(answers, question.id, answer);
  });
  const usage: Usage = { input_tokens: encoded.inputIds.length, output_tokens: 0 };
  if (encoded.truncatedStateTokens > 0) usage.truncated_state_tokens = encoded.truncatedStateTokens;
  return { model, answers, usage };
}

// ---------------------------------------------------------------------------------------------
// Serialization: the exact text a Python host (Starlette's JSONResponse: json.dumps with
// ensure_ascii=False, separators=(",", ":"), no key sorting) writes for the response. Floats
// go through render.ts's pythonFloatRepr (`1.0`, `0.1234`), strings through pythonJsonString.

/** A description echoed as given: object keys in their order (not sorted), numbers as Python. */
function echoValue(v: JsonValue): string {
  if (typeof v === 'string') return pythonJsonString(v);
  if (Array.isArray(v)) return `[${v.map(echoValue).join(',')}]`;
  if (isJsonObject(v)) {
    const members = objectEntries(v).map(
      ([k, item]) => `${pythonJsonString(k)}:${echoValue(item)}`,
    );
    return `{${members.join(',')}}`;
  }
  // Scalars (numbers, PyNumbers, booleans, null) have no keys to sort: render as the prompt does.
  return renderValue(v);
}

function serializeAnswer(question: ValidQuestion, answer: Answer): string {
  if (answer.type !== question.type) {
    throw internalError(`question ${question.id}: answer type ${answer.type} for ${question.type}`);
  }
  const f = pythonFloatRepr;
  const probabilityMembers = (names: string[], probabilities: Record<string, number>) =>
    names
      .map((name) => {
        const p = getOwn(probabilities, name);
        if (p === undefined) throw internalError(`question ${question.id}: no probability ${name}`);
        return `${pythonJsonString(name)}:${f(p)}`;
      })
      .join(',');
  const names = question.criteria.map(([name]) => name);
  switch (answer.type) {
    case 'noul':
      return `{"type":"noul","noul":${f(answer.noul)}}`;
    case 'choice':
      return (
        `{"type":"choice","choice":${pythonJsonString(answer.choice)},` +
        `"confidence":${f(answer.confidence)},` +
        `"probabilities":{${probabilityMembers(names, answer.probabilities)}}}`
      );
    case 'score': {
      const legend = names
        .map(
          (level) =>
            `${pythonJsonString(level)}:${echoValue(getOwn(answer.legend, level) ?? null)}`,
        )
        .join(',');
      return (
        `{"type":"score","score":${f(answer.score)},"confidence":${f(answer.confidence)},` +
        `"legend":{${legend}},"probabilities":{${probabilityMembers(names, answer.probabilities)}}}`
      );
    }
  }
}

/**
 * The response as JSON text, with `answers` in the request's question order and choice
 * probabilities in the request's criteria order (a JS object would move integer-like keys
 * first), floats written as Python writes them.
 */
export function serializeResponse(request: ValidRequest, response: SystemOneResponse): string {
  const answers = request.questions.map((question) => {
    const answer = getOwn(response.answers, question.id);
    if (answer === undefined) throw internalError(`no answer for question ${question.id}`);
    return `${pythonJsonString(question.id)}:${serializeAnswer(question, answer)}`;
  });
  const { usage } = response;
  const truncated =
    usage.truncated_state_tokens !== undefined
      ? `,"truncated_state_tokens":${usage.truncated_state_tokens}`
      : '';
  return (
    `{"model":${pythonJsonString(response.model)},"answers":{${answers.join(',')}},` +
    `"usage":{"input_tokens":${usage.input_tokens},"output_tokens":${usage.output_tokens}${truncated}}}`
  );
}
