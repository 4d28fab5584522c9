/**
 * The HTTP routes of system-one.md and the OpenAI dialects, as a function from a fetch
 * `Request` to a `Response`. The page API's `clef.fetch` uses it, and so do the service worker
 * (src/sw/route.ts) and `clef-web serve`: it needs only a backend that decides a parsed body and
 * lists models. Which route, and which dialect answers errors:
 *
 * | path                                            | dialect                                 |
 * |-------------------------------------------------|-----------------------------------------|
 * | `POST /v1/systemone`                            | System One                              |
 * | `POST /v1/decisions`                            | OpenAI Decisions if the body is one (1), else System One |
 * | `POST /client/v4/accounts/<a>/ai/run/<model>`   | Workers AI envelope; `<model>` literal or percent-encoded (2) |
 * | `POST /v1/chat/completions`                     | OpenAI Chat Completions (./route-openai.ts) |
 * | `GET /v1/models`                                | System One                              |
 *
 * (1) `isOpenAiDecisionsBody`: `questions` is an array, or `input` without `state`. A body that
 * is not JSON cannot be told apart, so it gets System One's 400.
 * (2) `parseWorkersAiPath`; a model outside `@cf/cloudflare/` is a 404 in the envelope.
 */
import { isOpenAiDecisionsBody } from './openai-decisions.js';
import { invalidRequest } from './openai-errors.js';
import {
  errorToHttp,
  jsonResponse,
  readJsonBody,
  rethrowAbort,
  workersAiError,
  type RouteBackend,
} from './route-common.js';
import { chatCompletions, openAiDecisions } from './route-openai.js';
import { calibratedRoute, servesCalibrated } from './route-calibrated.js';
import { parseWorkersAiPath } from './workers-ai-path.js';

export { errorToHttp, type RouteBackend } from './route-common.js';

export type RouteDialect = 'system-one' | 'workers-ai' | 'openai' | 'decisions';

/** Any `/ai/run/...` path: the Workers AI dialect, served model or not. */
const WORKERS_AI_SHAPE = /^\/client\/v4\/accounts\/[^/]+\/ai\/run\/./;
const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';

/**
 * The dialect of a path's error bodies: `decisions` is `/v1/decisions`, where only the body
 * says whether the client speaks System One or OpenAI (see the table above).
 */
export function routeDialect(pathname: string): RouteDialect {
  if (WORKERS_AI_SHAPE.test(pathname)) return 'workers-ai';
  if (pathname === CHAT_COMPLETIONS_PATH) return 'openai';
  if (pathname === '/v1/decisions') return 'decisions';
  return 'system-one';
}

const NOT_ALLOWED = JSON.stringify({ detail: 'Method Not Allowed' });

function openAiMethodNotAllowed(method: string): Response {
  const e = invalidRequest([
    {
      param: null,
      code: 'method_not_allowed',
      message: `${method} is not allowed on ${CHAT_COMPLETIONS_PATH}: use POST.`,
    },
  ]);
  return jsonResponse(405, JSON.stringify(e.body));
}

function workersAiNoModel(path: string): Response {
  const segment = path.replace(/^.*?\/ai\/run\//, '');
  let model = segment;
  try {
    model = decodeURIComponent(segment);
  } catch {
    // Malformed percent-encoding: name it as sent.
  }
  const message = `No such model ${JSON.stringify(model)}: this server serves @cf/cloudflare/<model> only`;
  const body = { detail: { error_type: 'api_usage_error' as const, message } };
  return jsonResponse(404, workersAiError(404, body));
}

/** System One (and Workers AI) decisions: the body as parsed goes to the engine. */
async function systemOne(
  body: unknown,
  backend: RouteBackend,
  signal: AbortSignal,
  workersAiModel: string | null,
): Promise<Response> {
  // The Workers AI route names the model in its path; the body may omit it.
  if (workersAiModel !== null && body instanceof Map && !body.has('model')) {
    body.set('model', workersAiModel);
  }
  const { json } = await backend.decide(body, signal);
  if (workersAiModel !== null) {
    return jsonResponse(200, `{"result":${json},"success":true,"errors":[],"messages":[]}`);
  }
  return jsonResponse(200, json);
}

/**
 * Answers one HTTP request. Unknown paths give 404, wrong methods 405. An aborted request
 * rejects like `fetch` does (AbortError), rather than answering.
 */
export async function handleRoute(request: Request, backend: RouteBackend): Promise<Response> {
  const path = new URL(request.url).pathname;
  const dialect = routeDialect(path);

  if (path === '/v1/models') {
    if (request.method !== 'GET') return jsonResponse(405, NOT_ALLOWED);
    return jsonResponse(200, JSON.stringify({ models: await backend.models() }));
  }
  if (servesCalibrated(path, backend)) return calibratedRoute(request, backend);
  if (dialect === 'openai') {
    if (request.method !== 'POST') return openAiMethodNotAllowed(request.method);
    return chatCompletions(request, backend);
  }
  const workersAi = dialect === 'workers-ai' ? parseWorkersAiPath(path) : null;
  if (dialect === 'workers-ai' && workersAi === null && request.method === 'POST') {
    return workersAiNoModel(path);
  }
  const isDecision = path === '/v1/systemone' || dialect === 'decisions' || workersAi !== null;
  if (!isDecision) return jsonResponse(404, JSON.stringify({ detail: 'Not Found' }));
  if (request.method !== 'POST') return jsonResponse(405, NOT_ALLOWED);

  try {
    const body = await readJsonBody(request);
    if (dialect === 'decisions' && isOpenAiDecisionsBody(body)) {
      return await openAiDecisions(body, backend, request.signal);
    }
    return await systemOne(body, backend, request.signal, workersAi?.name ?? null);
  } catch (error) {
    rethrowAbort(error);
    const { status, body } = errorToHttp(error);
    return jsonResponse(status, workersAi ? workersAiError(status, body) : JSON.stringify(body));
  }
}
