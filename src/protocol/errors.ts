/**
 * System One errors: one class that carries the HTTP status and the exact body TypeSafe's hosted
 * API would send (see docs/system-one.md, "Errors"), so the HTTP route can write it as
 * is and a page script can read `status` / `body` whichever way the call travelled.
 */
import { CodedError, isCodedError } from './coded-error.js';
import type { ApiErrorType, ErrorBody, ValidationIssue } from './types.js';

/** `code` of a 422: its body has no error_type, so this stands in for one. */
const VALIDATION_ERROR_CODE = 'validation_error';

const STATUS_OF: Record<ApiErrorType, number> = {
  api_usage_error: 400,
  max_tokens_exceeded: 400,
  overloaded: 503,
  internal_error: 500,
};

function locText(loc: ReadonlyArray<string | number>): string {
  return loc.map(String).join('.');
}

/** A readable one-line message for a body (the body itself stays exact). */
function messageOf(body: ErrorBody): string {
  if (Array.isArray(body.detail)) {
    const issues = body.detail;
    if (issues.length === 0) return 'Invalid request';
    const first = issues[0]!;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    return `Invalid request: ${locText(first.loc)}: ${first.msg}${more}`;
  }
  return body.detail.message;
}

export class SystemOneError extends CodedError {
  /** `validation_error` for a 422, else the body's `error_type`. */
  declare readonly code: string;
  readonly status: number;
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody) {
    super(
      Array.isArray(body.detail) ? VALIDATION_ERROR_CODE : body.detail.error_type,
      messageOf(body),
    );
    // A fixed name (not the constructor's, which minifiers rename) so logs and
    // `isSystemOneError` can tell it apart after bundling or a worker hop.
    this.name = 'SystemOneError';
    this.status = status;
    this.body = body;
  }

  /**
   * Rebuilds an error from a status and a body received over HTTP or from a worker. The body is
   * copied (issues with keys re-ordered to loc, msg, type). A body of another shape (a proxy's
   * `{"detail":"Not Found"}`, HTML, nothing) still gives an error with that status: its message
   * is the text found, or `HTTP <status>`, and its type `internal_error` from 500 up, else
   * `api_usage_error`.
   */
  static fromBody(status: number, body: unknown): SystemOneError {
    const detail = isRecord(body) ? body['detail'] : undefined;
    if (Array.isArray(detail) && detail.every(isIssue)) {
      const issues: ValidationIssue[] = detail.map((d) => ({
        loc: [...d.loc],
        msg: d.msg,
        type: d.type,
      }));
      return new SystemOneError(status, { detail: issues });
    }
    if (
      isRecord(detail) &&
      typeof detail['error_type'] === 'string' &&
      typeof detail['message'] === 'string'
    ) {
      // An error_type this project does not emit (another host's) is kept as sent: callers
      // switch on `code`, and must see what the server said.
      const errorType = detail['error_type'] as ApiErrorType;
      return new SystemOneError(status, {
        detail: { error_type: errorType, message: detail['message'] },
      });
    }
    const fallbackType: ApiErrorType = status >= 500 ? 'internal_error' : 'api_usage_error';
    return new SystemOneError(status, {
      detail: { error_type: fallbackType, message: fallbackMessage(status, body, detail) },
    });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isIssue(v: unknown): v is ValidationIssue {
  return (
    isRecord(v) &&
    Array.isArray(v['loc']) &&
    (v['loc'] as unknown[]).every((p) => typeof p === 'string' || typeof p === 'number') &&
    typeof v['msg'] === 'string' &&
    typeof v['type'] === 'string'
  );
}

function fallbackMessage(status: number, body: unknown, detail: unknown): string {
  if (typeof detail === 'string' && detail !== '') return detail;
  if (isRecord(body)) {
    // Workers AI's failure shape: {"success":false,"errors":[{"code","message"}],...}
    const errors = body['errors'];
    if (Array.isArray(errors) && isRecord(errors[0]) && typeof errors[0]['message'] === 'string') {
      return errors[0]['message'];
    }
    if (typeof body['message'] === 'string' && body['message'] !== '') return body['message'];
  }
  if (typeof body === 'string' && body.trim() !== '') return `HTTP ${status}: ${body.trim()}`;
  return `HTTP ${status}`;
}

/**
 * True for a SystemOneError, including one from another copy of this module (a second bundle,
 * a duplicated dependency) where `instanceof` fails.
 */
export function isSystemOneError(x: unknown): x is SystemOneError {
  if (x instanceof SystemOneError) return true;
  return (
    isCodedError(x, 'SystemOneError') &&
    typeof (x as Partial<SystemOneError>).status === 'number' &&
    isRecord((x as Partial<SystemOneError>).body)
  );
}

/** The one place a System One error body (`{"detail":{error_type,message}}`) is made. */
function typedError(status: number, errorType: ApiErrorType, message: string): SystemOneError {
  return new SystemOneError(status, { detail: { error_type: errorType, message } });
}

function usage(errorType: ApiErrorType, message: string): SystemOneError {
  return typedError(STATUS_OF[errorType], errorType, message);
}

/**
 * The error for an HTTP status the contract names no type of its own for (a server's refusal
 * before routing: 401, 403, 404, 408, 413 ...): 503 is `overloaded`, any other 5xx
 * `internal_error`, the rest `api_usage_error`.
 */
export function statusError(status: number, message: string): SystemOneError {
  const errorType: ApiErrorType =
    status === 503 ? 'overloaded' : status >= 500 ? 'internal_error' : 'api_usage_error';
  return typedError(status, errorType, message);
}

/** 422 listing every schema violation found. */
export function validationError(issues: ValidationIssue[]): SystemOneError {
  return new SystemOneError(422, {
    detail: issues.map((i) => ({ loc: [...i.loc], msg: i.msg, type: i.type })),
  });
}

/** 400 api_usage_error. */
export function apiUsageError(message: string): SystemOneError {
  return usage('api_usage_error', message);
}

/** 400 api_usage_error, `Unknown model: <name>`. */
export function unknownModelError(name: string): SystemOneError {
  return usage('api_usage_error', `Unknown model: ${name}`);
}

/** 400 api_usage_error for a body that is not JSON, or JSON but not an object. */
export function notJsonBodyError(message: string): SystemOneError {
  return usage('api_usage_error', message);
}

/**
 * 400 max_tokens_exceeded: `input is N tokens; the model reads at most M`, or `input is at
 * least N tokens; ...` when the input was refused from its length before it was tokenized.
 */
export function maxTokensExceededError(
  inputTokens: number,
  maxTokens: number,
  atLeast = false,
): SystemOneError {
  return usage(
    'max_tokens_exceeded',
    `input is ${atLeast ? 'at least ' : ''}${inputTokens} tokens; the model reads at most ${maxTokens}`,
  );
}

/** 503 overloaded: no model loaded, or it cannot take the call now. */
export function overloadedError(message: string): SystemOneError {
  return usage('overloaded', message);
}

/** 500 internal_error: the engine failed. */
export function internalError(message: string): SystemOneError {
  return usage('internal_error', message);
}
