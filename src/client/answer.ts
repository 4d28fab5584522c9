/**
 * A decision's answer on the page's side: the worker sends the body once, as its JSON text
 * (AnswerWire), and the page reads the response object back from it. The text carries every
 * number exactly (the shortest digits that read back to it) and JSON.parse makes its keys the
 * same own properties, in the same order, as the engine's object. The one part the text does
 * not carry as given is a score's `legend`, which echoes the request's level descriptions: a body
 * parsed from text (`parseRequestJson`) holds Maps and PyNumbers there, so the legend takes a
 * copy of the request's own values, as the engine's response (a structured clone) held them.
 */
import type { SystemOneResponse } from '../protocol/types.js';
import type { AnswerWire, DecisionWire } from '../wire/wire.js';

/** A JSON object's member, the object a Map (a body parsed from text) or a plain one. */
function member(value: unknown, key: string): unknown {
  if (value instanceof Map) return value.get(key);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.prototype.hasOwnProperty.call(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** The decision the page's callers get, from the worker's answer to `body` (the body it sent). */
export function decisionOf(answer: AnswerWire, body: unknown): DecisionWire {
  const { json, timings, logits, calibrated, untrained } = answer;
  const response = JSON.parse(json) as SystemOneResponse;
  const questions = member(body, 'questions');
  for (const [id, given] of Object.entries(response.answers)) {
    if (given.type !== 'score') continue;
    const criteria = member(member(questions, id), 'criteria');
    if (!Array.isArray(criteria)) continue;
    for (const level of Object.keys(given.legend)) {
      given.legend[level] = structuredClone(criteria[Number(level)]);
    }
  }
  return {
    response,
    json,
    timings,
    ...(logits ? { logits } : {}),
    ...(calibrated ? { calibrated } : {}),
    ...(untrained ? { untrained } : {}),
  };
}
