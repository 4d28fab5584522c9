// The clients people already use, unmodified, against `clef-web serve` on the tiny
// package: Cloudflare's SDK (`cloudflare` 7.3.0, which percent-encodes the model's slashes),
// OpenAI's (`openai` 7.55.0: `decisions.create` and `chat.completions.create`) and the TypeSafe
// SDK, without and with `--api-key`. OpenAI answers must equal the System One answers the engine
// gives directly for the same decision, written here by hand from docs/interop.md's mapping.
import Cloudflare, { APIError as CloudflareApiError } from 'cloudflare';
import OpenAI from 'openai';
import { TypeSafeClient, AuthenticationError as TypeSafeAuthError } from '@typesafe-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';

const KEY = 'sk-clef-test-0123456789';
const STATE = 'My card was charged twice for one order and nobody answers my emails.';

let tiny: TinyPackage;
let engine: NodeEngine;
let open: RunningServer;
let locked: RunningServer;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-serve-sdks-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  open = await startServer(nodeEngineBackend(engine), { port: 0 });
  locked = await startServer(nodeEngineBackend(engine), { port: 0, apiKey: KEY });
}, 60_000);

afterAll(async () => {
  await open?.close();
  await locked?.close();
  await engine?.dispose();
  tiny?.remove();
});

/** The engine's own System One answer, for a body written as plain JSON. */
async function direct(body: unknown): Promise<any> {
  return JSON.parse((await engine.decide(body)).json);
}

/** A fetch that records what the SDK sent, then sends it unchanged. */
function recording(log: string[]): typeof fetch {
  return (input, init) => {
    const r = new Request(input as RequestInfo, init);
    log.push(`${r.method} ${new URL(r.url).pathname} ${r.headers.get('authorization')}`);
    return fetch(input, init);
  };
}

const caught = async (p: Promise<unknown>): Promise<any> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe('Cloudflare SDK (ai.run) against serve', () => {
  it('posts to the percent-encoded model path and gets the System One answer as its result', async () => {
    const sent: string[] = [];
    const cf = new Cloudflare({
      apiToken: 'cf-token',
      baseURL: `${open.url}/client/v4`,
      maxRetries: 0,
      fetch: recording(sent),
    });
    const questions = {
      team: { type: 'choice', criteria: { billing: 'Money', shipping: null } },
      urgent: { type: 'noul', instructions: 'Is it urgent?' },
    };
    const result = await cf.ai.run(`@cf/cloudflare/${TINY_MODEL}`, {
      account_id: 'acct-1',
      state: STATE,
      questions,
    } as never);
    expect(sent).toEqual([
      `POST /client/v4/accounts/acct-1/ai/run/@cf%2Fcloudflare%2F${TINY_MODEL} Bearer cf-token`,
    ]);
    expect(result).toEqual(await direct({ model: TINY_MODEL, state: STATE, questions }));

    // A model the server does not have: the Workers AI envelope, read by the SDK's APIError.
    const unknown = await caught(
      cf.ai.run('@cf/cloudflare/no-such-model', {
        account_id: 'a',
        state: 'x',
        questions,
      } as never),
    );
    expect(unknown).toBeInstanceOf(CloudflareApiError);
    expect(unknown.status).toBe(400);
    expect(unknown.errors).toEqual([{ code: 400, message: 'Unknown model: no-such-model' }]);
    const meta = await caught(
      cf.ai.run('@cf/meta/llama-3-8b', { account_id: 'a', prompt: 'hi' } as never),
    );
    expect(meta.status).toBe(404);
    expect(meta.errors[0].message).toMatch(/^No such model "@cf\/meta\/llama-3-8b"/);
  });
});

