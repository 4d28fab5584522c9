/**
 * The page API in Firefox ESR on WASM and on the js device: createClef on WASM single-threaded
 * and threaded (the page is cross-origin isolated; the threaded engine's worker sees 4 cores,
 * see pages/many-cores.ts; a worker that blocks starting a thread worker, pages/stall-worker.ts,
 * is ended and replaced), and on js, answering like the float64 reference forward, the System
 * One contract's errors rebuilt on the page side, `clef.fetch`, Cache Storage across loads, and
 * the service-worker routes with the unmodified TypeSafe SDK. The numbers' checks are the Chromium
 * suite's (test/browser/support/engine.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import {
  FP32,
  MODEL,
  TOLERANCE,
  expectResponseNear,
  maxAbsDiff,
  randomRequests,
  reference,
  type Outcome,
} from '../browser/support/engine.js';
import type { DecisionWire } from '../../src/wire/wire.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import { must } from '../support/page-outcome.js';
import { connectFirefox, openTestPage, type Firefox } from './support/firefox.js';

const PAGE = '/test/firefox/pages/firefox.html';
/** Seeded requests of every question type; the last one's state crosses a 256-token chunk. */
const REQUESTS = [...randomRequests(29, 3), ...randomRequests(30, 1, 300)];

let firefox: Firefox;
let page: Page;

beforeAll(async () => {
  firefox = await connectFirefox();
  page = await firefox.newPage();
  await openTestPage(page, PAGE);
});
afterAll(async () => {
  await firefox?.close();
});

async function decideAll(name: string): Promise<DecisionWire[]> {
  const outs = (await page.evaluate(
    (n, r) => window.enginePage.decideAll(n, r),
    name,
    REQUESTS,
  )) as Outcome<DecisionWire>[];
  return outs.map((o) => must(o, `decide on ${name}`));
}

async function expectReferenceAnswers(decisions: DecisionWire[]) {
  const { logit, probability } = TOLERANCE.wasm.fp32;
  for (const [i, d] of decisions.entries()) {
    const ref = await reference(REQUESTS[i]);
    expect(maxAbsDiff(d.logits!, ref.logits)).toBeLessThanOrEqual(logit);
    expectResponseNear(d.response, ref, probability);
  }
}

