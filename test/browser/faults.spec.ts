/**
 * Faults: the engine's worker dies mid-request, the WebGPU device is lost mid-request,
 * package bytes change between download and verify, Cache Storage is full, and a request is
 * aborted at every stage. Each time the caller gets a typed error or its answer (never a hang),
 * no queued request is lost, no tensor is left behind, and the engine answers afterwards.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import type { DecisionStage } from '../../src/core/queue.js';
import type { TestEngineInfo } from '../support/instrumented-worker/instrumented-wire.js';
import {
  FP32,
  MODEL,
  TOLERANCE,
  expectResponseNear,
  infoOf,
  untilWarmedUp,
  mustDecide,
  openPage,
  randomRequests,
  reference,
  stateOfLength,
  type ErrorData,
  type Outcome,
} from './support/engine.js';

const PAGE = '/test/browser/pages/reliability.html';
const CACHE_NAME = 'clef-web-packages-v1';
const GOOD = {
  model: MODEL,
  state: 'Where is my parcel? It was due on Monday.',
  questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
};

type LoadOptions = Parameters<Window['reliability']['load']>[1];

async function load(page: Page, name: string, options: LoadOptions, preload: string[] = []) {
  const out = (await page.evaluate(([n, o, p]) => window.reliability.load(n, o, p as never), [
    name,
    options,
    preload,
  ] as const)) as Outcome<TestEngineInfo>;
  return out;
}

async function mustLoad(page: Page, name: string, options: LoadOptions, preload: string[] = []) {
  const out = await load(page, name, options, preload);
  if (!out.ok) throw new Error(`createClef failed: ${JSON.stringify(out.error)}`);
  await untilWarmedUp(page, name, out.value.device);
  return out.value;
}

/**
 * Once the engine is idle (a replacement worker's warm-up included): nothing pending and no
 * tensor beyond what the prefix cache holds.
 */
async function expectIdleAndClean(page: Page, name: string) {
  await untilWarmedUp(page, name, (await infoOf(page, name)).device);
  const info = await infoOf(page, name);
  expect(info.counters.pending).toBe(0);
  expect(info.counters.liveTensors).toBe(info.counters.cachedTensors);
}

test('the worker dies mid-request (terminated, closed, crashed): the running request gets WorkerLostError, the queued ones are answered', async ({
  page,
}) => {
  await openPage(page, PAGE);
  await mustLoad(page, 'w', { model: FP32, device: 'wasm' });
  const requests = randomRequests(9100, 4);
  const ref = reference(requests[1]);
  // One page, one clef: each death happens to the worker the previous one left behind.
  for (const [round, how] of (['terminate', 'close', 'throw'] as const).entries()) {
    const out = await page.evaluate(
      async ([how, requests]) => {
        const r = window.reliability;
        const clef = window.enginePage.get('w');
        // The first decision waits between two backbone chunks: the worker dies mid-request.
        await r.arm('w', { stallAt: ['backbone'] });
        const order: number[] = [];
        const calls = requests.map((q, i) => clef.decide(q).finally(() => order.push(i)));
        for (;;) {
          const info = (await clef.info()) as TestEngineInfo;
          if (info.stalledAt === 'backbone' && info.counters.pending === requests.length) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        if (how === 'terminate') r.terminate('w');
        else r.fault('w', how);
        const outcomes = await r.settleAll(calls);
        const serial = [];
        for (const q of requests.slice(1)) serial.push((await clef.decide(q)).json);
        return {
          outcomes: outcomes.map((o) => (o.ok ? { ok: true, json: o.value.json } : o)),
          order,
          serial,
          info: await clef.info(),
          workers: r.workersMade('w'),
        };
      },
      [how, requests] as const,
    );
    const [lost, ...queued] = out.outcomes;
    expect(lost!.ok, how).toBe(false);
    const error = (lost as { error: ErrorData }).error;
    expect(error).toMatchObject({ name: 'WorkerLostError', code: 'worker_lost', isError: true });
    expect(error.message).toMatch(how === 'throw' ? /crashed.*simulated worker crash/ : /ended/);
    // Each caller answered once, in order, with the answer a serial call gets.
    expect(out.order).toEqual([0, 1, 2, 3]);
    for (const [k, o] of queued.entries()) {
      expect(o.ok, `${how}: queued request ${k + 1}`).toBe(true);
      expect((o as { json: string }).json).toBe(out.serial[k]);
    }
    // And right: the first queued one against the float64 reference.
    expectResponseNear(JSON.parse(out.serial[0]!), await ref, TOLERANCE.wasm.fp32.probability);
    expect(out.workers).toBe(round + 2);
    expect(out.info.device).toBe('wasm');
    await expectIdleAndClean(page, 'w');
  }
});

test('WebGPU device lost mid-request: the request is answered on WASM, and the next one', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await openPage(page, PAGE);
  const info = await mustLoad(page, 'gpu', {
    model: FP32,
    device: 'webgpu',
    simulate: { loseWebgpuMidDecision: true },
  });
  expect(info.device).toBe('webgpu');
  // Two backbone chunks (256 tokens each), so the device goes between them.
  const long = { ...GOOD, state: await stateOfLength(GOOD.questions, 400) };
  const first = await mustDecide(page, 'gpu', long);
  expectResponseNear(first.response, await reference(long), TOLERANCE.wasm.fp32.probability);
  const after = await infoOf(page, 'gpu');
  expect(after.device).toBe('wasm');
  expect(after.fallbackReason).toMatch(/WebGPU device lost while running/);
  const next = await mustDecide(page, 'gpu', GOOD);
  expectResponseNear(next.response, await reference(GOOD), TOLERANCE.wasm.fp32.probability);
  await expectIdleAndClean(page, 'gpu');
});

