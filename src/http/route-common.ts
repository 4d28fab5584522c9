/**
 * What every route shares: the request id, reading a body as strict UTF-8 JSON text, JSON
 * responses (lone surrogates escaped), and the System One and Workers AI error bodies.
 */
import { escapeLoneSurrogates } from './json-text.js';
import type { CalibratedDecision, CalibrationAsk } from '../calibrate/index.js';
import {
  internalError,
  notJsonBodyError,
  overloadedError,
  SystemOneError,
} from '../protocol/errors.js';
import { parseRequestJson } from '../protocol/json.js';
import type { ErrorBody, ModelCard } from '../protocol/types.js';
import { AbortedError, ClefError, DisposedError } from '../wire/errors.js';

export interface RouteBackend {
  /** Decides a losslessly parsed body; resolves to the response as JSON text. */
  decide(body: unknown, signal?: AbortSignal): Promise<{ json: string }>;
  models(): ModelCard[] | Promise<ModelCard[]>;
  /**
   * Optional: serves `/v1/clef/calibrated` (route-calibrated.ts), the body plus the calibrated
   * extension. A backend without it answers that path 404, like any unknown path.
   */
  decideCalibrated?(
    body: unknown,
    ask: CalibrationAsk,
    signal?: AbortSignal,
  ): Promise<{ json: string; calibrated?: CalibratedDecision }>;
}

export function requestId(): string {
  return (
    globalThis.crypto?.randomUUID?.() ??
    `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`
  );
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Why a body is not JSON text (System One's 400 "not JSON"); the OpenAI routes rephrase it. */
export class NotJsonBody extends Error {
  override readonly name = 'NotJsonBody';
  readonly code = 'not_json';
}

/** What every edge answers a body that is not JSON with, `why` being a NotJsonBody's message. */
export function notJsonBodyMessage(why: string): string {
  return `Request body is not valid JSON: ${why}`;
}

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
    throw new NotJsonBody('it is not valid UTF-8');
  }
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

/** The body parsed losslessly (Maps in written order, number lexemes kept); NotJsonBody if not JSON. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const text = await bodyText(request);
  try {
    return parseRequestJson(text);
  } catch (e) {
    throw new NotJsonBody((e as Error).message);
  }
}

export function jsonResponse(status: number, text: string): Response {
  return new Response(escapeLoneSurrogates(text), {
    status,
    headers: { 'content-type': 'application/json', 'x-typesafe-request-id': requestId() },
  });
}

/** An aborted request rejects like `fetch` does (AbortError) rather than answering. */
export function rethrowAbort(error: unknown): void {
  if (error instanceof AbortedError) throw new DOMException(error.message, 'AbortError');
}

/** Maps any failure to the contract's status and body. */
export function errorToHttp(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof NotJsonBody) {
    const e = notJsonBodyError(notJsonBodyMessage(error.message));
    return { status: e.status, body: e.body };
  }
  if (error instanceof SystemOneError) return { status: error.status, body: error.body };
  if (error instanceof DisposedError) {
    const e = overloadedError('No model is loaded');
    return { status: e.status, body: e.body };
  }
  const message = error instanceof ClefError ? error.message : 'The engine failed';
  const e = internalError(message);
  return { status: e.status, body: e.body };
}

/** Cloudflare's failure envelope around a System One error. */
export function workersAiError(status: number, body: ErrorBody): string {
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
