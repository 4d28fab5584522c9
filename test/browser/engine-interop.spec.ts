/**
 * The engine from the outside, on each device: nothing leaves the page's origin during
 * load and a run of decisions (see DECISIONS), and on the js device no onnxruntime file is
 * fetched at all; the unmodified @typesafe-ai/sdk works
 * through `clef.fetch` (typed answers, its error classes for a 422 and a 400
 * max_tokens_exceeded); a second load reads the package from Cache Storage instead of the
 * network.
 */
import { expect, test, type Page, type Request } from '@playwright/test';
import { deviceOf } from '../../src/core/devices.js';
import {
  DEVICES,
  deviceTag,
  FP32,
  MODEL,
  TINY_CONTEXT,
  TOLERANCE,
  encodedLength,
  expectResponseNear,
  mustLoad,
  openPage,
  reference,
  stateOfLength,
} from './support/engine.js';

/** Records every request of the page's context: the page's own and its workers'. */
function recordRequests(page: Page): string[] {
  const urls: string[] = [];
  page.context().on('request', (r: Request) => urls.push(r.url()));
  return urls;
}

const STATE = 'I ordered a lamp three weeks ago and it still has not shipped.';

/**
 * Decisions after the load. Every 10 of them take each path once: a miss then prefix-cache hits,
 * the three question shapes, clef.systemone, and clef.fetch on /v1/systemone and on the Workers
 * AI route. SwiftShader runs WebGPU on the CPU at about a second a decision, so there it runs
 * those 10; WASM, where a decision costs a few milliseconds, runs 50.
 */
const DECISIONS = { wasm: 50, webgpu: 10, js: 50 } as const;