describe('OpenAI SDK against serve', () => {
  const client = () =>
    new OpenAI({ apiKey: 'sk-unused', baseURL: `${open.url}/v1`, maxRetries: 0 });

  it('decisions.create answers what the engine answers for the same System One decision', async () => {
    const decision = await client().decisions.create({
      model: TINY_MODEL,
      input: STATE,
      questions: [
        { type: 'predicate', name: 'urgent', instructions: 'Is this urgent?' },
        {
          type: 'choice',
          name: 'team',
          instructions: 'Which team?',
          choices: [{ value: 'billing', description: 'Money' }, { value: 'shipping' }],
        },
        {
          type: 'score',
          name: 'anger',
          instructions: 'How angry?',
          levels: [
            { label: 'calm' },
            { label: 'annoyed' },
            { label: 'furious', description: 'Shouting' },
          ],
        },
        // Unnamed, and typed values whose texts clash: ids q3 and "true" / false / "\"true\"".
        {
          type: 'choice',
          instructions: 'Refund?',
          choices: [{ value: true }, { value: false }, { value: 'true' }],
        },
      ],
    });
    const so = await direct({
      model: TINY_MODEL,
      state: STATE,
      questions: {
        urgent: { type: 'noul', instructions: 'Is this urgent?' },
        team: {
          type: 'choice',
          instructions: 'Which team?',
          criteria: { billing: 'Money', shipping: null },
        },
        anger: {
          type: 'score',
          instructions: 'How angry?',
          criteria: ['calm', 'annoyed', { label: 'furious', description: 'Shouting' }],
        },
        q3: {
          type: 'choice',
          instructions: 'Refund?',
          criteria: { true: null, false: null, '"true"': null },
        },
      },
    });
    const a = so.answers;
    const refundValue = { true: true, false: false, '"true"': 'true' } as Record<string, unknown>;
    expect(decision).toEqual({
      answers: [
        { type: 'predicate', name: 'urgent', probability: a.urgent.noul },
        {
          type: 'choice',
          name: 'team',
          choice: a.team.choice,
          confidence: a.team.confidence,
          probabilities: [
            { value: 'billing', probability: a.team.probabilities.billing },
            { value: 'shipping', probability: a.team.probabilities.shipping },
          ],
        },
        {
          type: 'score',
          name: 'anger',
          score: a.anger.score,
          confidence: a.anger.confidence,
          probabilities: ['calm', 'annoyed', 'furious'].map((label, i) => ({
            label,
            value: i,
            probability: a.anger.probabilities[String(i)],
          })),
        },
        {
          type: 'choice',
          name: null,
          choice: refundValue[a.q3.choice],
          confidence: a.q3.confidence,
          probabilities: [
            { value: true, probability: a.q3.probabilities['true'] },
            { value: false, probability: a.q3.probabilities['false'] },
            { value: 'true', probability: a.q3.probabilities['"true"'] },
          ],
        },
      ],
      model: TINY_MODEL,
      usage: {
        input_tokens: so.usage.input_tokens,
        input_tokens_details: { cache_write_tokens: 0, cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: so.usage.input_tokens,
      },
    });
  });

  it('refuses what Clef cannot do with a 400 in OpenAI shape, listing every problem', async () => {
    const e = await caught(
      client().decisions.create({
        model: TINY_MODEL,
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }],
          },
        ],
        questions: [
          { type: 'choice', instructions: 'x', choices: [{ value: 'a' }, { value: 'a' }] },
          { type: 'predicate', instructions: 'y', extra: 1 } as never,
        ],
      }),
    );
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe('input[0].content[0]');
    expect(e.code).toBe('unsupported_value');
    expect(e.message).toMatch(
      /^400 The request has 3 problems: \(1\) .*input_image.*\(2\) .*questions\[0\]\.choices\[1\]\.value.*\(3\) .*questions\[1\]\.extra/,
    );
    const model = await caught(
      client().decisions.create({
        model: 'gpt-6-luna',
        input: 'x',
        questions: [{ type: 'predicate', instructions: 'y' }],
      }),
    );
    expect(model).toBeInstanceOf(OpenAI.NotFoundError);
    expect([model.status, model.code, model.param]).toEqual([404, 'model_not_found', 'model']);
  });

  it('a System One body on /v1/decisions still gets System One', async () => {
    const body = { model: TINY_MODEL, state: STATE, questions: { u: { type: 'noul' } } };
    const res = await fetch(`${open.url}/v1/decisions`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await direct(body));
  });

  it('chat.completions.create with a decision schema at temperature 0', async () => {
    const messages = [
      { role: 'system' as const, content: 'Triage the message.' },
      { role: 'user' as const, content: STATE },
    ];
    const completion = await client().chat.completions.create({
      model: TINY_MODEL,
      temperature: 0,
      messages,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'triage',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              label: { type: 'string', enum: ['billing', 'shipping'] },
              urgent: { type: 'boolean', description: 'Needs an answer today' },
              priority: { type: 'integer', minimum: 1, maximum: 3 },
            },
            required: ['label', 'urgent', 'priority'],
            additionalProperties: false,
          },
        },
      },
    });
    const so = await direct({
      model: TINY_MODEL,
      state: messages,
      questions: {
        label: {
          type: 'choice',
          instructions: 'label',
          criteria: { billing: null, shipping: null },
        },
        urgent: { type: 'noul', instructions: 'urgent: Needs an answer today' },
        priority: { type: 'score', instructions: 'priority', criteria: ['1', '2', '3'] },
      },
    });
    const levels = [0, 1, 2].map((i) => so.answers.priority.probabilities[String(i)] as number);
    const best = levels.indexOf(Math.max(...levels));
    const content = `{"label":${JSON.stringify(so.answers.label.choice)},"urgent":${so.answers.urgent.noul >= 0.5},"priority":${best + 1}}`;
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(TINY_MODEL);
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(completion.usage).toMatchObject({
      prompt_tokens: so.usage.input_tokens,
      completion_tokens: 0,
      total_tokens: so.usage.input_tokens,
    });

    // Free text is refused, saying what would work.
    const text = await caught(
      client().chat.completions.create({ model: TINY_MODEL, messages, temperature: 0 }),
    );
    expect(text).toBeInstanceOf(OpenAI.BadRequestError);
    expect([text.param, text.code]).toEqual(['response_format', 'unsupported_value']);
    expect(text.message).toMatch(/This model decides and does not write text/);
  });
});

