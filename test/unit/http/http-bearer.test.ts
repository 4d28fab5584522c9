/** `--api-key` checking (src/http/bearer.ts). */
import { describe, expect, it } from 'vitest';
import {
  bearerFailureMessage,
  checkBearer,
  constantTimeEqual,
  isUsableApiKey,
} from '../../../src/http/bearer.js';
import { authenticationError } from '../../../src/http/openai-errors.js';

const KEY = 'sk-local-3f9a1c';

describe('checkBearer', () => {
  it('accepts the key under the Bearer scheme, in any case, after spaces or tabs', () => {
    for (const header of [`Bearer ${KEY}`, `bearer ${KEY}`, `BEARER  ${KEY}`, `Bearer\t${KEY}`]) {
      expect(checkBearer(header, KEY), header).toBe('ok');
    }
  });

  it('is missing without a bearer credential', () => {
    for (const header of [
      undefined,
      null,
      '',
      'Bearer',
      'Bearer ',
      `Basic ${KEY}`,
      KEY,
      `Bearer${KEY}`,
    ]) {
      expect(checkBearer(header, KEY), String(header)).toBe('missing');
    }
  });

  it('is wrong for any other token, shorter, longer or as long', () => {
    for (const token of [
      'sk-local-3f9a1d', // same length, last byte differs
      'tk-local-3f9a1c', // same length, first byte differs
      KEY.slice(0, -1), // a prefix
      `${KEY}0`, // the key and more
      `${KEY}\u0000`, // padding bytes are not a free pass
      'x',
      KEY.toUpperCase(),
      `${KEY} `, // a trailing space
    ]) {
      expect(checkBearer(`Bearer ${token}`, KEY), JSON.stringify(token)).toBe('wrong');
    }
  });

  it('compares UTF-8 bytes', () => {
    expect(constantTimeEqual('é', 'é')).toBe(true);
    expect(constantTimeEqual('é', 'e\u0301')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('a', '')).toBe(false);
    expect(constantTimeEqual('\u0000', '')).toBe(false);
  });

  it('refuses an empty key, and says which keys a header can carry', () => {
    expect(() => checkBearer('Bearer x', '')).toThrow(TypeError);
    expect(isUsableApiKey(KEY)).toBe(true);
    for (const key of ['', 'has space', 'clé', 'a\tb', 'x'.repeat(4097)])
      expect(isUsableApiKey(key)).toBe(false);
  });

  it('has a message and an OpenAI 401 for each failure', () => {
    expect(bearerFailureMessage('missing')).toContain('Authorization: Bearer');
    for (const [result, code] of [
      ['missing', 'missing_api_key'],
      ['wrong', 'invalid_api_key'],
    ] as const) {
      const e = authenticationError(result);
      expect(e.status).toBe(401);
      expect(e.body.error).toMatchObject({ type: 'invalid_request_error', param: null, code });
    }
  });
});