describe('createClef on WASM and js', () => {
  let single: DecisionWire[];

  it('runs in a cross-origin-isolated page; auto picks the js device for the tiny package, and says why', async () => {
    const platform = await page.evaluate(() => window.firefoxPage.platform());
    console.log(`[firefox] ${platform.userAgent}`);
    expect(platform.userAgent).toMatch(/Firefox\/\d+/);
    expect(platform.crossOriginIsolated).toBe(true);
    expect(platform.sharedArrayBuffer).toBe(true);
    const info = must(
      (await page.evaluate(() =>
        window.enginePage.load('auto', { model: '/models/tiny/', warmUp: false }),
      )) as Outcome<EngineInfo>,
      'createClef (auto)',
    );
    // The tiny package is small: the js device answers first, and says why.
    expect(info.device).toBe('js');
    expect(info.deviceReason).toMatch(
      /^auto: js, first 5 answers in \d+ ms against \d+ ms on WASM/,
    );
    expect(info.loadMs.runtime).toMatchObject({ build: 'clef-web js', wasmSource: 'none' });
    await page.evaluate(() => window.enginePage.dispose('auto'));
  });

  it('the js device answers like the float64 reference forward (1e-5 in probability)', async () => {
    const info = must(
      (await page.evaluate(
        (m) => window.enginePage.load('js', { model: m, device: 'js', warmUp: false }),
        FP32,
      )) as Outcome<EngineInfo>,
      'createClef (js)',
    );
    expect(info.device).toBe('js');
    const { logit, probability } = TOLERANCE.js.fp32;
    for (const [i, d] of (await decideAll('js')).entries()) {
      const ref = await reference(REQUESTS[i]);
      expect(maxAbsDiff(d.logits!, ref.logits)).toBeLessThanOrEqual(logit);
      expectResponseNear(d.response, ref, probability);
    }
    await page.evaluate(() => window.enginePage.dispose('js'));
  });

  it('single-threaded: answers equal the float64 reference forward', async () => {
    const info = must(
      (await page.evaluate(
        (m) => window.enginePage.load('one', { model: m, device: 'wasm' }),
        FP32,
      )) as Outcome<EngineInfo>,
      'createClef',
    );
    // This page is isolated, but a 2-core machine leaves the engine one thread (cores - 1).
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    expect(info.threads).toBe(Math.max(1, Math.min(4, cores - 1)));
    single = await decideAll('one');
    await expectReferenceAnswers(single);
  });

  it('threaded (3 threads): the same answers', async () => {
    const info = must(
      (await page.evaluate(
        (m) => window.firefoxPage.loadThreaded('threads', { model: m, device: 'wasm' }),
        FP32,
      )) as Outcome<EngineInfo>,
      'createClef on 3 threads',
    );
    expect(info.threads).toBe(3);
    const threaded = await decideAll('threads');
    await expectReferenceAnswers(threaded);
    // Threads split the work, not the arithmetic: within float32 noise of one thread.
    for (const [i, d] of threaded.entries()) {
      expect(maxAbsDiff(d.logits!, single[i]!.logits!)).toBeLessThanOrEqual(1e-5);
    }
    await page.evaluate(() => window.enginePage.dispose('threads'));
  });

  // Firefox ESR can block for ever inside onnxruntime's `new Worker()` for a thread worker
  // (src/engine/thread-watch.ts); stall-worker.ts does so on purpose.
  async function loadStalling(name: string, stalls: number) {
    return must(
      (await page.evaluate(
        (n, k, m) => window.firefoxPage.loadStalling(n, k, { model: m, device: 'wasm' }),
        name,
        stalls,
        FP32,
      )) as Outcome<{ info: EngineInfo; workers: number; ms: number }>,
      `createClef with ${stalls} stalling workers`,
    );
  }

  it('a thread worker that never starts: the worker is ended and the next one runs threaded', async () => {
    // The replacement is a real worker, and Firefox ESR's own stall can hit it too (3 of 20
    // starts with a core busy): the engine then ends it as well and runs on 1 thread, saying so.
    // That is the next case's path, not this one's, so this case is run again, at most twice.
    // A replacement ended every time (a watch that misfires) still fails here.
    let outcome = await loadStalling('stalled-once', 1);
    for (let again = 1; again <= 2 && outcome.workers === 3; again++) {
      expect(outcome.info.threadsReason).toMatch(/did not return within 10 s.*twice$/);
      console.log(`[firefox] the replacement worker stalled on its own too; run ${again + 1}`);
      await page.evaluate(() => window.enginePage.dispose('stalled-once'));
      outcome = await loadStalling('stalled-once', 1);
    }
    const { info, workers, ms } = outcome;
    expect(workers).toBe(2);
    expect(info.threads).toBe(3);
    expect(info.threadsReason).toBeNull();
    expect(ms).toBeGreaterThanOrEqual(10_000);
    expect(ms).toBeLessThan(40_000);
    await expectReferenceAnswers(await decideAll('stalled-once'));
    await page.evaluate(() => window.enginePage.dispose('stalled-once'));
  });

  it('thread workers that never start, twice: the engine runs on 1 thread and says why', async () => {
    const { info, workers, ms } = await loadStalling('stalled-always', 99);
    expect(workers).toBe(3);
    expect(info.threads).toBe(1);
    expect(info.threadsReason).toMatch(
      /^1 thread: .*thread worker did not return within 10 s.*twice$/,
    );
    expect(ms).toBeLessThan(50_000);
    await expectReferenceAnswers(await decideAll('stalled-always'));
    await page.evaluate(() => window.enginePage.dispose('stalled-always'));
  });
});

