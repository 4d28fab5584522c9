/**
 * Remote escalation (opt-in; nothing leaves the browser unless a page passes `remote`): send
 * every request, or those whose local answer is not confident enough, to a System One server,
 * and say in the response which side answered (`answered_by`, an extra field clients ignore).
 *
 * Failure policy:
 * - The caller's abort is an abort, whatever the mode.
 * - A remote 4xx (other than 408/429) is the remote's verdict on the request or the credentials:
 *   it is thrown as that SystemOneError (status and body as the remote sent them), in both modes.
 * - `always`: any other remote failure (unreachable, timeout, 5xx, 408/429, a body that is not
 *   System One) is thrown too; a network failure or timeout as 503 `overloaded`.
 * - `{ below }`: those failures fall back to the local answer, marked
 *   `"answered_by":"local","remote_error":{"status":<HTTP status or null>,"message":...}`.
 */
import { internalError, overloadedError, SystemOneError } from '../protocol/errors.js';
import { isPyNumber } from '../protocol/json-value.js';
import { parseRequestJson } from '../protocol/json.js';
import type { Answer, SystemOneResponse } from '../protocol/types.js';
import { AbortedError } from '../wire/errors.js';
import type { DecisionWire } from '../wire/wire.js';
import type { DecisionTimings } from '../wire/telemetry.js';

export interface RemoteOptions {
  /**
   * The server's root: requests go to `${baseURL}/v1/systemone`. A Workers AI model URL (one
   * containing `/ai/run/`) is posted to as is, and its `{"result":...}` envelope unwrapped.
   */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** `'always'`, or `{ below: c }`: decide locally, escalate when any confidence is below c. */
  when: 'always' | { below: number };
  /** The model name to ask the remote for (default: the request's own). */
  model?: string;
  /** Time the remote has to answer (default 60 s). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export type AnsweredBy = 'local' | 'remote';

export interface RemoteErrorNote {
  /** The remote's HTTP status, or null when it could not be reached. */
  status: number | null;
  message: string;
}

/** A response from a clef with `remote` set. */
export type EscalatedResponse = SystemOneResponse & {
  answered_by: AnsweredBy;
  remote_error?: RemoteErrorNote;
};

/** A decide function; options beside `signal` go through to the local one as given. */
type DecideFn<O extends { signal?: AbortSignal } = { signal?: AbortSignal }> = (
  request: unknown,
  options?: O,
) => Promise<DecisionWire>;

const DEFAULT_TIMEOUT_MS = 60_000;

