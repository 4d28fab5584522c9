/**
 * Bodies of the answers the server gives before a request reaches the routes (wrong Host, no or
 * a wrong API key, too large, too slow, another origin), in the dialect of the path
 * (`routeDialect`), so a client's error handling reads them like any other failure:
 * System One's `{"detail":{error_type,message}}`, the Workers AI envelope, or OpenAI's
 * `{"error":{message,type,param,code}}`. On `/v1/decisions` the body has not been read (or is
 * not JSON), so nothing says which of its two dialects the client speaks: the body carries both
 * `detail` (System One's, which the TypeSafe SDK reads) and `error` (OpenAI's, which the openai
 * SDK reads), and each client reads its own member.
 */
import { isUtf8 } from 'node:buffer';
import { routeDialect, type RouteDialect } from '../../http/route-table.js';
import { statusError } from '../../protocol/errors.js';
import { workersAiError } from '../../http/route-common.js';

export interface Refusal {
  status: number;
  message: string;
  /** OpenAI's `code` (e.g. `invalid_api_key`); by default one for the status. */
  code?: string;
}

const OPENAI_CODE: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_api_key',
  403: 'cross_origin_refused',
  408: 'request_timeout',
  413: 'request_too_large',
  421: 'misdirected_request',
  503: 'overloaded',
};

function openAiError(refusal: Refusal) {
  return {
    message: refusal.message,
    type: refusal.status >= 500 ? 'server_error' : 'invalid_request_error',
    param: null,
    code: refusal.code ?? OPENAI_CODE[refusal.status] ?? 'internal_error',
  };
}

/** The refusal's body for a request to `path` (`dialect` overrides the path's). */
export function refusalBody(path: string, refusal: Refusal, dialect?: RouteDialect): string {
  const d = dialect ?? routeDialect(path);
  if (d === 'openai') return JSON.stringify({ error: openAiError(refusal) });
  const body = statusError(refusal.status, refusal.message).body;
  if (d === 'workers-ai') return workersAiError(refusal.status, body);
  if (d === 'decisions') return JSON.stringify({ ...body, error: openAiError(refusal) });
  return JSON.stringify(body);
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Why a request body's bytes cannot be JSON text before they are decoded, or undefined. RFC 8259
 * §8.1: JSON between systems is UTF-8 (otherwise the bytes would be decoded to U+FFFD and
 * answered as if the client had sent that); one leading BOM may be ignored, as Python's
 * `json.loads` ignores it, but the fetch API's `text()` strips a second one too (undici), which
 * would let a body no JSON parser reads through.
 */
export function notJsonBodyBytes(body: Uint8Array): string | undefined {
  if (!isUtf8(body)) return 'it is not valid UTF-8';
  const bom = (at: number) => body[at] === 0xef && body[at + 1] === 0xbb && body[at + 2] === 0xbf;
  if (bom(0) && bom(3)) return 'it starts with two byte order marks';
  return undefined;
}