test.describe('package bytes that change between download and verify (wasm)', () => {
  const file = 'backbone.onnx.data';
  const original = readFileSync(`public/models/tiny/${file}`);
  const changed = Buffer.from(original);
  changed[changed.length >> 2] ^= 0x10;
  const manifest = JSON.parse(readFileSync('public/models/tiny/manifest.json', 'utf8')) as {
    files: Array<{ path: string; sha256: string }>;
  };
  const expected = manifest.files.find((f) => f.path === file)!.sha256;
  const actual = createHash('sha256').update(changed).digest('hex');

  function expectIntegrityError(out: Outcome<TestEngineInfo>) {
    expect(out.ok).toBe(false);
    const error = (out as { error: ErrorData }).error;
    expect(error).toMatchObject({
      name: 'IntegrityError',
      code: 'integrity_mismatch',
      details: { file, expected, actual },
    });
    expect(error.message).toContain(file);
  }

  test('refused when the server sends other bytes, or the cached copy changed; a later load works', async ({
    page,
  }) => {
    await openPage(page, PAGE);
    // 1. A good load stores the verified files in Cache Storage.
    await mustLoad(page, 'cold', { model: FP32, device: 'wasm', cache: true });
    // 2. The server now sends other bytes for the same file: refused, naming it.
    let reads = 0;
    await page.context().route(`**/models/tiny/${file}`, (route) => {
      reads++;
      return route.fulfill({ body: changed });
    });
    expectIntegrityError(
      await load(page, 'changed', { model: FP32, device: 'wasm', cache: false }),
    );
    expect(reads).toBe(1);
    await page.context().unroute(`**/models/tiny/${file}`);
    // 3. The cached copy changes at rest: refused, naming it, and evicted.
    const key = await page.evaluate(
      async ([name, file, bytes]) => {
        const cache = await caches.open(name);
        const key = (await cache.keys()).find((k) => new URL(k.url).pathname.endsWith(file))!;
        await cache.put(key, new Response(new Uint8Array(bytes)));
        return key.url;
      },
      [CACHE_NAME, file, [...changed]] as const,
    );
    expect(key).toContain(`sha256=${expected}`);
    expectIntegrityError(
      await load(page, 'tampered', { model: FP32, device: 'wasm', cache: true }),
    );
    const stillCached = await page.evaluate(
      async ([name, url]) => (await (await caches.open(name)).match(url)) !== undefined,
      [CACHE_NAME, key] as const,
    );
    expect(stillCached).toBe(false);
    // 4. The next load fetches the file again and answers.
    const fetched: string[] = [];
    page.context().on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await mustLoad(page, 'again', { model: FP32, device: 'wasm', cache: true });
    expect(fetched).toContain(`/models/tiny/${file}`);
    const got = await mustDecide(page, 'again', GOOD);
    expectResponseNear(got.response, await reference(GOOD), TOLERANCE.wasm.fp32.probability);
  });
});

