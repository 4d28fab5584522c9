/**
 * The Workers AI path (src/http/workers-ai-path.ts). The encoded form is what `cloudflare`
 * 7.3.0's `ai.run('@cf/cloudflare/clef-nano', { account_id, ... })` builds with its `path` tag
 * (checked against the SDK's internal/utils/path.js by hand).
 */
import { describe, expect, it } from 'vitest';
import { parseWorkersAiPath } from '../../../src/http/workers-ai-path.js';

const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
const base = `/client/v4/accounts/${ACCOUNT}/ai/run/`;

describe('parseWorkersAiPath', () => {
  it('reads the model with literal or encoded slashes', () => {
    const expected = { account: ACCOUNT, model: '@cf/cloudflare/clef-nano', name: 'clef-nano' };
    for (const model of [
      '@cf/cloudflare/clef-nano', // literal
      '@cf%2Fcloudflare%2Fclef-nano', // the cloudflare SDK
      '@cf%2fcloudflare%2fclef-nano', // lower-case hex
      '@cf/cloudflare%2Fclef-nano', // mixed
      '%40cf%2Fcloudflare%2Fclef-nano', // an encoded @
      '@cf/cloudflare/clef%2Dnano', // an encoded unreserved character
    ]) {
      expect(parseWorkersAiPath(base + model), model).toEqual(expected);
    }
    expect(parseWorkersAiPath(`${base}@cf%2Fcloudflare%2Fclef-flash`)?.name).toBe('clef-flash');
  });

  it('decodes the account segment too', () => {
    expect(
      parseWorkersAiPath('/client/v4/accounts/my%20acct/ai/run/@cf/cloudflare/x')?.account,
    ).toBe('my acct');
  });

  it('is null for other paths, never a throw', () => {
    for (const path of [
      `${base}@cf%2Fcloudflare%2`, // truncated escape
      `${base}@cf%zzcloudflare%2Fclef-nano`, // not hex
      `${base}@cf%2Fcloudflare%2Fclef%C0%AF`, // overlong UTF-8
      `${base}@cf%2Fcloudflare%2Fclef%FF`, // not UTF-8
      `${base}@cf%252Fcloudflare%252Fclef-nano`, // encoded twice
      `${base}@cf/cloudflare/`, // no name
      `${base}@cf/cloudflare/clef-nano/`, // trailing slash
      `${base}@cf/cloudflare/a%2Fb`, // a slash inside the name
      `${base}@cf/cloudflare/clef%00`, // a control character
      `${base}@cf/meta/llama-3`, // another vendor
      `${base}@cf%2Fmeta%2Fllama-3`,
      `${base}clef-nano`,
      `/client/v4/accounts//ai/run/@cf/cloudflare/clef-nano`, // no account
      `/client/v4/accounts/a%2/ai/run/@cf/cloudflare/clef-nano`, // malformed account
      `/client/v4/accounts/a/b/ai/run/@cf/cloudflare/clef-nano`,
      `/v1/systemone`,
      `/client/v4/accounts/${ACCOUNT}/ai/run`,
    ]) {
      expect(() => parseWorkersAiPath(path)).not.toThrow();
      expect(parseWorkersAiPath(path), path).toBeNull();
      expect(parseWorkersAiPath(path)?.name ?? null).toBeNull();
    }
  });
});
