/**
 * Reading a System One response body, whichever form it comes in: the engine's object, a
 * `JSON.parse` of its text, or `parseRequestJson`'s Maps and PyNumbers. Anything missing or of
 * the wrong kind is an engine bug, reported as an OpenAI-dialect 500.
 */
import { fieldsOf, numberOf } from './openai-check.js';
import { serverError } from './openai-errors.js';

/** `v[key]`, or a 500 naming `what`. */
export function member(v: unknown, key: string, what: string): unknown {
  const f = fieldsOf(v);
  if (f === undefined || !f.has(key)) throw serverError(`The engine's response has no ${what}`);
  return f.get(key);
}

/** `v[key]` as a finite number, or a 500 naming `what`. */
export function numberMember(v: unknown, key: string, what: string): number {
  const n = numberOf(member(v, key, what));
  if (n === undefined || !Number.isFinite(n)) {
    throw serverError(`The engine's ${what} is not a number`);
  }
  return n;
}

/**
 * The response's input token count. The OpenAI dialects never ask the engine to truncate the
 * state, so a response saying it did is refused rather than passed on as a full answer.
 */
export function inputTokens(response: unknown): number {
  const usage = member(response, 'usage', 'usage');
  if (fieldsOf(usage)?.has('truncated_state_tokens')) {
    throw serverError('The engine truncated the input, which this API never asks for');
  }
  const n = numberMember(usage, 'input_tokens', 'input token count');
  if (!Number.isSafeInteger(n) || n < 0)
    throw serverError("The engine's input token count is invalid");
  return n;
}