describe('the page API', () => {
  it('systemone answers; a bad request is a SystemOneError 422 built on the page side', async () => {
    const out = await page.evaluate(async (model) => {
      const clef = window.enginePage.get('one');
      const answered = await clef.systemone({
        model,
        state: 'My card was charged twice.',
        questions: { urgent: { type: 'noul' } },
      });
      const bad = await clef
        .systemone({ model, state: 'x', questions: { q: { type: 'choice', criteria: {} } } })
        .then(() => null, window.enginePage.errorData);
      const text = JSON.stringify({ model, state: 'late', questions: { u: { type: 'noul' } } });
      const init = { method: 'POST', body: text, headers: { 'content-type': 'application/json' } };
      const routed = await clef.fetch('/v1/systemone', init);
      return {
        answered,
        bad,
        routed: { status: routed.status, body: await routed.json() },
      };
    }, MODEL);
    expect(out.answered.model).toBe(MODEL);
    expect(out.answered.answers.urgent!.type).toBe('noul');
    expect(out.bad).toMatchObject({ isSystemOneError: true, status: 422 });
    expect((out.bad!.body as any).detail[0].loc).toEqual(['body', 'questions', 'q', 'criteria']);
    expect(out.routed.status).toBe(200);
    expect(Object.keys(out.routed.body.answers)).toEqual(['u']);
    expect(firefox.errors).toEqual([]);
  });
});

describe('Cache Storage', () => {
  it('a second load reads every package file from the cache, none from the network', async () => {
    const files = async (name: string) => {
      must(
        (await page.evaluate(
          (n, m) => window.enginePage.load(n, { model: m, device: 'wasm', warmUp: false }),
          name,
          FP32,
        )) as Outcome<EngineInfo>,
        `createClef ${name}`,
      );
      const reports = await page.evaluate(
        (n) => window.enginePage.progress.get(n)!.filter((p) => p.phase === 'download'),
        name,
      );
      await page.evaluate((n) => window.enginePage.dispose(n), name);
      const fromCache = new Map<string, boolean>();
      for (const p of reports) fromCache.set(p.file!, fromCache.get(p.file!) || !!p.fromCache);
      return fromCache;
    };
    // The engines above cached the package already: start from an empty cache.
    await page.evaluate(() => caches.delete('clef-web-packages-v1'));
    const first = await files('cold');
    expect(first.size).toBeGreaterThan(3);
    expect([...first.values()].every((cached) => !cached)).toBe(true);
    const second = await files('warm');
    expect([...second.keys()].sort()).toEqual([...first.keys()].sort());
    expect([...second.values()].every((cached) => cached)).toBe(true);
    const storage = await page.evaluate(async () => ({
      entries: (await (await caches.open('clef-web-packages-v1')).keys()).length,
      ...(await navigator.storage.estimate()),
    }));
    expect(storage.entries).toBe(first.size);
    expect(storage.usage).toBeGreaterThan(0);
    expect(storage.quota).toBeGreaterThan(storage.usage!);
  });
});

describe('the service-worker routes', () => {
  it('the SDK and fetch reach the page engine through a module service worker', async () => {
    const sw = await firefox.newPage();
    try {
      await openTestPage(sw, '/test/browser/pages/sw.html');
      // The same round trip as the Chromium spec (test/browser/pages/sw-round-trip.ts).
      const out = await sw.evaluate((model) => (window as any).swTest.swRoundTrip(model), MODEL);
      expect(out.typed.model).toBe(MODEL);
      expect(['billing', 'shipping']).toContain(out.typed.answers.team.choice);
      expect(out.controlled).toBe(true);
      expect(out.invalid).toMatchObject({ name: 'UnprocessableEntityError', status: 422 });
      expect(out.workerText).toBe(out.pageText);
      expect(out.workerText).toMatch(/"answers":\{"b":.*,"2":/);
      expect(out.stopped.status).toBe(503);
    } finally {
      await sw.close();
    }
  });
});
