import { describe, expect, it } from 'vitest';
import {
  SystemOneError,
  apiUsageError,
  internalError,
  isSystemOneError,
  maxTokensExceededError,
  notJsonBodyError,
  overloadedError,
  unknownModelError,
  validationError,
} from '../../../src/protocol/errors.js';

describe('error constructors: status, code and the exact body system-one.md lists', () => {
  const cases: Array<[string, SystemOneError, number, string, string]> = [
    [
      'apiUsageError',
      apiUsageError('bad call'),
      400,
      'api_usage_error',
      '{"detail":{"error_type":"api_usage_error","message":"bad call"}}',
    ],
    [
      'unknownModelError',
      unknownModelError('gpt-9'),
      400,
      'api_usage_error',
      '{"detail":{"error_type":"api_usage_error","message":"Unknown model: gpt-9"}}',
    ],
    [
      'notJsonBodyError',
      notJsonBodyError('Expecting value: line 1 column 1'),
      400,
      'api_usage_error',
      '{"detail":{"error_type":"api_usage_error","message":"Expecting value: line 1 column 1"}}',
    ],
    [
      'maxTokensExceededError',
      maxTokensExceededError(70000, 65536),
      400,
      'max_tokens_exceeded',
      '{"detail":{"error_type":"max_tokens_exceeded","message":"input is 70000 tokens; the model reads at most 65536"}}',
    ],
    [
      'overloadedError',
      overloadedError('no model loaded'),
      503,
      'overloaded',
      '{"detail":{"error_type":"overloaded","message":"no model loaded"}}',
    ],
    [
      'internalError',
      internalError('engine failed'),
      500,
      'internal_error',
      '{"detail":{"error_type":"internal_error","message":"engine failed"}}',
    ],
  ];
  it.each(cases)('%s', (_name, err, status, code, bodyJson) => {
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(SystemOneError);
    expect(err.name).toBe('SystemOneError');
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    // JSON text comparison also pins the key order of the body.
    expect(JSON.stringify(err.body)).toBe(bodyJson);
    expect(err.message).toBe(JSON.parse(bodyJson).detail.message);
    expect(isSystemOneError(err)).toBe(true);
  });
});

describe('validationError', () => {
  it('is a 422 with code validation_error and issues keyed loc, msg, type', () => {
    const err = validationError([
      { type: 'missing', msg: 'Field required', loc: ['body', 'model'] },
      { loc: ['body', 'questions', 'q1', 'criteria', 0], msg: 'm', type: 't' },
    ]);
    expect(err.status).toBe(422);
    expect(err.code).toBe('validation_error');
    expect(err.name).toBe('SystemOneError');
    expect(JSON.stringify(err.body)).toBe(
      '{"detail":[{"loc":["body","model"],"msg":"Field required","type":"missing"},' +
        '{"loc":["body","questions","q1","criteria",0],"msg":"m","type":"t"}]}',
    );
    expect(err.message).toBe('Invalid request: body.model: Field required (and 1 more)');
  });

  it('copies the issues, so later edits to the input do not change the error', () => {
    const loc: Array<string | number> = ['body', 'state'];
    const err = validationError([{ loc, msg: 'x', type: 'y' }]);
    loc.push('changed');
    expect(err.body).toEqual({ detail: [{ loc: ['body', 'state'], msg: 'x', type: 'y' }] });
  });
});

describe('SystemOneError.fromBody', () => {
  const originals = [
    validationError([
      { loc: ['body', 'questions', 'a b'], msg: "String should match pattern '^x$'", type: 'p' },
      { loc: ['body', 'questions', 'q', 'criteria', 3], msg: 'm', type: 't' },
    ]),
    apiUsageError('bad'),
    unknownModelError('x'),
    maxTokensExceededError(9, 8),
    overloadedError('busy'),
    internalError('boom'),
  ];
  it.each(originals.map((e) => [e.code, e] as const))(
    'round-trips %s through JSON text and through structuredClone',
    (_code, original) => {
      for (const body of [
        JSON.parse(JSON.stringify(original.body)),
        structuredClone(original.body),
      ]) {
        const rebuilt = SystemOneError.fromBody(original.status, body);
        expect(rebuilt).toBeInstanceOf(SystemOneError);
        expect(rebuilt.name).toBe('SystemOneError');
        expect(rebuilt.status).toBe(original.status);
        expect(rebuilt.code).toBe(original.code);
        expect(rebuilt.message).toBe(original.message);
        expect(JSON.stringify(rebuilt.body)).toBe(JSON.stringify(original.body));
      }
    },
  );

  it('puts issue keys back in the order loc, msg, type', () => {
    const rebuilt = SystemOneError.fromBody(422, {
      detail: [{ type: 'missing', msg: 'Field required', loc: ['body', 'state'] }],
    });
    expect(JSON.stringify(rebuilt.body)).toBe(
      '{"detail":[{"loc":["body","state"],"msg":"Field required","type":"missing"}]}',
    );
  });

  it('keeps an error_type this project does not emit, as the server sent it', () => {
    const rebuilt = SystemOneError.fromBody(401, {
      detail: { error_type: 'authentication_error', message: 'bad key' },
    });
    expect(rebuilt.status).toBe(401);
    expect(rebuilt.code).toBe('authentication_error');
    expect(rebuilt.message).toBe('bad key');
  });

  it('turns bodies of other shapes into an error that keeps the status', () => {
    const notFound = SystemOneError.fromBody(404, { detail: 'Not Found' });
    expect([notFound.status, notFound.code, notFound.message]).toEqual([
      404,
      'api_usage_error',
      'Not Found',
    ]);
    expect(notFound.body).toEqual({
      detail: { error_type: 'api_usage_error', message: 'Not Found' },
    });

    const gateway = SystemOneError.fromBody(502, '<html>Bad Gateway</html>\n');
    expect([gateway.status, gateway.code, gateway.message]).toEqual([
      502,
      'internal_error',
      'HTTP 502: <html>Bad Gateway</html>',
    ]);

    const empty = SystemOneError.fromBody(500, null);
    expect([empty.code, empty.message]).toEqual(['internal_error', 'HTTP 500']);

    const workersAi = SystemOneError.fromBody(400, {
      success: false,
      errors: [{ code: 5006, message: 'Unknown model: y' }],
      result: null,
      messages: [],
    });
    expect([workersAi.code, workersAi.message]).toEqual(['api_usage_error', 'Unknown model: y']);

    // An array detail whose entries are not issues is not taken for a 422 body.
    const odd = SystemOneError.fromBody(422, { detail: [{ loc: 'body', msg: 1 }] });
    expect([odd.code, odd.message]).toEqual(['api_usage_error', 'HTTP 422']);
  });
});

describe('isSystemOneError', () => {
  it('rejects plain errors and look-alike objects that are not Errors', () => {
    expect(isSystemOneError(new Error('x'))).toBe(false);
    expect(isSystemOneError(null)).toBe(false);
    expect(isSystemOneError('SystemOneError')).toBe(false);
    expect(
      isSystemOneError({ name: 'SystemOneError', status: 400, code: 'x', body: { detail: {} } }),
    ).toBe(false);
  });

  it('accepts an error from another copy of the module (same name and fields)', () => {
    const foreign = Object.assign(new Error('from elsewhere'), {
      name: 'SystemOneError',
      status: 503,
      code: 'overloaded',
      body: { detail: { error_type: 'overloaded', message: 'from elsewhere' } },
    });
    expect(foreign instanceof SystemOneError).toBe(false);
    expect(isSystemOneError(foreign)).toBe(true);
  });
});