for (const device of DEVICES) {
  test.describe(`interop on ${device}`, { tag: deviceTag(device) }, () => {
    const decisions = DECISIONS[device];
    // The first two tests share one page (the SDK page: the engine helpers and the SDK) and one
    // engine, recorded from before the page opens: a WebGPU engine's first decisions compile its
    // shaders, tens of seconds on SwiftShader, once instead of twice.
    let shared: Page;
    let urls: string[];
    test.beforeAll(async ({ browser }) => {
      shared = await browser.newPage();
      urls = recordRequests(shared);
      await openPage(shared, '/test/browser/pages/sdk.html');
      expect((await mustLoad(shared, 'main', { model: FP32, device })).device).toBe(device);
    });
    test.afterAll(async () => {
      await shared?.close();
    });

    test(`no request leaves the page origin during load and ${decisions} decisions`, async () => {
      test.setTimeout(deviceOf(device).gpu ? 480_000 : 120_000);
      const origin = new URL(shared.url()).origin;
      // Decisions about one state (prefix-cache hits after the first), some through the fetch
      // routes, one per question shape.
      const answered = await shared.evaluate(
        async ([model, state, decisions]) => {
          const clef = window.enginePage.get('main');
          const count: number[] = [];
          for (let i = 0; i < decisions; i++) {
            const questions = {
              [`q${i}`]:
                i % 3 === 0
                  ? { type: 'noul', instructions: `Is this about item ${i}?` }
                  : i % 3 === 1
                    ? { type: 'choice', criteria: { yes: null, no: `not ${i}` } }
                    : { type: 'score', criteria: ['low', `level ${i}`] },
            };
            const body = { model, state, questions };
            if (i % 5 === 0) {
              const path =
                i % 10 === 0
                  ? '/v1/systemone'
                  : '/client/v4/accounts/x/ai/run/@cf/cloudflare/' + model;
              const response = await clef.fetch(path, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(body),
              });
              if (response.ok) count.push(i);
            } else {
              await clef.systemone(body as any);
              count.push(i);
            }
          }
          return count.length;
        },
        [MODEL, STATE, decisions] as const,
      );
      expect(answered).toBe(decisions);
      // The recorder sees the worker's traffic: the package, and on an onnxruntime device the
      // runtime's wasm; the js device fetches no part of onnxruntime (its wasm, loader, or the
      // onnxruntime-web modules the bundler serves).
      expect(urls.some((u) => u.endsWith('/models/tiny/backbone.onnx.data'))).toBe(true);
      const onnxruntime = urls.filter((u) => /\/ort\/|onnxruntime/.test(new URL(u).pathname));
      if (deviceOf(device).runtime === 'js') expect(onnxruntime).toEqual([]);
      else expect(onnxruntime.some((u) => /\/ort\/ort-wasm[^/]*\.wasm$/.test(u))).toBe(true);
      const foreign = urls.filter((u) => new URL(u).origin !== origin);
      expect(foreign).toEqual([]);
      console.log(`${device}: ${urls.length} requests, all from ${origin}`);
    });

    test('the unmodified @typesafe-ai/sdk works through clef.fetch', async () => {
      test.setTimeout(deviceOf(device).gpu ? 300_000 : 120_000);
      const questions = {
        urgent: { type: 'noul', instructions: 'Is this urgent?' },
        team: { type: 'choice', criteria: { billing: 'money', shipping: 'parcels' } },
        anger: { type: 'score', criteria: ['calm', 'annoyed', 'furious'] },
      };
      const tooLong = {
        model: MODEL,
        state: await stateOfLength(questions, TINY_CONTEXT + 30),
        questions,
      };
      const out = await shared.evaluate(
        async ([model, state, questions, tooLong]) => {
          const sdk = (window as any).typesafeSdk;
          const clef = window.enginePage.get('main');
          const calls: Array<{ method: string; url: string; auth: string | null }> = [];
          const fetch = (input: string, init?: RequestInit) => {
            const r = new Request(input, init);
            calls.push({ method: r.method, url: r.url, auth: r.headers.get('authorization') });
            return clef.fetch(input, init);
          };
          const options = {
            apiKey: 'not-a-real-key',
            fetch,
            dangerouslyAllowBrowser: true,
            retry: { maxRetries: 0 },
            timeout: 600_000,
            logLevel: 'off',
          };
          const client = new sdk.TypeSafeClient(options);
          const caught = async (p: Promise<unknown>) => {
            try {
              await p;
              return null;
            } catch (e: any) {
              return {
                unprocessable: e instanceof sdk.UnprocessableEntityError,
                badRequest: e instanceof sdk.BadRequestError,
                apiError: e instanceof sdk.APIError,
                status: e.status,
                body: e.body,
              };
            }
          };
          const typed = await client.systemOne({ model, state, questions });
          const direct = await clef.systemone({ model, state, questions } as any);
          const models = await client.models.list();
          const invalid = await caught(client.systemOne({ model, state: 5, questions }));
          const overLength = await caught(client.systemOne(tooLong));
          // The SDK fills in its default model, jev-latest, when the request has none.
          const defaulted = await caught(client.systemOne({ state, questions }));
          const configured = new sdk.TypeSafeClient({ ...options, defaultModel: model });
          const viaDefault = await configured.systemOne({ state, questions });
          return { typed, direct, models, invalid, overLength, defaulted, viaDefault, calls };
        },
        [MODEL, STATE, questions, tooLong] as const,
      );
      const request = { model: MODEL, state: STATE, questions };
      expectResponseNear(out.typed, await reference(request), TOLERANCE[device].fp32.probability);
      expect(out.typed).toEqual(out.direct);
      expect(out.viaDefault).toEqual(out.direct);
      expect(out.typed.answers.team.choice).toMatch(/^(billing|shipping)$/);
      expect(out.models.map((m: { name: string }) => m.name)).toEqual([MODEL, 'clef-tiny-random']);

      expect(out.invalid).toMatchObject({ unprocessable: true, apiError: true, status: 422 });
      expect(out.invalid!.body).toEqual({
        detail: [
          {
            loc: ['body', 'state'],
            msg: 'Input should be a valid string, dictionary or list',
            type: 'state_type',
          },
        ],
      });
      const { inputTokens } = await encodedLength(tooLong);
      expect(out.overLength).toMatchObject({ badRequest: true, status: 400 });
      expect(out.overLength!.body).toEqual({
        detail: {
          error_type: 'max_tokens_exceeded',
          message: `input is ${inputTokens} tokens; the model reads at most ${TINY_CONTEXT}`,
        },
      });
      expect(out.defaulted).toMatchObject({ badRequest: true, status: 400 });
      expect(out.defaulted!.body).toEqual({
        detail: { error_type: 'api_usage_error', message: 'Unknown model: jev-latest' },
      });

      // The SDK's paths (on its default base URL, which clef.fetch serves locally) and its key.
      expect(out.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
        'POST https://api.typesafe.ai/v1/systemone',
        'GET https://api.typesafe.ai/v1/models',
        ...Array(4).fill('POST https://api.typesafe.ai/v1/systemone'),
      ]);
      expect(new Set(out.calls.map((c) => c.auth))).toEqual(new Set(['Bearer not-a-real-key']));
      // The SDK's requests are answered in the page: none of them reached the network.
      const origin = new URL(shared.url()).origin;
      expect(urls.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    });

    test('a second load reads the package from Cache Storage, not the network', async ({
      page,
    }) => {
      test.setTimeout(deviceOf(device).gpu ? 240_000 : 60_000);
      const urls = recordRequests(page);
      await openPage(page);
      const first = await mustLoad(page, 'first', { model: FP32, device });
      expect(first.cacheProblem).toBeNull();
      const firstFiles = urls.filter((u) => u.includes('/models/tiny/'));
      expect(firstFiles.length).toBeGreaterThan(5);
      await page.evaluate(() => window.enginePage.dispose('first'));

      urls.length = 0;
      const second = await mustLoad(page, 'second', { model: FP32, device });
      expect(second.device).toBe(device);
      expect(second.cacheProblem).toBeNull();
      // manifest.json is asked again (it names the hashes); no package file is.
      const packageRequests = urls.filter((u) => u.includes('/models/tiny/'));
      expect(packageRequests.map((u) => new URL(u).pathname)).toEqual([
        '/models/tiny/manifest.json',
      ]);
      const progress = await page.evaluate(() =>
        window.enginePage.progress.get('second')!.filter((p) => p.phase === 'download'),
      );
      expect(progress.length).toBeGreaterThan(5);
      expect(progress.every((p) => p.fromCache === true)).toBe(true);
    });
  });
}
