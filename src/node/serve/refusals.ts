/**
 * Bodies of the answers the server gives before a request reaches the routes (wrong Host, too
 * large, too slow, another origin): the contract's error shape, or the Workers AI envelope on
 * that route, so a client's error handling reads them like any other failure.
 */
import { isUtf8 } from 'node:buffer';
import type { ApiErrorType } from '../../protocol/types.js';

export interface Refusal {
  status: number;
  message: string;
}

const WORKERS_AI_PATH = /^\/client\/v4\/accounts\/[^/]+\/ai\/run\/@cf\/cloudflare\/[^/]+$/;

function errorType(status: number): ApiErrorType {
  if (status === 503) return 'overloaded';
  if (status >= 500) return 'internal_error';
  return 'api_usage_error';
}

export function refusalBody(path: string, refusal: Refusal): string {
  if (WORKERS_AI_PATH.test(path)) {
    return JSON.stringify({
      success: false,
      errors: [{ code: refusal.status, message: refusal.message }],
      result: null,
      messages: [],
    });
  }
  return JSON.stringify({
    detail: { error_type: errorType(refusal.status), message: refusal.message },
  });
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
export function notJsonBytes(body: Uint8Array): string | undefined {
  if (!isUtf8(body)) return 'it is not valid UTF-8';
  const bom = (at: number) => body[at] === 0xef && body[at + 1] === 0xbb && body[at + 2] === 0xbf;
  if (bom(0) && bom(3)) return 'it starts with two byte order marks';
  return undefined;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * JSON text with every lone surrogate written as its `\uXXXX` escape. A request may carry one
 * (`"\udc80"` is JSON, and Python keeps it), and the engine echoes it as Python writes it, raw;
 * UTF-8 cannot carry a raw one (it would go out as U+FFFD and a choice's probabilities would come
 * back under a key the client never sent). In JSON text a lone surrogate can only sit inside a
 * string, where its escape means the same code unit.
 */
export function escapeLoneSurrogates(json: string): string {
  return json.replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
}
