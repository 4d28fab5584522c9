/**
 * The engine's failure paths on WASM and WebGPU: device fallback and refusal, a
 * package file whose SHA-256 differs, each bad request's exact System One error (and the next
 * good request still answered), and aborted requests that free their slot.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { deviceOf } from '../../src/core/devices.js';
import type { ErrorBody } from '../../src/protocol/types.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import {
  DEVICES,
  deviceTag,
  FP32,
  MODEL,
  TINY_CONTEXT,
  TOLERANCE,
  decideIn,
  encodedLength,
  expectResponseNear,
  infoOf,
  loadClef,
  mustDecide,
  mustLoad,
  openPage,
  reference,
  stateOfLength,
  type ErrorData,
} from './support/engine.js';

const GOOD = {
  model: MODEL,
  state: 'Where is my parcel? It was due on Monday.',
  questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
};

test.describe('device fallback', () => {
  test("device 'auto' with noWebgpu and a js device that refuses the package falls back to WASM answers", async ({
    page,
  }) => {
    await openPage(page);
    const simulate = { noWebgpu: true, refuseJs: true };
    const info = await mustLoad(page, 'auto', { model: FP32, device: 'auto', simulate });
    expect(info.device).toBe('wasm');
    expect(info.adapter).toBeNull();
    expect(info.fallbackReason).toMatch(/; js skipped: .*simulate\.refuseJs/);
    expect(info.deviceReason).toMatch(
      /^auto: js, first 5 answers in .*; then js skipped: .*simulate\.refuseJs/,
    );
    const got = await mustDecide(page, 'auto', GOOD);
    expectResponseNear(got.response, await reference(GOOD), TOLERANCE.wasm.fp32.probability);
  });

  // SwiftShader is a fallback adapter, which auto passes over: the fault worker makes it look
  // like a hardware GPU, so auto tries it after the js device (which refuses the package here),
  // and the simulated failure moves it to WASM.
  test("device 'auto' with refuseJs and failWebgpuLoad on a hardware-looking adapter falls back to WASM answers", async ({
    page,
  }) => {
    await openPage(page, '/test/browser/pages/reliability.html');
    const out = await page.evaluate(
      ([model]) =>
        window.reliability.load(
          'auto',
          { model, device: 'auto', simulate: { failWebgpuLoad: true, refuseJs: true } },
          ['gpu-adapter'],
        ),
      [FP32] as const,
    );
    if (!out.ok) throw new Error(JSON.stringify(out.error));
    const info = out.value as EngineInfo;
    expect(info.device).toBe('wasm');
    expect(info.adapter).toBeNull();
    expect(info.fallbackReason).toMatch(/webgpu failed to load.*simulate\.failWebgpuLoad/);
    expect(info.deviceReason).toMatch(
      /^auto: js, first 5 answers in .* on WebGPU .*; then webgpu failed/,
    );
    const got = await mustDecide(page, 'auto', GOOD);
    expectResponseNear(got.response, await reference(GOOD), TOLERANCE.wasm.fp32.probability);
  });

  test("an explicit device 'webgpu' without WebGPU is refused with the reason", async ({
    page,
  }) => {
    await openPage(page);
    const out = await loadClef(page, 'gpu', {
      model: FP32,
      device: 'webgpu',
      simulate: { noWebgpu: true },
    });
    expect(out.ok).toBe(false);
    const error = (out as { error: ErrorData }).error;
    expect(error).toMatchObject({ name: 'DeviceError', code: 'device_unavailable', isError: true });
    expect(error.message).toMatch(/webgpu: WebGPU disabled by the caller/);
  });
});

for (const device of DEVICES) {
  test.describe(`errors on ${device}`, { tag: deviceTag(device) }, () => {
    let page: Page;
    test.beforeAll(async ({ browser }) => {
      page = await browser.newPage();
      await openPage(page);
      expect((await mustLoad(page, 'main', { model: FP32, device })).device).toBe(device);
    });
    test.afterAll(async () => {
      await page?.close();
    });

    test('a package file whose SHA-256 differs is refused, naming the file', async () => {
      const file = 'backbone.onnx.data';
      const original = readFileSync(`public/models/tiny/${file}`);
      const flipped = Buffer.from(original);
      flipped[flipped.length >> 1] ^= 0x01;
      const manifest = JSON.parse(readFileSync('public/models/tiny/manifest.json', 'utf8')) as {
        files: Array<{ path: string; sha256: string }>;
      };
      const expected = manifest.files.find((f) => f.path === file)!.sha256;
      const actual = createHash('sha256').update(flipped).digest('hex');
      // Context-wide, so the worker's fetch is served the flipped file.
      await page
        .context()
        .route(`**/models/tiny/${file}`, (route) =>
          route.fulfill({ body: flipped, contentType: 'application/octet-stream' }),
        );
      try {
        const out = await loadClef(page, 'tampered', { model: FP32, device, cache: false });
        expect(out.ok).toBe(false);
        const error = (out as { error: ErrorData }).error;
        expect(error).toMatchObject({
          name: 'IntegrityError',
          code: 'integrity_mismatch',
          details: { file, expected, actual },
        });
        expect(error.message).toContain(file);
      } finally {
        await page.context().unroute(`**/models/tiny/${file}`);
      }
    });

    test('each bad request gets the exact System One error; the next one is answered', async () => {
      test.setTimeout(deviceOf(device).gpu ? 300_000 : 120_000);
      const tooLong = {
        model: MODEL,
        state: await stateOfLength(GOOD.questions, TINY_CONTEXT + 40),
        questions: GOOD.questions,
      };
      const { inputTokens } = await encodedLength(tooLong);
      expect(inputTokens).toBeGreaterThan(TINY_CONTEXT);
      const cases: Array<[string, unknown, number, ErrorBody]> = [
        [
          'a number as state',
          { model: MODEL, state: 5, questions: GOOD.questions },
          422,
          {
            detail: [
              {
                loc: ['body', 'state'],
                msg: 'Input should be a valid string, dictionary or list',
                type: 'state_type',
              },
            ],
          },
        ],
        [
          'an unknown type and an unknown field',
          { model: MODEL, state: 's', questions: { a: { type: 'maybe' } }, extra: 1 },
          422,
          {
            detail: [
              {
                loc: ['body', 'questions', 'a', 'type'],
                msg: "Input should be 'noul', 'choice' or 'score'",
                type: 'literal_error',
              },
              {
                loc: ['body', 'extra'],
                msg: 'Extra inputs are not permitted',
                type: 'extra_forbidden',
              },
            ],
          },
        ],
        [
          'a choice with one option',
          {
            model: MODEL,
            state: 's',
            questions: { q1: { type: 'choice', criteria: { only: null } } },
          },
          422,
          {
            detail: [
              {
                loc: ['body', 'questions', 'q1', 'criteria'],
                msg: 'Dictionary should have at least 2 items after validation, not 1',
                type: 'too_short',
              },
            ],
          },
        ],
        [
          'an unknown model',
          { ...GOOD, model: 'jev-latest' },
          400,
          { detail: { error_type: 'api_usage_error', message: 'Unknown model: jev-latest' } },
        ],
        [
          'a body that is not an object',
          [GOOD],
          400,
          {
            detail: {
              error_type: 'api_usage_error',
              message: 'The request body must be a JSON object, not an array',
            },
          },
        ],
        [
          'a state longer than the context',
          tooLong,
          400,
          {
            detail: {
              error_type: 'max_tokens_exceeded',
              message: `input is ${inputTokens} tokens; the model reads at most ${TINY_CONTEXT}`,
            },
          },
        ],
      ];
      const ref = await reference(GOOD);
      for (const [what, request, status, body] of cases) {
        const bad = await decideIn(page, 'main', request);
        expect(bad.ok, what).toBe(false);
        const error = (bad as { error: ErrorData }).error;
        expect(error, what).toMatchObject({
          name: 'SystemOneError',
          isSystemOneError: true,
          status,
        });
        expect(error.body, what).toEqual(body);
        const good = await mustDecide(page, 'main', GOOD);
        expectResponseNear(good.response, ref, TOLERANCE[device].fp32.probability);
      }
      expect((await infoOf(page, 'main')).counters.pending).toBe(0);
    });

    test('an aborted request rejects with AbortError and frees its slot', async () => {
      test.setTimeout(deviceOf(device).gpu ? 300_000 : 120_000);
      // Long enough to span several 256-token chunks (three: the cancel needs one chunk boundary
      // to land on, and the queued abort needs a request that is still running), so an abort
      // lands while it runs. No longer: SwiftShader runs WebGPU at about 10 ms a token.
      const long = (seed: string) =>
        stateOfLength(GOOD.questions, 600).then((s) => ({ ...GOOD, state: `${seed} ${s}` }));
      const [first, second] = await Promise.all([long('first'), long('second')]);
      await mustDecide(page, 'main', GOOD); // cached from here on
      const before = (await infoOf(page, 'main')).counters;
      const out = await page.evaluate(
        async ([good, first, second]) => {
          const clef = window.enginePage.get('main');
          const errorOf = (p: Promise<unknown>) =>
            p.then(
              () => null,
              (e: unknown) => window.enginePage.errorData(e),
            );
          // 1. Aborted while queued behind a running request.
          const running = clef.decide(first);
          const queued = new AbortController();
          const dropped = errorOf(clef.decide(good, { signal: queued.signal }));
          queued.abort();
          const next = clef.decide(good);
          const queuedError = await dropped;
          const ranFirst = await running.then(() => true);
          const afterQueued = await next;
          // 2. Aborted while running: the queue is empty, so the worker starts the job as soon as
          // the request arrives, and the cancel (posted right after it) reaches the job between
          // two of its three chunks, however fast the machine is.
          const midway = new AbortController();
          const cancelled = errorOf(clef.decide(second, { signal: midway.signal }));
          midway.abort();
          const runningError = await cancelled;
          const afterRunning = await clef.decide(good);
          // 3. Already aborted: refused without reaching the engine.
          const early = errorOf(clef.decide(good, { signal: AbortSignal.abort() }));
          return {
            queuedError,
            ranFirst,
            runningError,
            earlyError: await early,
            answers: [afterQueued.response, afterRunning.response],
            info: await clef.info(),
          };
        },
        [GOOD, first, second] as const,
      );
      for (const [error, when] of [
        [out.queuedError, /queued/],
        [out.runningError, /running/],
        [out.earlyError, /aborted/],
      ] as const) {
        expect(error).toMatchObject({ name: 'AbortError', code: 'aborted', isError: true });
        expect(error!.message).toMatch(when);
      }
      expect(out.ranFirst).toBe(true);
      const ref = await reference(GOOD);
      for (const answer of out.answers) {
        expectResponseNear(answer, ref, TOLERANCE[device].fp32.probability);
      }
      // Nothing held beyond the cache: no pending request, and of the three long states only
      // the completed one was cached (GOOD was cached before `before`).
      const after = out.info.counters;
      expect(after.pending).toBe(0);
      expect(after.decisions - before.decisions).toBe(3);
      expect(after.cacheEntries - before.cacheEntries).toBe(1);
    });
  });
}
