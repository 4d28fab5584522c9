/**
 * The Chat Completions request members a decision can honour, and `messages` as Clef's state.
 *
 * Required: `model`, `messages`, `response_format` (json_schema; see ./chat-schema.ts), and
 * `temperature: 0` — Clef picks the most probable option, which is what temperature 0 means; at
 * OpenAI's default temperature (1) the answer would be a sample, which this does not fake.
 *
 * Refused (400 `unsupported_value`, each at its param): `stream: true`, `stream_options`,
 * `n` > 1, `tools`/`functions` (non-empty), `tool_choice`/`function_call` other than 'none',
 * `logprobs: true`, `top_logprobs`, `audio`, `modalities` other than ['text'], `prediction`,
 * `web_search_options`, `moderation`, a non-empty `logit_bias` or `stop`, non-zero
 * `frequency_penalty` / `presence_penalty`: each needs generated text, or changes it.
 *
 * Accepted and ignored, as they change no decision: `metadata`, `store`, `user`,
 * `safety_identifier`, `prompt_cache_key`, `prompt_cache_options`, `prompt_cache_retention`,
 * `service_tier`, `seed`, `top_p` (irrelevant at temperature 0), `verbosity`,
 * `reasoning_effort`, `parallel_tool_calls`, `max_tokens` / `max_completion_tokens` (nothing is
 * generated, so no cap is reached). Anything else: 400 unknown_parameter.
 *
 * Messages: the state is the `messages` array as written (roles, names, contents), so the
 * model reads the conversation. Text parts and an assistant's refusal parts are text; image,
 * audio and file parts, assistant `tool_calls`/`function_call`/`audio`, and `tool`/`function`
 * messages are refused at their param (Clef reads text and has no tools).
 */
import type { JsonMap, JsonValue } from '../protocol/types.js';
import { at, Checker, fieldsOf, index, numberOf, type Fields } from './openai-check.js';

const IGNORED = [
  'metadata',
  'store',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'service_tier',
  'seed',
  'top_p',
  'verbosity',
  'reasoning_effort',
  'parallel_tool_calls',
  'max_tokens',
  'max_completion_tokens',
];

const unset = (v: unknown) => v === undefined || v === null;
const isZero = (v: unknown) => unset(v) || numberOf(v) === 0;
const isEmpty = (v: unknown) =>
  unset(v) || (Array.isArray(v) && v.length === 0) || fieldsOf(v)?.size === 0;

/** member → [passes when, why it is refused]. */
const REFUSED: Record<string, [(v: unknown) => boolean, string]> = {
  stream: [(v) => unset(v) || v === false, 'streaming is not supported: a decision comes whole'],
  stream_options: [unset, 'streaming is not supported'],
  n: [(v) => unset(v) || numberOf(v) === 1, 'one decision is made per request, so n must be 1'],
  tools: [isEmpty, 'this model has no tools'],
  functions: [isEmpty, 'this model has no tools'],
  tool_choice: [
    (v) => unset(v) || v === 'none',
    "this model has no tools; only 'none' is accepted",
  ],
  function_call: [
    (v) => unset(v) || v === 'none',
    "this model has no tools; only 'none' is accepted",
  ],
  logprobs: [(v) => unset(v) || v === false, 'there are no generated tokens to report'],
  top_logprobs: [unset, 'there are no generated tokens to report'],
  audio: [unset, 'this model writes no audio'],
  modalities: [
    (v) => unset(v) || (Array.isArray(v) && v.every((m) => m === 'text')),
    "only ['text'] is accepted",
  ],
  prediction: [unset, 'there is no generated text to predict'],
  web_search_options: [unset, 'this model does not search'],
  moderation: [unset, 'this server does not moderate'],
  logit_bias: [isEmpty, 'there are no generated tokens to bias'],
  stop: [isEmpty, 'there is no generated text to stop'],
  frequency_penalty: [isZero, 'there is no generated text to penalise'],
  presence_penalty: [isZero, 'there is no generated text to penalise'],
};

/** Top-level members other than model, messages and response_format (see the header). */
export function checkChatParams(f: Fields, c: Checker): void {
  const known = [
    'model',
    'messages',
    'response_format',
    'temperature',
    ...IGNORED,
    ...Object.keys(REFUSED),
  ];
  c.keys(f, known, '');
  if (numberOf(f.get('temperature')) !== 0) {
    c.unsupported(
      'temperature',
      'this model picks the most probable option, which is temperature 0; send temperature: 0',
    );
  }
  for (const [key, [passes, why]] of Object.entries(REFUSED)) {
    if (f.has(key) && !passes(f.get(key))) c.unsupported(key, why);
  }
}

const NON_TEXT = ['image_url', 'input_audio', 'file'];

function parts(v: unknown, allowed: readonly string[], param: string, c: Checker): void {
  if (typeof v === 'string') return;
  const list = c.array(v, param);
  list?.forEach((p, i) => {
    const pp = index(param, i);
    const f = c.object(p, pp);
    if (f === undefined) return;
    const type = f.get('type');
    if (typeof type === 'string' && NON_TEXT.includes(type)) {
      c.unsupported(pp, `this model reads text only, not ${type} parts`);
    } else if (typeof type !== 'string' || !allowed.includes(type)) {
      c.invalidValue(at(pp, 'type'), `expected ${allowed.map((t) => `'${t}'`).join(' or ')}`);
    } else {
      const member = type === 'refusal' ? 'refusal' : 'text';
      c.keys(f, ['type', member], pp);
      if (c.required(f, member, pp)) c.string(f.get(member), at(pp, member));
    }
  });
}

function message(v: unknown, param: string, c: Checker): void {
  const f = c.object(v, param);
  if (f === undefined || !c.required(f, 'role', param)) return;
  const role = f.get('role');
  if (role === 'tool' || role === 'function') {
    c.unsupported(param, `this model has no tools, so it cannot read a ${role} message`);
    return;
  }
  if (role === 'assistant') {
    c.keys(
      f,
      ['role', 'content', 'name', 'refusal', 'audio', 'tool_calls', 'function_call'],
      param,
    );
    if (!unset(f.get('audio'))) c.unsupported(at(param, 'audio'), 'this model reads text only');
    if (!isEmpty(f.get('tool_calls')))
      c.unsupported(at(param, 'tool_calls'), 'this model has no tools');
    if (!unset(f.get('function_call')))
      c.unsupported(at(param, 'function_call'), 'this model has no tools');
    c.optionalString(f, 'refusal', param);
    if (!unset(f.get('content')))
      parts(f.get('content'), ['text', 'refusal'], at(param, 'content'), c);
  } else if (role === 'system' || role === 'developer' || role === 'user') {
    c.keys(f, ['role', 'content', 'name'], param);
    if (c.required(f, 'content', param)) parts(f.get('content'), ['text'], at(param, 'content'), c);
  } else {
    c.invalidValue(at(param, 'role'), "expected 'system', 'developer', 'user' or 'assistant'");
    return;
  }
  c.optionalString(f, 'name', param);
}

/** The state for `messages`: the array as written, or undefined after reporting. */
export function messagesToState(v: unknown, c: Checker): JsonValue | undefined {
  const list = c.array(v, 'messages');
  if (list === undefined) return undefined;
  if (list.length === 0)
    c.add(
      'messages',
      'array_below_min_length',
      "Invalid 'messages': expected at least 1 message, but got none.",
    );
  const before = c.problems.length;
  list.forEach((m, i) => message(m, index('messages', i), c));
  if (c.problems.length !== before) return undefined;
  return list as JsonMap[];
}
