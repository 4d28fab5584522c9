/**
 * One engine for every tab in Firefox ESR: the Chromium suite's checks
 * (test/browser/shared-engine.spec.ts) on WASM and the tiny package, every tab through a
 * counting proxy (test/support/counting-proxy.ts) that sees the shared worker's requests too.
 * Whether the worker is gone is read from the origin's Web Locks: each tab and the worker hold
 * theirs only while they live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import {
  FP32,
  MODEL,
  maxAbsDiff,
  randomRequests,
  type Outcome,
} from '../browser/support/engine.js';
import type { Answer } from '../browser/pages/shared-page.js';
import type { DecisionWire } from '../../src/wire/wire.js';
import type { TestEngineInfo } from '../support/instrumented-worker/instrumented-wire.js';
import { countingProxy, type CountingProxy } from '../support/counting-proxy.js';
import { must } from '../support/page-outcome.js';
import { connectFirefox, origin, type Firefox } from './support/firefox.js';

const PAGE = '/test/browser/pages/shared.html';
const SHARED = { model: FP32, device: 'wasm', shared: true, warmUp: false } as const;
const REQUESTS = randomRequests(3801, 3);

let firefox: Firefox;
let proxy: CountingProxy;

beforeAll(async () => {
  firefox = await connectFirefox();
  proxy = await countingProxy(origin());
});
afterAll(async () => {
  await firefox?.close();
  await proxy?.close();
});

async function openTab(hideSharedWorker = false): Promise<Page> {
  const page = await firefox.newPage();
  if (hideSharedWorker) {
    await page.evaluateOnNewDocument(() => {
      delete (globalThis as { SharedWorker?: unknown }).SharedWorker;
    });
  }
  await page.goto(`${proxy.origin}${PAGE}`);
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'ready', {
    timeout: 60_000,
  });
  return page;
}

async function load(page: Page, name: string, options: object): Promise<TestEngineInfo> {
  const out = (await page.evaluate(
    (n, o) => window.enginePage.load(n, o as never),
    name,
    options,
  )) as Outcome<TestEngineInfo>;
  return must(out, `createClef(${JSON.stringify(options)})`);
}

async function info(page: Page, name: string): Promise<TestEngineInfo> {
  return must(
    (await page.evaluate((n) => window.enginePage.info(n), name)) as Outcome<TestEngineInfo>,
    'info',
  );
}

async function decideAll(page: Page, name: string, requests: unknown[]): Promise<DecisionWire[]> {
  const outs = (await page.evaluate(
    (n, r) => window.enginePage.decideAll(n, r),
    name,
    requests,
  )) as Outcome<DecisionWire>[];
  return outs.map((o) => must(o, 'decide'));
}

async function clefLocks(page: Page): Promise<string[]> {
  const names = await page.evaluate(() => window.sharedPage.locks());
  return names.filter((n) => n.startsWith('clef-web'));
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

const requested = (from: number, prefix: string) =>
  proxy.paths.slice(from).filter((p) => p.startsWith(prefix));
const repeated = (paths: string[]) => paths.filter((p, i) => paths.indexOf(p) !== i);

describe('createClef({ shared: true }) in Firefox ESR', () => {
  it('three tabs share one engine: the package fetched once, one runtime start, the answers of a dedicated engine', async () => {
    const tabs = [await openTab(), await openTab(), await openTab()];
    const from = proxy.paths.length;
    const infos = await Promise.all(tabs.map((tab) => load(tab, 's', SHARED)));
    const pkg = requested(from, FP32);
    expect(pkg.filter((p) => p.endsWith('/manifest.json'))).toHaveLength(1);
    expect(repeated(pkg)).toEqual([]);
    expect(requested(from, '/ort/').filter((p) => /\.wasm(\?|$)/.test(p))).toHaveLength(1);
    for (const i of infos) {
      expect(i.worker).toBe('shared');
      expect(i.loadMs).toEqual(infos[0]!.loadMs);
    }
    const answers = await Promise.all(tabs.map((tab) => decideAll(tab, 's', REQUESTS)));
    const counters = (await info(tabs[0]!, 's')).counters;
    expect(counters.tabs).toBe(3);
    expect(counters.decisions).toBe(3 * REQUESTS.length);

    const dedicated = await load(tabs[0]!, 'd', { model: FP32, device: 'wasm', warmUp: false });
    expect(dedicated.worker).toBe('dedicated');
    const own = await decideAll(tabs[0]!, 'd', REQUESTS);
    for (const tabAnswers of answers) {
      expect(tabAnswers.map((a) => a.json)).toEqual(own.map((a) => a.json));
      const bound = dedicated.threads === infos[0]!.threads ? 0 : 1e-5;
      for (const [k, a] of tabAnswers.entries()) {
        expect(maxAbsDiff(a.logits!, own[k]!.logits!)).toBeLessThanOrEqual(bound);
      }
    }

    const joinFrom = proxy.paths.length;
    const fourth = await openTab();
    const first = await fourth.evaluate(
      (o, r) => window.sharedPage.firstAnswer('s', o as never, r),
      SHARED,
      REQUESTS[0],
    );
    expect(first.json).toBe(own[0]!.json);
    expect(first.info.counters.tabs).toBe(4);
    expect(requested(joinFrom, FP32)).toEqual([]);
    console.log(`[firefox shared] a fourth tab's first answer: ${first.ms.toFixed(0)} ms`);
    // Every tab disposes its clefs and stays open: the last one out ends the worker.
    for (const tab of [...tabs, fourth]) await tab.evaluate(() => window.enginePage.dispose('s'));
    await tabs[0]!.evaluate(() => window.enginePage.dispose('d'));
    expect(
      await until(
        () => clefLocks(fourth),
        (l) => l.length === 0,
      ),
    ).toEqual([]);
    for (const tab of [...tabs, fourth]) await tab.close();
  });

  it("a tab closed while its request runs: the others' requests are answered, its own dropped; the last tab gone, the worker is gone", async () => {
    const [a, b, c] = [await openTab(), await openTab(), await openTab()];
    const stalling = { ...SHARED, simulate: { stallAt: ['head'] } };
    for (const tab of [a!, b!, c!]) await load(tab, 's', stalling);
    await a!.evaluate((r) => window.sharedPage.send('s', r), REQUESTS[0]);
    expect(
      await until(
        async () => (await info(b!, 's')).stalledAt,
        (s) => s === 'head',
      ),
    ).toBe('head');
    const others = [b!, c!].map((tab) =>
      tab.evaluate((r) => window.sharedPage.burst('s', r), REQUESTS.slice(1)),
    );
    await until(
      async () => (await info(b!, 's')).counters.pending,
      (n) => n === 5,
    );
    const closed = Date.now();
    await a!.close();
    const answered = (await Promise.all(others)).flat() as Answer[];
    expect(answered.map((x) => x.error ?? 'ok')).toEqual(Array(4).fill('ok'));
    expect(Date.now() - closed).toBeLessThan(15_000);
    const after = await info(b!, 's');
    expect(after.counters.decisions).toBe(4);
    expect(after.counters.pending).toBe(0);
    expect(after.counters.tabs).toBe(2);

    const watcher = await openTab();
    expect((await clefLocks(watcher)).length).toBeGreaterThan(0);
    await b!.close();
    await c!.goto('about:blank');
    expect(
      await until(
        () => clefLocks(watcher),
        (l) => l.length === 0,
      ),
    ).toEqual([]);
    for (const tab of [c!, watcher]) await tab.close();
  });

  it('a bursting tab (200 requests) and a quiet one (one a second): each quiet decision waits behind one running decision at most', async () => {
    const [busy, quiet] = [await openTab(), await openTab()];
    await load(busy!, 's', SHARED);
    await load(quiet!, 's', SHARED);
    const burst = randomRequests(3802, 200);
    const one = {
      model: MODEL,
      state: 'Is the parcel late?',
      questions: { late: { type: 'noul' } },
    };
    const [bursting, quietly] = (await Promise.all([
      busy!.evaluate((r) => window.sharedPage.burst('s', r), burst),
      quiet!.evaluate((r) => window.sharedPage.quiet('s', r, 4, 1000), one),
    ])) as [Answer[], Answer[]];
    expect(bursting.filter((x) => !x.ok)).toEqual([]);
    expect(quietly.filter((x) => !x.ok)).toEqual([]);
    const burstEnd = Math.max(...bursting.map((x) => x.answeredAt));
    const during = quietly.filter((x) => x.sentAt < burstEnd);
    expect(during.length, 'quiet requests sent during the burst').toBeGreaterThanOrEqual(2);
    for (const x of during) expect(x.behind, JSON.stringify(during)).toBeLessThanOrEqual(1);
    expect(Math.max(...bursting.map((x) => x.behind!))).toBeGreaterThanOrEqual(150);
    console.log(
      `[firefox shared] burst of 200 over ${((burstEnd - bursting[0]!.sentAt) / 1000).toFixed(1)} s; ` +
        `quiet requests waited behind ${during.map((x) => x.behind).join(', ')} decisions`,
    );
    for (const tab of [busy!, quiet!]) await tab.close();
  });

  it('without SharedWorker, shared: true runs a dedicated worker and info() says why', async () => {
    const tab = await openTab(true);
    const got = await load(tab, 's', SHARED);
    expect(got.worker).toBe('dedicated');
    expect(got.workerReason).toMatch(/shared: true asked, but this browser has no SharedWorker/);
    expect((await decideAll(tab, 's', REQUESTS.slice(0, 1)))[0]!.response.model).toBe(MODEL);
    await tab.close();
  });
});
