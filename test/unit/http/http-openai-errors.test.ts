/** The OpenAI error dialect (src/http/openai-errors.ts). */
import { describe, expect, it } from 'vitest';
import {
  invalidRequest,
  isOpenAiError,
  openAiErrorFrom,
  OpenAiError,
} from '../../../src/http/openai-errors.js';
import {
  apiUsageError,
  internalError,
  maxTokensExceededError,
  overloadedError,
  unknownModelError,
  validationError,
} from '../../../src/protocol/errors.js';

describe('OpenAiError', () => {
  it('carries status, code and the exact body', () => {
    const e = invalidRequest([
      { param: 'questions', code: 'array_above_max_length', message: 'Too many.' },
    ]);
    expect(e).toBeInstanceOf(Error);
    expect(e.status).toBe(400);
    expect(e.code).toBe('array_above_max_length');
    expect(JSON.stringify(e.body)).toBe(
      '{"error":{"message":"Too many.","type":"invalid_request_error","param":"questions","code":"array_above_max_length"}}',
    );
    expect(isOpenAiError(e)).toBe(true);
    expect(isOpenAiError(new Error('x'))).toBe(false);
    expect(() => new OpenAiError(400, 'invalid_request_error', [])).toThrow(TypeError);
  });

  it('lists several problems, then the note', () => {
    const e = invalidRequest(
      [
        { param: 'a', code: 'invalid_type', message: 'A is wrong.' },
        { param: 'b', code: 'invalid_value', message: 'B is wrong.' },
      ],
      'Try this.',
    );
    expect(e.message).toBe('The request has 2 problems: (1) A is wrong. (2) B is wrong. Try this.');
    expect(e.body.error).toMatchObject({ param: 'a', code: 'invalid_type' });
    expect(e.problems).toHaveLength(2);
  });
});

describe('openAiErrorFrom', () => {
  const cases: Array<[string, unknown, number, string, string | null, string]> = [
    [
      'unknown model',
      unknownModelError('gpt-6'),
      404,
      'invalid_request_error',
      'model',
      'model_not_found',
    ],
    [
      'too long',
      maxTokensExceededError(70000, 65536),
      400,
      'invalid_request_error',
      'input',
      'context_length_exceeded',
    ],
    [
      'other usage error',
      apiUsageError('Request body is not valid JSON'),
      400,
      'invalid_request_error',
      null,
      'invalid_request',
    ],
    [
      '422',
      validationError([{ loc: ['body', 'state'], msg: 'Field required', type: 'missing' }]),
      400,
      'invalid_request_error',
      null,
      'invalid_request',
    ],
    ['overloaded', overloadedError('No model is loaded'), 503, 'server_error', null, 'overloaded'],
    ['internal', internalError('boom'), 500, 'server_error', null, 'internal_error'],
    ['a thrown Error', new Error('boom'), 500, 'server_error', null, 'internal_error'],
  ];
  it.each(cases)('%s', (_, error, status, type, param, code) => {
    const e = openAiErrorFrom(error, 'input');
    expect(e.status).toBe(status);
    expect(e.body.error).toMatchObject({ type, param, code });
  });

  it('keeps the details: the model name, the token counts, the issue', () => {
    expect(openAiErrorFrom(unknownModelError('gpt-6'), 'input').message).toContain("'gpt-6'");
    expect(
      openAiErrorFrom(maxTokensExceededError(70000, 65536), 'messages').body.error,
    ).toMatchObject({
      param: 'messages',
      message: "Invalid 'messages': input is 70000 tokens; the model reads at most 65536.",
    });
    const issue = validationError([
      { loc: ['body', 'state'], msg: 'Field required', type: 'missing' },
    ]);
    expect(openAiErrorFrom(issue, 'input').message).toBe('body.state: Field required.');
    const same = invalidRequest([{ param: null, code: 'x', message: 'y' }]);
    expect(openAiErrorFrom(same, 'input')).toBe(same);
  });
});
