/**
 * OpenAI's Decisions API (`openai` SDK `client.decisions.create`, POST /v1/decisions) onto the
 * System One engine call, and its answers back. Pure: no DOM, no Node.
 *
 * Recognition (`isOpenAiDecisionsBody`): an object whose `questions` is an array, or which has
 * `input` and no `state`. A valid System One body never matches (its `questions` is an object
 * and its `state` is required), so System One bodies on the same path keep working.
 *
 * Request (`toSystemOneRequest`): `model` as it is (checked against `options.models`: 404
 * model_not_found); `input` → `state` and questions as ./openai-input.ts and
 * ./openai-questions.ts describe. `prompt_cache_key`, `prompt_cache_options` and
 * `safety_identifier` are checked and then ignored: they steer OpenAI's caching and abuse
 * tracking and change no answer. Any other member: 400 unknown_parameter. Every problem of a
 * body is listed in one 400 (./openai-errors.ts). The request is in the lossless parser's form
 * (Maps all the way down), so `validateRequest` and a route backend take it as they take a
 * parsed body, and question and option order survive.
 *
 * Response (`fromSystemOneResponse`): exactly the SDK's `Decision`: `{answers, model, usage}`
 * (the SDK type has no id, object or created). Answers in question order, each with its `name`:
 * predicate `probability` = noul; choice `choice` = System One's choice as its typed value,
 * `probabilities` in the request's choices order; score `score` and `confidence` as System One
 * computes them over levels 0..n-1 (so `score` is the expected level index), `probabilities`
 * `[{label, value: level index, probability}]`. Clef always answers, so no `refusal` answer is
 * ever produced. Usage: input tokens as counted, output 0, total = input, details all 0 (unless
 * the caller passes cache counts). The engine is never asked to truncate for this dialect; a
 * response that says it truncated is refused as a 500 rather than passed on.
 */
import type { JsonMap, JsonValue, ModelLimits, SystemOneResponse } from '../protocol/types.js';
import { bodyFields, Checker, fieldsOf, mergeLimits, type Fields } from './openai-check.js';
import { invalidRequest, modelNotFound, serverError } from './openai-errors.js';
import { inputToState } from './openai-input.js';
import { inputTokens, member, numberMember } from './response-read.js';
import { toQuestions, type ChoiceValue, type QuestionMapping } from './openai-questions.js';

export type { ChoiceValue, QuestionMapping } from './openai-questions.js';

export interface DecisionsOptions {
  /** Served model names and aliases; when given, `model` must be one of them. */
  models?: readonly string[];
  /** The model's limits (questions, choices, levels); Clef-flash's by default. */
  limits?: Partial<ModelLimits>;
}

export interface DecisionsMapping {
  model: string;
  /** One entry per OpenAI question, in order (index = position in `questions`). */
  questions: QuestionMapping[];
}

