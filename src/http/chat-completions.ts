/**
 * Chat Completions (POST /v1/chat/completions) where what is asked is a decision: a
 * `response_format` json_schema whose leaves are all decisions, at temperature 0. One System One
 * question per leaf (./chat-schema.ts), the `messages` as the state and the other members as
 * ./chat-params.ts says; the answer is an ordinary `chat.completion` whose message content is
 * the JSON object of the chosen values, keys in schema order, valid against the schema.
 *
 * Anything that needs generated text (no response_format, a free string, tools, n > 1,
 * streaming, ...) is a 400 in OpenAI's error shape whose message ends with DECIDES_NOTE: this
 * model decides and does not write text, and which schema would work.
 *
 * Usage: `prompt_tokens` = the model input's tokens, `completion_tokens` 0 (nothing is
 * generated; the content is written from the decisions), `total_tokens` = prompt_tokens.
 */
import type { JsonMap, JsonValue, ModelLimits, SystemOneResponse } from '../protocol/types.js';
import { checkChatParams, messagesToState } from './chat-params.js';
import { DECISION_CODE, schemaQuestions, type SchemaNode } from './chat-schema.js';
import { at, bodyFields, Checker, mergeLimits } from './openai-check.js';
import { invalidRequest, modelNotFound, serverError } from './openai-errors.js';
import { inputTokens, member, numberMember } from './response-read.js';

export type { SchemaNode } from './chat-schema.js';

export const DECIDES_NOTE =
  'This model decides and does not write text. Ask with response_format ' +
  '{"type":"json_schema","json_schema":{"name":...,"schema":...}} at temperature 0, where every ' +
  'leaf of the schema is a decision: a string with an enum, a boolean, or an integer with a ' +
  'minimum and a maximum (2 to 10 values), in objects of those. For example: ' +
  '{"type":"object","properties":{"label":{"type":"string","enum":["spam","ham"]},' +
  '"urgent":{"type":"boolean"},"priority":{"type":"integer","minimum":1,"maximum":5}},' +
  '"required":["label","urgent","priority"]}.';

export interface ChatOptions {
  /** Served model names and aliases; when given, `model` must be one of them. */
  models?: readonly string[];
  limits?: Partial<ModelLimits>;
}

export interface ChatDecisionPlan {
  model: string;
  /** The System One request, in the lossless parser's form (Maps, order kept). */
  request: JsonMap;
  /** The schema as decided: where each question's answer goes. */
  root: SchemaNode;
}

export interface OpenAiChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string; refusal: null; annotations: [] };
    logprobs: null;
    finish_reason: 'stop';
  }>;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
    completion_tokens_details: {
      reasoning_tokens: number;
      audio_tokens: number;
      accepted_prediction_tokens: number;
      rejected_prediction_tokens: number;
    };
  };
}

const SCHEMA_PARAM = 'response_format.json_schema.schema';

function responseFormat(v: unknown, limits: ModelLimits, c: Checker) {
  if (v === undefined || v === null) {
    c.unsupported(
      'response_format',
      'without a json_schema response format the answer would be free text',
    );
    return undefined;
  }
  const f = c.object(v, 'response_format');
  if (f === undefined || !c.required(f, 'type', 'response_format')) return undefined;
  const type = f.get('type');
  if (type !== 'json_schema') {
    c.unsupported(
      'response_format.type',
      `${JSON.stringify(type)} asks for generated text; use 'json_schema'`,
    );
    return undefined;
  }
  c.keys(f, ['type', 'json_schema'], 'response_format');
  const js = c.required(f, 'json_schema', 'response_format')
    ? c.object(f.get('json_schema'), 'response_format.json_schema')
    : undefined;
  if (js === undefined) return undefined;
  const param = 'response_format.json_schema';
  c.keys(js, ['name', 'description', 'schema', 'strict'], param);
  if (c.required(js, 'name', param)) c.string(js.get('name'), at(param, 'name'));
  c.optionalString(js, 'description', param);
  if (!js.has('schema')) {
    c.unsupported(SCHEMA_PARAM, 'without a schema the answer would be free JSON');
    return undefined;
  }
  return schemaQuestions(js.get('schema'), SCHEMA_PARAM, limits, c);
}

