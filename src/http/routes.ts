/**
 * The HTTP routes of system-one.md, as a function from a fetch `Request` to a `Response`. The
 * page API's `clef.fetch` uses it, and so can a service worker or a Node server: it needs only
 * a backend that decides a parsed body and lists models.
 */
import { internalError, overloadedError, SystemOneError } from '../protocol/errors.js';
import { parseRequestJson } from '../protocol/json.js';
import { notJsonBodyError } from '../protocol/errors.js';
import type { ErrorBody, ModelCard } from '../protocol/types.js';
import { AbortedError, ClefError, DisposedError } from '../wire/errors.js';
import {
  calibrationAsk,
  isCalibrationError,
  type CalibratedDecision,
  type CalibrationAsk,
} from '../calibrate/index.js';

export interface RouteBackend {
  /** Decides a losslessly parsed body; resolves to the response as JSON text. */
  decide(body: unknown, signal?: AbortSignal): Promise<{ json: string }>;
  models(): ModelCard[] | Promise<ModelCard[]>;
  /**
   * Optional: serves CALIBRATED_ROUTE (the body plus the calibrated extension). A backend
   * without it answers that path 404, like any unknown path.
   */
  decideCalibrated?(
    body: unknown,
    ask: CalibrationAsk,
    signal?: AbortSignal,
  ): Promise<{ json: string; calibrated?: CalibratedDecision }>;
}

/**
 * clef-web's own route for calibrated answers: POST a System One request, get
 * `{"response": <the System One body, byte for byte>, "calibrated": <CalibratedDecision>}`;
 * `?abstain_below=0.8` adds a confidence floor. SDKs never call it, and the System One routes
 * answer exactly as before (docs/interop.md).
 */
export const CALIBRATED_ROUTE = '/v1/clef/calibrated';

const WORKERS_AI = /^\/client\/v4\/accounts\/[^/]+\/ai\/run\/@cf\/cloudflare\/([^/]+)$/;

function requestId(): string {
  return (
    globalThis.crypto?.randomUUID?.() ??
    `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`
  );
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A response body goes out as UTF-8, which cannot carry a lone surrogate (it would arrive as
 * U+FFFD, and a choice's probabilities under a key the client never sent). In JSON text one can
 * only sit inside a string, where its `\uXXXX` escape means the same code unit.
 */
function escapeLoneSurrogates(json: string): string {
  return json.replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body's JSON text. RFC 8259 §8.1: JSON between systems is UTF-8, so other bytes are not
 * JSON (decoding them would answer U+FFFD as if the client had sent it); one leading byte order
 * mark may be ignored, as Python's json.loads ignores it, but not two.
 */
async function bodyText(request: Request): Promise<string> {
  let text: string;
  try {
    text = UTF8.decode(await request.arrayBuffer());
  } catch {
    throw notJsonBodyError('Request body is not valid JSON: it is not valid UTF-8');
  }
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

function jsonResponse(status: number, text: string): Response {
  return new Response(escapeLoneSurrogates(text), {
    status,
    headers: { 'content-type': 'application/json', 'x-typesafe-request-id': requestId() },
  });
}

/** Maps any failure to the contract's status and body. */
export function errorToHttp(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof SystemOneError) return { status: error.status, body: error.body };
  if (error instanceof DisposedError) {
    const e = overloadedError('No model is loaded');
    return { status: e.status, body: e.body };
  }
  const message = error instanceof ClefError ? error.message : 'The engine failed';
  const e = internalError(message);
  return { status: e.status, body: e.body };
}

function workersAiError(status: number, body: ErrorBody): string {
  const message = Array.isArray(body.detail)
    ? body.detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; ')
    : body.detail.message;
  return JSON.stringify({
    success: false,
    errors: [{ code: status, message }],
    result: null,
    messages: [],
  });
}

/**
 * Answers one HTTP request. Unknown paths give 404, wrong methods 405. An aborted request
 * rejects like `fetch` does (AbortError), rather than answering.
 */
export async function handleRoute(request: Request, backend: RouteBackend): Promise<Response> {
  const path = new URL(request.url).pathname;
  const workersAi = WORKERS_AI.exec(path);
  const isDecision = path === '/v1/systemone' || path === '/v1/decisions' || workersAi !== null;

  if (path === '/v1/models') {
    if (request.method !== 'GET')
      return jsonResponse(405, JSON.stringify({ detail: 'Method Not Allowed' }));
    return jsonResponse(200, JSON.stringify({ models: await backend.models() }));
  }
  const calibrated = path === CALIBRATED_ROUTE && backend.decideCalibrated !== undefined;
  if (!isDecision && !calibrated) return jsonResponse(404, JSON.stringify({ detail: 'Not Found' }));
  if (request.method !== 'POST')
    return jsonResponse(405, JSON.stringify({ detail: 'Method Not Allowed' }));

  try {
    const text = await bodyText(request);
    let body: unknown;
    try {
      body = parseRequestJson(text);
    } catch (e) {
      throw notJsonBodyError(`Request body is not valid JSON: ${(e as Error).message}`);
    }
    // The Workers AI route names the model in its path; the body may omit it.
    if (workersAi && body instanceof Map && !body.has('model')) body.set('model', workersAi[1]!);
    if (calibrated) return await calibratedResponse(request, body, backend);
    const { json } = await backend.decide(body, request.signal);
    if (workersAi) {
      return jsonResponse(200, `{"result":${json},"success":true,"errors":[],"messages":[]}`);
    }
    return jsonResponse(200, json);
  } catch (error) {
    if (error instanceof AbortedError) throw new DOMException(error.message, 'AbortError');
    if (isCalibrationError(error)) {
      const status = error.code === 'calibration_unavailable' ? 501 : 422;
      const detail = { code: error.code, message: error.message };
      return jsonResponse(status, JSON.stringify({ detail }));
    }
    const { status, body } = errorToHttp(error);
    return jsonResponse(status, workersAi ? workersAiError(status, body) : JSON.stringify(body));
  }
}

async function calibratedResponse(
  request: Request,
  body: unknown,
  backend: RouteBackend,
): Promise<Response> {
  const below = new URL(request.url).searchParams.get('abstain_below');
  const ask = calibrationAsk(below === null ? true : { abstainBelow: Number(below) }) ?? {};
  const { json, calibrated } = await backend.decideCalibrated!(body, ask, request.signal);
  // The body's text is embedded as it is: its bytes are the System One route's.
  return jsonResponse(200, `{"response":${json},"calibrated":${JSON.stringify(calibrated)}}`);
}
