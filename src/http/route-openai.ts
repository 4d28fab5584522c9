/**
 * OpenAI's two dialects on the routes: the Decisions API (`POST /v1/decisions` with an OpenAI
 * body, recognised by routes.ts) and Chat Completions where a decision is what is asked
 * (`POST /v1/chat/completions`). Both map the body onto the same engine call as System One
 * (`backend.decide` with a System One request), and map the answer back; every failure is
 * answered in OpenAI's error shape (`{"error":{message,type,param,code}}`, ./openai-errors.ts).
 */
import { parseRequestJson } from '../protocol/json.js';
import type { JsonValue } from '../protocol/types.js';
import { buildChatCompletion, planChatDecision } from './chat-completions.js';
import { fromSystemOneResponse, toSystemOneRequest } from './openai-decisions.js';
import { invalidRequest, openAiErrorFrom, type OpenAiError } from './openai-errors.js';
import {
  jsonResponse,
  NotJsonBody,
  notJsonBodyMessage,
  readJsonBody,
  rethrowAbort,
  type RouteBackend,
} from './route-common.js';

/** OpenAI's answer to a body that is not JSON (its own wording, with a stable code). */
export function invalidJson(why: string): OpenAiError {
  return invalidRequest([
    {
      param: null,
      code: 'invalid_json',
      message: notJsonBodyMessage(why),
    },
  ]);
}

function errorResponse(error: unknown, inputParam: string): Response {
  rethrowAbort(error);
  const e =
    error instanceof NotJsonBody ? invalidJson(error.message) : openAiErrorFrom(error, inputParam);
  return jsonResponse(e.status, JSON.stringify(e.body));
}

/** Decides a System One request and reads its answer back (numbers as written, in order). */
async function decideParsed(
  backend: RouteBackend,
  request: unknown,
  signal: AbortSignal,
): Promise<JsonValue> {
  const { json } = await backend.decide(request, signal);
  return parseRequestJson(json);
}

/** An OpenAI Decisions body (already parsed) → `Decision`. */
export async function openAiDecisions(
  body: unknown,
  backend: RouteBackend,
  signal: AbortSignal,
): Promise<Response> {
  try {
    const { request, mapping } = toSystemOneRequest(body);
    const response = await decideParsed(backend, request, signal);
    return jsonResponse(200, JSON.stringify(fromSystemOneResponse(mapping, response)));
  } catch (error) {
    return errorResponse(error, 'input');
  }
}

/** `POST /v1/chat/completions` → `chat.completion` whose content is the decided JSON object. */
export async function chatCompletions(request: Request, backend: RouteBackend): Promise<Response> {
  try {
    const plan = planChatDecision(await readJsonBody(request));
    const response = await decideParsed(backend, plan.request, request.signal);
    return jsonResponse(200, JSON.stringify(buildChatCompletion(plan, response)));
  } catch (error) {
    return errorResponse(error, 'messages');
  }
}