export interface OpenAiPredicateAnswer {
  type: 'predicate';
  name: string | null;
  probability: number;
}
export interface OpenAiChoiceAnswer {
  type: 'choice';
  name: string | null;
  choice: ChoiceValue;
  confidence: number;
  probabilities: Array<{ value: ChoiceValue; probability: number }>;
}
export interface OpenAiScoreAnswer {
  type: 'score';
  name: string | null;
  score: number;
  confidence: number;
  probabilities: Array<{ label: string; value: number; probability: number }>;
}
export type OpenAiAnswer = OpenAiPredicateAnswer | OpenAiChoiceAnswer | OpenAiScoreAnswer;
export interface OpenAiDecisionUsage {
  input_tokens: number;
  input_tokens_details: { cache_write_tokens: number; cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}
export interface OpenAiDecision {
  answers: OpenAiAnswer[];
  model: string;
  usage: OpenAiDecisionUsage;
}

/** Cache counts, when the engine reports them; zero otherwise. */
export interface DecisionUsageExtra {
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

const TOP_FIELDS = [
  'model',
  'input',
  'questions',
  'prompt_cache_key',
  'prompt_cache_options',
  'safety_identifier',
];

/** Whether a POST /v1/decisions body is OpenAI's shape rather than System One's (see the header). */
export function isOpenAiDecisionsBody(body: unknown): boolean {
  const f = fieldsOf(body);
  if (f === undefined) return false;
  return Array.isArray(f.get('questions')) || (f.has('input') && !f.has('state'));
}

function checkCacheOptions(f: Fields, c: Checker): void {
  const v = f.get('prompt_cache_options');
  if (v === undefined || v === null) return;
  const o = c.object(v, 'prompt_cache_options');
  if (o === undefined) return;
  c.keys(o, ['mode', 'ttl'], 'prompt_cache_options');
  c.optionalOneOf(o, 'mode', ['implicit', 'explicit'], 'prompt_cache_options');
  c.optionalOneOf(o, 'ttl', ['30m'], 'prompt_cache_options');
}

/**
 * The System One request for an OpenAI Decisions body, and the mapping its answers go back
 * through. Throws an OpenAiError: 400 listing every problem, 404 for an unserved model.
 */
export function toSystemOneRequest(
  body: unknown,
  options: DecisionsOptions = {},
): { request: JsonMap; mapping: DecisionsMapping } {
  const c = new Checker();
  const f = bodyFields(body);
  c.keys(f, TOP_FIELDS, '');
  const model =
    c.required(f, 'model', '') && c.string(f.get('model'), 'model')
      ? (f.get('model') as string)
      : undefined;
  if (model === '') c.invalidValue('model', 'expected a model name');
  const state = c.required(f, 'input', '') ? inputToState(f.get('input'), c) : undefined;
  const limits = mergeLimits(options.limits);
  const questions = c.required(f, 'questions', '')
    ? toQuestions(f.get('questions'), limits, c)
    : undefined;
  c.optionalString(f, 'prompt_cache_key', '');
  c.optionalString(f, 'safety_identifier', '');
  checkCacheOptions(f, c);
  if (!c.ok || model === undefined || state === undefined || questions === undefined) {
    throw invalidRequest(c.problems);
  }
  if (options.models !== undefined && !options.models.includes(model)) throw modelNotFound(model);
  const request: JsonMap = new Map<string, JsonValue>([
    ['model', model],
    ['state', state],
    ['questions', questions.questions],
  ]);
  return { request, mapping: { model, questions: questions.mapping } };
}

// ---------------------------------------------------------------------------------------------

function answerOf(q: QuestionMapping, answers: unknown): OpenAiAnswer {
  const a = member(answers, q.id, `answer for question ${q.id}`);
  const expected = q.type === 'predicate' ? 'noul' : q.type;
  if (member(a, 'type', `type for question ${q.id}`) !== expected) {
    throw serverError(`The engine answered question ${q.id} with another type`);
  }
  const what = (k: string) => `${k} for question ${q.id}`;
  if (q.type === 'predicate') {
    return { type: 'predicate', name: q.name, probability: numberMember(a, 'noul', what('noul')) };
  }
  const probs = member(a, 'probabilities', what('probabilities'));
  const confidence = numberMember(a, 'confidence', what('confidence'));
  if (q.type === 'choice') {
    const chosen = member(a, 'choice', what('choice'));
    const option = q.options.find((o) => o.id === chosen);
    if (option === undefined)
      throw serverError(`The engine chose an unknown option for question ${q.id}`);
    const probabilities = q.options.map((o) => ({
      value: o.value,
      probability: numberMember(probs, o.id, what(`probability of ${o.id}`)),
    }));
    return { type: 'choice', name: q.name, choice: option.value, confidence, probabilities };
  }
  const probabilities = q.labels.map((label, i) => ({
    label,
    value: i,
    probability: numberMember(probs, String(i), what(`probability of level ${i}`)),
  }));
  return {
    type: 'score',
    name: q.name,
    score: numberMember(a, 'score', what('score')),
    confidence,
    probabilities,
  };
}

/**
 * The OpenAI Decision for a System One response to `toSystemOneRequest`'s request. Throws an
 * OpenAiError 500 when the response does not fit the mapping (an engine bug).
 */
export function fromSystemOneResponse(
  mapping: DecisionsMapping,
  response: SystemOneResponse | JsonValue,
  extra: DecisionUsageExtra = {},
): OpenAiDecision {
  const tokens = inputTokens(response);
  const answers = member(response, 'answers', 'answers');
  return {
    answers: mapping.questions.map((q) => answerOf(q, answers)),
    model: mapping.model,
    usage: {
      input_tokens: tokens,
      input_tokens_details: {
        cache_write_tokens: extra.cacheWriteTokens ?? 0,
        cached_tokens: extra.cachedTokens ?? 0,
      },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: tokens,
    },
  };
}
