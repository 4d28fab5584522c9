/**
 * Bodies of the answers the server gives before a request reaches the routes (wrong Host, too
 * large, too slow, another origin): the contract's error shape, or the Workers AI envelope on
 * that route, so a client's error handling reads them like any other failure.
 */
import type { ApiErrorType } from '../../src/protocol/types.js';

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