describe('serve --api-key with the three SDKs', () => {
  it('each SDK works with the key and gets 401 in its own dialect without it', async () => {
    const questions = { urgent: { type: 'noul' as const, instructions: 'Urgent?' } };
    const expected = await direct({ model: TINY_MODEL, state: STATE, questions });

    const typesafe = (apiKey: string) =>
      new TypeSafeClient({
        apiKey,
        baseURL: locked.url,
        retry: { maxRetries: 0 },
        logLevel: 'off',
      });
    expect(await typesafe(KEY).systemOne({ model: TINY_MODEL, state: STATE, questions })).toEqual(
      expected,
    );
    const ts401 = await caught(
      typesafe('wrong').systemOne({ model: TINY_MODEL, state: STATE, questions }),
    );
    expect(ts401).toBeInstanceOf(TypeSafeAuthError);
    expect(ts401.status).toBe(401);
    expect(ts401.body.detail).toEqual({
      error_type: 'api_usage_error',
      message: 'Incorrect API key provided.',
    });

    const cf = (apiToken: string) =>
      new Cloudflare({ apiToken, baseURL: `${locked.url}/client/v4`, maxRetries: 0 });
    const run = (c: Cloudflare) =>
      c.ai.run(`@cf/cloudflare/${TINY_MODEL}`, {
        account_id: 'a',
        state: STATE,
        questions,
      } as never);
    expect(await run(cf(KEY))).toEqual(expected);
    const cf401 = await caught(run(cf('wrong')));
    expect(cf401).toBeInstanceOf(Cloudflare.AuthenticationError);
    expect(cf401.errors).toEqual([{ code: 401, message: 'Incorrect API key provided.' }]);

    const oa = (apiKey: string) =>
      new OpenAI({ apiKey, baseURL: `${locked.url}/v1`, maxRetries: 0 });
    const ask = (c: OpenAI) =>
      c.decisions.create({
        model: TINY_MODEL,
        input: STATE,
        questions: [{ type: 'predicate', name: 'urgent', instructions: 'Urgent?' }],
      });
    const decision = await ask(oa(KEY));
    expect(decision.answers).toEqual([
      { type: 'predicate', name: 'urgent', probability: expected.answers.urgent.noul },
    ]);
    const oa401 = await caught(ask(oa('wrong')));
    expect(oa401).toBeInstanceOf(OpenAI.AuthenticationError);
    expect([oa401.status, oa401.code]).toEqual([401, 'invalid_api_key']);

    // No header at all, on every route, even one that does not exist.
    for (const [path, method] of [
      ['/v1/models', 'GET'],
      ['/v1/systemone', 'POST'],
      ['/v1/chat/completions', 'POST'],
      ['/nowhere', 'GET'],
    ] as const) {
      const res = await fetch(`${locked.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect([path, res.status, res.headers.get('www-authenticate')]).toEqual([
        path,
        401,
        'Bearer',
      ]);
    }
    const chat = await fetch(`${locked.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(await chat.json()).toEqual({
      error: {
        message: expect.stringMatching(/^You didn't provide an API key/),
        type: 'invalid_request_error',
        param: null,
        code: 'missing_api_key',
      },
    });
  });

  it('refuses to bind beyond loopback without a key, saying how to set one', async () => {
    await expect(
      startServer(nodeEngineBackend(engine), { port: 0, host: '0.0.0.0' }),
    ).rejects.toMatchObject({
      name: 'ServeConfigError',
      code: 'insecure_bind',
      message: expect.stringMatching(
        /--api-key <key> or the CLEF_WEB_API_KEY environment variable.*--insecure-no-auth/,
      ),
    });
    await expect(
      startServer(nodeEngineBackend(engine), { port: 0, apiKey: 'has space' }),
    ).rejects.toMatchObject({ code: 'bad_api_key' });
  });
});
