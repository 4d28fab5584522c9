/**
 * OpenAI's error dialect: `{"error":{"message","type","param","code"}}` with an HTTP status, as
 * the official `openai` SDK reads it (its APIError takes `code` and `param` from that object).
 *
 * A request with several problems is refused once: the body's `message` lists every problem
 * (each a full sentence naming its param), `param` and `code` are the first problem's, and the
 * error object keeps the whole list in `problems` for callers in JavaScript. The body's `code`
 * is never null here, so clients can switch on it; it is also the error's stable `code`.
 *
 * Pure: imports only from ../protocol, runs in a page, a service worker and Node.
 */
import { isSystemOneError } from '../protocol/errors.js';

export type OpenAiErrorType = 'invalid_request_error' | 'server_error';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string };
}

/** One thing wrong with a request: where (`questions[2].choices[0].value`), what, and a code. */
export interface OpenAiProblem {
  param: string | null;
  code: string;
  message: string;
}

export class OpenAiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly body: OpenAiErrorBody;
  /** Every problem found (one for errors that are not about the request's content). */
  readonly problems: readonly OpenAiProblem[];

  /** `note`, when given, follows the list of problems in the message (advice that fits all). */
  constructor(
    status: number,
    type: OpenAiErrorType,
    problems: readonly OpenAiProblem[],
    note?: string,
  ) {
    if (problems.length === 0) throw new TypeError('an OpenAiError needs at least one problem');
    const first = problems[0]!;
    const list =
      problems.length === 1
        ? first.message
        : `The request has ${problems.length} problems: ` +
          problems.map((p, i) => `(${i + 1}) ${p.message}`).join(' ');
    const message = note === undefined ? list : `${list} ${note}`;
    super(message);
    this.name = 'OpenAiError';
    this.status = status;
    this.code = first.code;
    this.problems = problems.map((p) => ({ ...p }));
    this.body = { error: { message, type, param: first.param, code: first.code } };
  }
}

/** True for an OpenAiError, also one from another copy of this module. */
export function isOpenAiError(x: unknown): x is OpenAiError {
  if (x instanceof OpenAiError) return true;
  const e = x as Partial<OpenAiError> | null;
  return (
    x instanceof Error &&
    x.name === 'OpenAiError' &&
    typeof e?.status === 'number' &&
    typeof e.code === 'string' &&
    typeof e.body === 'object'
  );
}

/** 400 invalid_request_error listing every problem (then `note`, if given). */
export function invalidRequest(problems: readonly OpenAiProblem[], note?: string): OpenAiError {
  return new OpenAiError(400, 'invalid_request_error', problems, note);
}

/** 404 model_not_found, OpenAI's answer for a model it does not serve. */
export function modelNotFound(model: string): OpenAiError {
  return new OpenAiError(404, 'invalid_request_error', [
    {
      param: 'model',
      code: 'model_not_found',
      message: `The model '${model}' does not exist: this server does not serve it.`,
    },
  ]);
}

/** 401 for a missing or wrong bearer key (what bearer.ts's checkBearer reports). */
export function authenticationError(result: 'missing' | 'wrong'): OpenAiError {
  const problem: OpenAiProblem =
    result === 'missing'
      ? {
          param: null,
          code: 'missing_api_key',
          message:
            "You didn't provide an API key. This server requires one in an Authorization " +
            'header using Bearer auth (Authorization: Bearer YOUR_KEY).',
        }
      : { param: null, code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  return new OpenAiError(401, 'invalid_request_error', [problem]);
}

/** 500 server_error: the engine, or this adapter, failed. */
export function serverError(message: string): OpenAiError {
  return new OpenAiError(500, 'server_error', [{ param: null, code: 'internal_error', message }]);
}

const UNKNOWN_MODEL_PREFIX = 'Unknown model: ';

/**
 * The OpenAI-dialect error for a failure on the way through the System One engine. `inputParam`
 * names the request's input (`input` for Decisions, `messages` for Chat Completions): a too long
 * input is reported there.
 *
 * | System One                          | OpenAI                                                   |
 * |-------------------------------------|----------------------------------------------------------|
 * | 400 `Unknown model: x`              | 404 invalid_request_error `model_not_found`, param model |
 * | 400 max_tokens_exceeded             | 400 invalid_request_error `context_length_exceeded`      |
 * | 400 api_usage_error (other)         | 400 invalid_request_error `invalid_request`              |
 * | 422 (a body this adapter built)     | 400 invalid_request_error `invalid_request`, each issue  |
 * | 503 overloaded                      | 503 server_error `overloaded`                            |
 * | 500 internal_error, anything else   | 500 server_error `internal_error`                        |
 * | an OpenAiError                      | itself                                                   |
 */
export function openAiErrorFrom(error: unknown, inputParam: string): OpenAiError {
  if (isOpenAiError(error)) return error;
  if (!isSystemOneError(error)) {
    return serverError(error instanceof Error ? error.message : 'The engine failed');
  }
  const detail = error.body.detail;
  if (Array.isArray(detail)) {
    return invalidRequest(
      detail.map((d) => ({
        param: null,
        code: 'invalid_request',
        message: `${d.loc.join('.')}: ${d.msg}.`,
      })),
    );
  }
  const { error_type: type, message } = detail;
  if (type === 'api_usage_error' && message.startsWith(UNKNOWN_MODEL_PREFIX)) {
    return modelNotFound(message.slice(UNKNOWN_MODEL_PREFIX.length));
  }
  if (type === 'max_tokens_exceeded') {
    return new OpenAiError(400, 'invalid_request_error', [
      {
        param: inputParam,
        code: 'context_length_exceeded',
        message: `Invalid '${inputParam}': ${message}.`,
      },
    ]);
  }
  if (error.status === 503) {
    return new OpenAiError(503, 'server_error', [{ param: null, code: 'overloaded', message }]);
  }
  if (error.status >= 500) return serverError(message);
  return invalidRequest([{ param: null, code: 'invalid_request', message }]);
}