/** Throws a TypeError for options that cannot work, before any model loads. */
export function checkRemoteOptions(remote: RemoteOptions): void {
  let url: URL;
  try {
    url = new URL(remote.baseURL);
  } catch {
    throw new TypeError(`remote.baseURL must be an absolute URL, not ${remote.baseURL}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`remote.baseURL must be http(s), not ${url.protocol}`);
  }
  const when = remote.when;
  if (when !== 'always') {
    const below = typeof when === 'object' && when !== null ? when.below : NaN;
    if (typeof below !== 'number' || !(below > 0 && below <= 1)) {
      throw new TypeError("remote.when must be 'always' or { below: c } with 0 < c <= 1");
    }
  }
}

/** An answer's confidence: choice and score carry it; for noul it is max(p, 1 - p). */
export function answerConfidence(answer: Answer): number {
  return answer.type === 'noul' ? Math.max(answer.noul, 1 - answer.noul) : answer.confidence;
}

/** The least confident answer's confidence (1 when there are none). */
export function lowestConfidence(response: SystemOneResponse): number {
  return Math.min(1, ...Object.values(response.answers).map(answerConfidence));
}

/**
 * JSON text of a request as a page gave it: plain objects in their own order, Maps (bodies
 * parsed from text) in written order, PyNumbers as their lexeme; what JSON.stringify drops or
 * nulls (undefined, functions, non-finite numbers) it drops or nulls too.
 */
export function jsonText(value: unknown): string {
  if (value === null || value === undefined || typeof value === 'function') return 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (isPyNumber(value)) return value.lexeme;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value !== 'object') return 'null';
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  const members = entries
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .map(([k, v]) => `${JSON.stringify(String(k))}:${jsonText(v)}`);
  return `{${members.join(',')}}`;
}

/** The request with its model replaced, keeping the key's place. */
function withModel(request: unknown, model: string | undefined): unknown {
  if (model === undefined) return request;
  if (request instanceof Map) return new Map([...request, ['model', model]]);
  if (typeof request === 'object' && request !== null && !Array.isArray(request)) {
    return { ...request, model };
  }
  return request;
}

/** Appends `answered_by` (and a remote error note) to a decision's JSON text and object. */
export function markAnsweredBy(
  decision: DecisionWire,
  side: AnsweredBy,
  note?: RemoteErrorNote,
): DecisionWire {
  const json = decision.json.trimEnd();
  if (!json.endsWith('}')) throw internalError('A response body is not a JSON object');
  const extra =
    `"answered_by":${JSON.stringify(side)}` +
    (note
      ? `,"remote_error":${JSON.stringify({ status: note.status, message: note.message })}`
      : '');
  const empty = /^\{\s*\}$/.test(json);
  const response: EscalatedResponse = {
    ...decision.response,
    answered_by: side,
    ...(note ? { remote_error: note } : {}),
  };
  return { ...decision, response, json: `${json.slice(0, -1)}${empty ? '' : ','}${extra}}` };
}

/** Why a remote call did not give an answer; `fallback` says whether `below` may go local. */
export class RemoteFailure extends Error {
  constructor(
    readonly error: Error,
    readonly fallback: boolean,
    readonly note: RemoteErrorNote,
  ) {
    super(error.message);
  }
}

function remoteUrl(baseURL: string): { url: string; workersAi: boolean } {
  if (baseURL.includes('/ai/run/')) return { url: baseURL, workersAi: true };
  return { url: `${baseURL.replace(/\/+$/, '')}/v1/systemone`, workersAi: false };
}

function zeroTimings(totalMs: number): DecisionTimings {
  return { encodeMs: 0, backboneMs: 0, headMs: 0, totalMs, prefixHit: false, backboneTokens: 0 };
}

/** One request to the remote; resolves to its decision or throws a RemoteFailure. */
export async function decideRemotely(
  remote: RemoteOptions,
  request: unknown,
  signal?: AbortSignal,
): Promise<DecisionWire> {
  if (signal?.aborted) throw new AbortedError();
  const started = performance.now();
  const { url, workersAi } = remoteUrl(remote.baseURL);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (remote.apiKey) headers['authorization'] = `Bearer ${remote.apiKey}`;
  const timeoutMs = remote.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let status: number;
  let text: string;
  try {
    const response = await (remote.fetch ?? fetch)(url, {
      method: 'POST',
      headers,
      body: jsonText(withModel(request, remote.model)),
      signal: controller.signal,
    });
    status = response.status;
    text = await response.text();
  } catch (e) {
    if (signal?.aborted) throw new AbortedError();
    const message = controller.signal.aborted
      ? `The remote System One server ${url} did not answer within ${timeoutMs} ms`
      : `The remote System One server ${url} could not be reached: ${(e as Error).message}`;
    throw new RemoteFailure(overloadedError(message), true, { status: null, message });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }

  if (status < 200 || status > 299) {
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: fromBody keeps the text as the message
    }
    const error = SystemOneError.fromBody(status, body);
    const transient = status >= 500 || status === 408 || status === 429;
    throw new RemoteFailure(error, transient, { status, message: error.message });
  }
  try {
    let value = parseRequestJson(text);
    if (workersAi && value instanceof Map) {
      if (value.get('success') !== true) throw new Error('success is not true');
      value = value.get('result') ?? null;
    }
    const json = jsonText(value);
    const response = JSON.parse(json) as SystemOneResponse;
    if (typeof response !== 'object' || response === null || typeof response.answers !== 'object') {
      throw new Error('it has no answers');
    }
    return { response, json, timings: zeroTimings(performance.now() - started) };
  } catch (e) {
    const message = `The remote System One server ${url} sent a body that is not a System One response (${(e as Error).message})`;
    throw new RemoteFailure(internalError(message), true, { status, message });
  }
}

/** Wraps a local decide function with the remote policy; the result always says who answered. */
export function escalating<O extends { signal?: AbortSignal }>(
  remote: RemoteOptions,
  decideLocally: DecideFn<O>,
  /** Throws when the clef was disposed (a disposed clef sends nothing anywhere). */
  checkOpen: () => void = () => undefined,
): DecideFn<O> {
  checkRemoteOptions(remote);
  return async (request, options) => {
    checkOpen();
    const signal = options?.signal;
    if (remote.when === 'always') {
      try {
        return markAnsweredBy(await decideRemotely(remote, request, signal), 'remote');
      } catch (e) {
        throw e instanceof RemoteFailure ? e.error : e;
      }
    }
    const local = await decideLocally(request, options);
    if (lowestConfidence(local.response) >= remote.when.below) {
      return markAnsweredBy(local, 'local');
    }
    try {
      const answer = await decideRemotely(remote, request, signal);
      const timings = {
        ...answer.timings,
        totalMs: local.timings.totalMs + answer.timings.totalMs,
      };
      return markAnsweredBy({ ...answer, timings }, 'remote');
    } catch (e) {
      if (!(e instanceof RemoteFailure)) throw e;
      if (!e.fallback) throw e.error;
      return markAnsweredBy(local, 'local', e.note);
    }
  };
}