test('Cache Storage quota exhausted: the package loads uncached and info() says so', async ({
  page,
}) => {
  await openPage(page, PAGE);
  const info = await mustLoad(page, 'q', { model: FP32, device: 'wasm', cache: true }, ['quota']);
  expect(info.cacheProblem).toBe('Not cached: storage quota exceeded');
  const got = await mustDecide(page, 'q', GOOD);
  expectResponseNear(got.response, await reference(GOOD), TOLERANCE.wasm.fp32.probability);
  const cached = await page.evaluate(
    async (name) => (await (await caches.open(name)).keys()).map((k) => k.url),
    CACHE_NAME,
  );
  expect(cached.filter((url) => url.includes('/models/tiny/'))).toEqual([]);
});

test('an abort at every stage (queued, encoding, backbone, head) rejects with AbortError', async ({
  page,
}) => {
  await openPage(page, PAGE);
  const stages: DecisionStage[] = ['encoding', 'backbone', 'head'];
  await mustLoad(page, 'a', { model: FP32, device: 'wasm', simulate: { stallAt: stages } });
  // Three 256-token chunks of state: the backbone stall is between two of them.
  const long = { ...GOOD, state: await stateOfLength(GOOD.questions, 700) };
  const out = await page.evaluate(
    async ([good, long, stages]) => {
      const clef = window.enginePage.get('a');
      const errorOf = (p: Promise<unknown>) =>
        p.then(
          () => null,
          (e: unknown) => window.enginePage.errorData(e),
        );
      const waitFor = async (ready: () => Promise<boolean>) => {
        while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 5));
      };
      const errors = [];
      const answers = [];
      // Queued: a request waits behind one held in the encoding stall, and is aborted there.
      const runningAbort = new AbortController();
      const running = errorOf(clef.decide(long, { signal: runningAbort.signal }));
      await waitFor(async () => ((await clef.info()) as TestEngineInfo).stalledAt === 'encoding');
      const queuedAbort = new AbortController();
      const queued = errorOf(clef.decide(good, { signal: queuedAbort.signal }));
      await waitFor(async () => (await clef.info()).counters.pending === 2);
      queuedAbort.abort();
      errors.push(await queued);
      runningAbort.abort();
      errors.push(await running);
      for (const stage of stages.slice(1)) {
        const abort = new AbortController();
        const call = errorOf(clef.decide(long, { signal: abort.signal }));
        // Aborted once the request is known to wait in that stage.
        await waitFor(async () => ((await clef.info()) as TestEngineInfo).stalledAt === stage);
        abort.abort();
        errors.push(await call);
      }
      // (Not between the stalls: the next decision to reach a stall's stage would wait in it.)
      answers.push((await clef.decide(good)).json);
      answers.push((await clef.decide(long)).json, (await clef.decide(good)).json);
      answers.push((await clef.decide(long)).json);
      return { errors, answers, info: (await clef.info()) as TestEngineInfo };
    },
    [GOOD, long, stages] as const,
  );
  const expectedMessages = [
    /queued/,
    /running \(encoding\)/,
    /running \(backbone\)/,
    /running \(head\)/,
  ];
  expect(out.errors).toHaveLength(4);
  out.errors.forEach((error, k) => {
    expect(error).toMatchObject({ name: 'AbortError', code: 'aborted', isError: true });
    expect(error!.message).toMatch(expectedMessages[k]!);
  });
  const refGood = await reference(GOOD);
  // answers: a good request after the aborts, the long one, good, the long one again.
  for (const json of [out.answers[0]!, out.answers[2]!]) {
    expectResponseNear(JSON.parse(json), refGood, TOLERANCE.wasm.fp32.probability);
  }
  // The long request answers the same bytes twice (the aborted attempts left nothing wrong in
  // the prefix cache).
  expect(out.answers[1]).toBe(out.answers[3]);
  expect(out.info.stalledAt).toBeUndefined();
  await expectIdleAndClean(page, 'a');
});