/**
 * The System One request for a Chat Completions body and where its answers go. Throws an
 * OpenAiError: 400 listing every problem (ending with DECIDES_NOTE when the body asks for
 * something only generated text gives), 404 for an unserved model.
 */
export function planChatDecision(body: unknown, options: ChatOptions = {}): ChatDecisionPlan {
  const f = bodyFields(body);
  const c = new Checker();
  const model =
    c.required(f, 'model', '') && c.string(f.get('model'), 'model')
      ? (f.get('model') as string)
      : undefined;
  if (model === '') c.invalidValue('model', 'expected a model name');
  const state = c.required(f, 'messages', '') ? messagesToState(f.get('messages'), c) : undefined;
  checkChatParams(f, c);
  const schema = responseFormat(f.get('response_format'), mergeLimits(options.limits), c);
  if (!c.ok || model === undefined || state === undefined || schema === undefined) {
    const asksForText = c.problems.some(
      (p) => p.code === 'unsupported_value' || p.code === DECISION_CODE,
    );
    throw invalidRequest(c.problems, asksForText ? DECIDES_NOTE : undefined);
  }
  if (options.models !== undefined && !options.models.includes(model)) throw modelNotFound(model);
  const request: JsonMap = new Map<string, JsonValue>([
    ['model', model],
    ['state', state],
    ['questions', schema.questions],
  ]);
  return { model, request, root: schema.root };
}

/** The decided value of one leaf, as JSON text. */
function leafJson(node: Exclude<SchemaNode, { kind: 'object' }>, answers: unknown): string {
  const a = member(answers, node.id, `answer for question ${node.id}`);
  const type = member(a, 'type', `type for question ${node.id}`);
  const expected = node.kind === 'boolean' ? 'noul' : node.kind === 'enum' ? 'choice' : 'score';
  if (type !== expected)
    throw serverError(`The engine answered question ${node.id} with another type`);
  if (node.kind === 'boolean')
    return String(numberMember(a, 'noul', `noul for question ${node.id}`) >= 0.5);
  if (node.kind === 'enum') {
    const choice = member(a, 'choice', `choice for question ${node.id}`);
    if (typeof choice !== 'string' || !node.values.includes(choice)) {
      throw serverError(`The engine chose an unknown option for question ${node.id}`);
    }
    return JSON.stringify(choice);
  }
  const probs = member(a, 'probabilities', `probabilities for question ${node.id}`);
  let best = 0;
  let bestP = -Infinity;
  for (let i = 0; i <= node.max - node.min; i++) {
    const p = numberMember(probs, String(i), `probability of level ${i} for question ${node.id}`);
    if (p > bestP) [best, bestP] = [i, p];
  }
  return String(node.min + best);
}

/** The object's JSON text, members in schema order (a JS object would move "1" before "b"). */
function objectJson(node: SchemaNode, answers: unknown): string {
  if (node.kind !== 'object') return leafJson(node, answers);
  const members = node.properties.map(
    ([k, child]) => `${JSON.stringify(k)}:${objectJson(child, answers)}`,
  );
  return `{${members.join(',')}}`;
}

export interface ChatCompletionOptions {
  /** The completion's id; a fresh `chatcmpl-…` by default. */
  id?: string;
  /** Unix seconds; now by default. */
  created?: number;
  cachedTokens?: number;
}

function freshId(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return `chatcmpl-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The chat.completion for the System One response to `plan.request`. Throws an OpenAiError 500
 * when the response does not fit the plan (an engine bug).
 */
export function buildChatCompletion(
  plan: ChatDecisionPlan,
  response: SystemOneResponse | JsonValue,
  options: ChatCompletionOptions = {},
): OpenAiChatCompletion {
  const tokens = inputTokens(response);
  const content = objectJson(plan.root, member(response, 'answers', 'answers'));
  return {
    id: options.id ?? freshId(),
    object: 'chat.completion',
    created: options.created ?? Math.floor(Date.now() / 1000),
    model: plan.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: tokens,
      completion_tokens: 0,
      total_tokens: tokens,
      prompt_tokens_details: { cached_tokens: options.cachedTokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  };
}
