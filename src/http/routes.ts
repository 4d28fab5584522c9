/**
 * Answers the HTTP routes of system-one.md and the OpenAI dialects, as a function from a fetch
 * `Request` to a `Response`. The page API's `clef.fetch` uses it, and so do the service worker
 * (src/sw/route.ts) and `clef-web serve`: it needs only a backend that decides a parsed body and
 * lists models. Which paths there are, and which dialect answers each one's errors, is the
 * table in ./route-table.ts; here each kind of route gets its handler.
 *
 * On `/v1/decisions`, `isOpenAiDecisionsBody` (`questions` is an array, or `input` without
 * `state`) picks OpenAI Decisions; a body that is not JSON cannot be told apart, so it gets
 * System One's 400.
 */
import { statusError } from '../protocol/errors.js';
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
import { calibratedRoute } from './route-calibrated.js';
import { findRoute, type RouteEntry, type RouteKind } from './route-table.js';
import { parseWorkersAiPath } from './workers-ai-path.js';

export { errorToHttp, type RouteBackend } from './route-common.js';
export { routeDialect, type RouteDialect } from './route-table.js';

const NOT_ALLOWED = JSON.stringify({ detail: 'Method Not Allowed' });
const NOT_FOUND = JSON.stringify({ detail: 'Not Found' });

function openAiMethodNotAllowed(method: string, path: string): Response {
  const e = invalidRequest([
    {
      param: null,
      code: 'method_not_allowed',
      message: `${method} is not allowed on ${path}: use POST.`,
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
  return jsonResponse(404, workersAiError(404, statusError(404, message).body));
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

/** A System One decision on any route that takes one: the body as parsed goes to the engine. */
async function decision(
  request: Request,
  backend: RouteBackend,
  kind: RouteKind,
  workersAiModel: string | null,
): Promise<Response> {
  try {
    const body = await readJsonBody(request);
    if (kind === 'decisions' && isOpenAiDecisionsBody(body)) {
      return await openAiDecisions(body, backend, request.signal);
    }
    return await systemOne(body, backend, request.signal, workersAiModel);
  } catch (error) {
    rethrowAbort(error);
    const { status, body } = errorToHttp(error);
    const text = workersAiModel !== null ? workersAiError(status, body) : JSON.stringify(body);
    return jsonResponse(status, text);
  }
}

/** What answers a request of the table's method on a route of each kind. */
const HANDLERS: Record<
  RouteKind,
  (request: Request, backend: RouteBackend, path: string) => Promise<Response>
> = {
  systemone: (request, backend) => decision(request, backend, 'systemone', null),
  decisions: (request, backend) => decision(request, backend, 'decisions', null),
  'workers-ai': (request, backend, path) =>
    decision(request, backend, 'workers-ai', parseWorkersAiPath(path)!.name),
  'chat-completions': (request, backend) => chatCompletions(request, backend),
  calibrated: (request, backend) => calibratedRoute(request, backend),
  models: async (_request, backend) =>
    jsonResponse(200, JSON.stringify({ models: await backend.models() })),
};

/**
 * The route that answers `path` for this backend, or a response that ends the request first: a
 * 404 for no route (the calibrated one without `decideCalibrated`, a Workers AI path naming no
 * model of ours), a 405 for another method.
 */
function routeOrRefusal(
  method: string,
  path: string,
  backend: RouteBackend,
): RouteEntry | Response {
  const route = findRoute(path);
  const served =
    route !== undefined &&
    (route.kind !== 'calibrated' || backend.decideCalibrated !== undefined) &&
    (route.kind !== 'workers-ai' || parseWorkersAiPath(path) !== null);
  if (!served) {
    if (route?.kind === 'workers-ai' && method === 'POST') return workersAiNoModel(path);
    return jsonResponse(404, NOT_FOUND);
  }
  if (method === route.method) return route;
  if (route.dialect === 'openai') return openAiMethodNotAllowed(method, path);
  return jsonResponse(405, NOT_ALLOWED);
}

/**
 * Answers one HTTP request. Unknown paths give 404, wrong methods 405. An aborted request
 * rejects like `fetch` does (AbortError), rather than answering.
 */
export async function handleRoute(request: Request, backend: RouteBackend): Promise<Response> {
  const path = new URL(request.url).pathname;
  const route = routeOrRefusal(request.method, path, backend);
  if (route instanceof Response) return route;
  return HANDLERS[route.kind](request, backend, path);
}
