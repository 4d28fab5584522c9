/**
 * One engine for every tab: createClef({ shared: true }) in Chromium, on WASM and
 * the tiny package. Every tab is opened through a counting proxy (test/support/
 * counting-proxy.ts), which sees each request of every page and worker, the shared one
 * included. Memory and the first answers' speed are the benchmark's
 * (tools/bench/shared-tabs.ts); the same behaviour in Firefox ESR is test/firefox/shared.test.ts.
 */
import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { countingProxy, type CountingProxy } from '../support/counting-proxy.js';
import { must } from '../support/page-outcome.js';
import { FP32, MODEL, Q4, maxAbsDiff, randomRequests, type Outcome } from './support/engine.js';
import type { Answer } from './pages/shared-page.js';
import type { DecisionWire } from '../../src/wire/wire.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import type { TestEngineInfo } from '../support/instrumented-worker/instrumented-wire.js';

const PAGE = '/test/browser/pages/shared.html';
const SHARED = { model: FP32, device: 'wasm', shared: true, warmUp: false } as const;
const REQUESTS = randomRequests(3801, 3);

let proxy: CountingProxy;

test.beforeAll(async ({ browser: _browser }, testInfo) => {
  proxy = await countingProxy(String(testInfo.project.use.baseURL));
});
test.afterAll(async () => {
  await proxy?.close();
});

/**
 * A tab of the app, through the proxy, with Vite's HMR socket stubbed
 * (test/browser/support/engine.ts).
 */
async function openTab(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.routeWebSocket(/.*/, () => undefined);
  page.on('console', (m) => {
    if (m.type() === 'error') console.log(`[page error] ${m.text()}`);
  });
  await page.goto(`${proxy.origin}${PAGE}`);
  await expect(page.locator('#status')).toHaveText('ready');
  return page;
}

async function load(page: Page, name: string, options: object): Promise<TestEngineInfo> {
  const out = (await page.evaluate(([n, o]) => window.enginePage.load(n, o as never), [
    name,
    options,
  ] as const)) as Outcome<TestEngineInfo>;
  return must(out, `createClef(${JSON.stringify(options)})`);
}

async function info(page: Page, name: string): Promise<TestEngineInfo> {
  const out = (await page.evaluate(
    (n) => window.enginePage.info(n),
    name,
  )) as Outcome<TestEngineInfo>;
  return must(out, 'info');
}

async function decideAll(page: Page, name: string, requests: unknown[]): Promise<DecisionWire[]> {
  const outs = (await page.evaluate(([n, r]) => window.enginePage.decideAll(n, r), [
    name,
    requests,
  ] as const)) as Outcome<DecisionWire>[];
  return outs.map((o) => must(o, 'decide'));
}

/** The clef-web Web Locks of the origin, as a tab that holds none sees them. */
async function clefLocks(page: Page): Promise<string[]> {
  const names = await page.evaluate(() => window.sharedPage.locks());
  return names.filter((n) => n.startsWith('clef-web'));
}

/** Chromium's shared workers now (their names). */
async function sharedWorkers(browser: Browser): Promise<string[]> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = await cdp.send('Target.getTargets');
    return targetInfos.filter((t) => t.type === 'shared_worker').map((t) => t.title);
  } finally {
    await cdp.detach();
  }
}

/**
 * Paths requested since `from` (an index into proxy.requests) that start with `prefix`: by any
 * method, or by `method` only (GET downloads a file; HEAD probes it and transfers no body).
 */
const requested = (from: number, prefix: string, method?: 'GET' | 'HEAD') =>
  proxy.requests
    .slice(from)
    .filter((r) => r.path.startsWith(prefix) && (method === undefined || r.method === method))
    .map((r) => r.path);
const repeated = (paths: string[]) => paths.filter((p, i) => paths.indexOf(p) !== i);

test('three tabs share one engine: the package fetched once, one runtime start, the answers of a dedicated engine', async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  try {
    const tabs = [await openTab(context), await openTab(context), await openTab(context)];
    const from = proxy.requests.length;
    // All three at once: the second and third join the load the first started.
    const infos = await Promise.all(tabs.map((tab) => load(tab, 's', SHARED)));
    const pkg = requested(from, FP32);
    expect(pkg.filter((p) => p.endsWith('/manifest.json'))).toHaveLength(1);
    expect(repeated(pkg), 'package files fetched twice').toEqual([]);
    const wasm = requested(from, '/ort/', 'GET').filter((p) => /\.wasm(\?|$)/.test(p));
    expect(wasm, 'onnxruntime wasm fetches (one per runtime start)').toHaveLength(1);
    expect(repeated(requested(from, '/ort/', 'GET')), 'runtime files downloaded twice').toEqual([]);
    // Before its import, the worker asks the server which runtime builds it serves: one HEAD per
    // loader, once per worker (src/engine/runtime-files.ts servedBuilds), never once per tab.
    // The loader it then imports is therefore requested twice, HEAD then GET; nothing else is.
    const probes = requested(from, '/ort/', 'HEAD');
    expect(repeated(probes), 'runtime probes repeated').toEqual([]);
    expect(
      probes.filter((p) => !p.endsWith('.mjs')),
      'probes of anything but a loader',
    ).toEqual([]);
    expect(requested(from, '/ort/').length, 'requests under /ort/ other than GET or HEAD').toBe(
      requested(from, '/ort/', 'GET').length + probes.length,
    );
    for (const i of infos) {
      expect(i.worker).toBe('shared');
      expect(i.workerReason).toMatch(/^shared: true: one engine in a SharedWorker/);
      // One load: every tab sees the same one.
      expect(i.loadMs).toEqual(infos[0]!.loadMs);
    }
    expect((await info(tabs[2]!, 's')).counters.tabs).toBe(3);

    const answers = await Promise.all(tabs.map((tab) => decideAll(tab, 's', REQUESTS)));
    const counters = (await info(tabs[0]!, 's')).counters;
    expect(counters.decisions, 'one engine counts every tab').toBe(3 * REQUESTS.length);
    expect(counters.prefixHits, 'the prefix cache is shared').toBeGreaterThanOrEqual(
      2 * REQUESTS.length,
    );
    expect(counters.liveTensors).toBe(counters.cachedTensors);

    // A dedicated engine in the first tab answers the same.
    const dedicated = await load(tabs[0]!, 'd', { model: FP32, device: 'wasm', warmUp: false });
    expect(dedicated.worker).toBe('dedicated');
    const own = await decideAll(tabs[0]!, 'd', REQUESTS);
    for (const tabAnswers of answers) {
      expect(tabAnswers.map((a) => a.json)).toEqual(own.map((a) => a.json));
      for (const [k, a] of tabAnswers.entries()) {
        // Both run one thread here; threads would move logits by float32 noise only.
        const bound = dedicated.threads === infos[0]!.threads ? 0 : 1e-5;
        expect(maxAbsDiff(a.logits!, own[k]!.logits!)).toBeLessThanOrEqual(bound);
      }
    }

    // Another package, or another device, is another engine, never the same one.
    const q4 = await load(tabs[1]!, 'q4', { ...SHARED, model: Q4 });
    const auto = await load(tabs[1]!, 'auto', { ...SHARED, device: 'auto' });
    expect(q4.manifestSha256).not.toBe(infos[0]!.manifestSha256);
    expect([q4.counters.tabs, auto.counters.tabs]).toEqual([1, 1]);
    expect((await info(tabs[1]!, 's')).counters.tabs).toBe(3);
    expect(await sharedWorkers(browser)).toHaveLength(3);

    // A fourth tab joins the loaded engine: no package request, its first answer at once.
    const joinFrom = proxy.requests.length;
    const fourth = await openTab(context);
    const first = await fourth.evaluate(
      ([o, r]) => window.sharedPage.firstAnswer('s', o as never, r),
      [SHARED, REQUESTS[0]] as const,
    );
    expect(first.json).toBe(own[0]!.json);
    expect(first.info.counters.tabs).toBe(4);
    expect(requested(joinFrom, FP32)).toEqual([]);
    expect(requested(joinFrom, '/ort/')).toEqual([]);
    console.log(`[shared] a fourth tab's first answer: ${first.ms.toFixed(0)} ms`);

    // Every tab disposes its clef and stays open: the last one out ends the worker.
    for (const tab of [...tabs, fourth]) await tab.evaluate(() => window.enginePage.dispose('s'));
    // (The tiny-q4 and device 'auto' engines of the second tab stay.)
    const ofThisEngine = (n: string) => n.includes(`"device":"wasm"`) && n.includes('/tiny/"');
    await expect.poll(async () => (await sharedWorkers(browser)).filter(ofThisEngine)).toEqual([]);
    expect((await sharedWorkers(browser)).length).toBe(2);
    expect((await clefLocks(fourth)).filter(ofThisEngine)).toEqual([]);
  } finally {
    await context.close();
  }
});

test("a tab closed while its request runs: the other tabs' requests are answered, its own dropped; the last tab gone, the worker is gone", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  try {
    const [a, b, c] = [await openTab(context), await openTab(context), await openTab(context)];
    // Each engine's first decision to reach the head waits there until it is cancelled (30 s).
    const stalling = { ...SHARED, simulate: { stallAt: ['head'] } };
    for (const tab of [a!, b!, c!]) await load(tab, 's', stalling);
    await a!.evaluate((r) => window.sharedPage.send('s', r), REQUESTS[0]);
    await expect.poll(async () => (await info(b!, 's')).stalledAt).toBe('head');
    const others = [b!, c!].map((tab) =>
      tab.evaluate((r) => window.sharedPage.burst('s', r), REQUESTS.slice(1)),
    );
    await expect.poll(async () => (await info(b!, 's')).counters.pending).toBe(5);
    const closed = Date.now();
    await a!.close();
    const answered = (await Promise.all(others)).flat();
    const waited = Date.now() - closed;
    expect(answered.map((x: Answer) => x.error ?? 'ok')).toEqual(Array(4).fill('ok'));
    // Well before the stall's 30 s: the worker noticed the closed tab and cancelled its request.
    expect(waited).toBeLessThan(15_000);
    const after = await info(b!, 's');
    expect(after.counters.decisions, "the closed tab's request was not decided").toBe(4);
    expect(after.counters.pending).toBe(0);
    expect(after.counters.tabs).toBe(2);
    expect(after.counters.liveTensors).toBe(after.counters.cachedTensors);

    // The last tabs leave (one closes, one navigates away): the worker ends.
    const watcher = await openTab(context);
    expect((await clefLocks(watcher)).length).toBeGreaterThan(0);
    expect(await sharedWorkers(browser)).toHaveLength(1);
    await b!.close();
    await c!.goto('about:blank');
    await expect.poll(() => clefLocks(watcher), { timeout: 10_000 }).toEqual([]);
    await expect.poll(() => sharedWorkers(browser), { timeout: 10_000 }).toEqual([]);
  } finally {
    await context.close();
  }
});

test('a bursting tab (200 requests) and a quiet one (one a second): each quiet decision waits behind one running decision at most', async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  try {
    const [busy, quiet] = [await openTab(context), await openTab(context)];
    await load(busy!, 's', SHARED);
    await load(quiet!, 's', SHARED);
    // Distinct states (no prefix-cache hits), so each decision runs the backbone in full.
    const burst = randomRequests(3802, 200);
    const one = {
      model: MODEL,
      state: 'Is the parcel late?',
      questions: { late: { type: 'noul' } },
    };
    const [bursting, quietly] = await Promise.all([
      busy!.evaluate((r) => window.sharedPage.burst('s', r), burst),
      quiet!.evaluate((r) => window.sharedPage.quiet('s', r, 4, 1000), one),
    ]);
    expect(bursting.filter((x) => !x.ok)).toEqual([]);
    expect(quietly.filter((x) => !x.ok)).toEqual([]);
    const burstEnd = Math.max(...bursting.map((x) => x.answeredAt));
    const during = quietly.filter((x) => x.sentAt < burstEnd);
    // The check means something only while the burst still has requests waiting.
    expect(during.length, 'quiet requests sent during the burst').toBeGreaterThanOrEqual(2);
    for (const x of during) expect(x.behind, JSON.stringify(during)).toBeLessThanOrEqual(1);
    // The measure sees waiting where there is some: the burst's own last requests.
    expect(Math.max(...bursting.map((x) => x.behind!))).toBeGreaterThanOrEqual(150);
    console.log(
      `[shared] burst of 200 over ${((burstEnd - bursting[0]!.sentAt) / 1000).toFixed(1)} s; ` +
        `quiet requests waited behind ${during.map((x) => x.behind).join(', ')} decisions ` +
        `(${during.map((x) => x.waitedMs!.toFixed(0)).join(', ')} ms)`,
    );
  } finally {
    await context.close();
  }
});

test('without SharedWorker, shared: true runs a dedicated worker and info() says why', async ({
  browser,
}) => {
  const context = await browser.newContext();
  try {
    await context.addInitScript(() => {
      delete (globalThis as { SharedWorker?: unknown }).SharedWorker;
    });
    const tab = await openTab(context);
    const got = await load(tab, 's', SHARED);
    expect(got.worker).toBe('dedicated');
    expect(got.workerReason).toMatch(/shared: true asked, but this browser has no SharedWorker/);
    const [answer] = await decideAll(tab, 's', REQUESTS.slice(0, 1));
    expect(answer!.response.model).toBe(MODEL);
    expect(await sharedWorkers(browser)).toEqual([]);
  } finally {
    await context.close();
  }
});

test('<clef-decide shared> shares the engine between tabs; an unknown attribute is warned about, naming the nearest', async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const context = await browser.newContext();
  try {
    const tabs = [await openTab(context), await openTab(context)];
    const warnings: string[] = [];
    tabs[0]!.on('console', (m) => {
      if (m.type() === 'warning') warnings.push(m.text());
    });
    const seen = await Promise.all(
      tabs.map((tab) =>
        tab.evaluate(async () => {
          await import('/src/element/index.ts' as string);
          const el = document.createElement('clef-decide') as HTMLElement & {
            questions: unknown;
            info(): Promise<EngineInfo>;
          };
          el.setAttribute('shared', '');
          el.setAttribute('sahred', '');
          el.setAttribute('model', '/models/tiny/');
          el.setAttribute('device', 'wasm');
          el.setAttribute('state', 'My parcel is late.');
          el.questions = { late: { type: 'noul' } };
          const decided = new Promise((r) => el.addEventListener('clef-decision', r));
          document.body.append(el);
          await decided;
          const i = await el.info();
          return { worker: i.worker, tabs: i.counters.tabs };
        }),
      ),
    );
    expect(seen.map((s) => s.worker)).toEqual(['shared', 'shared']);
    expect(Math.max(...seen.map((s) => s.tabs))).toBe(2);
    expect(warnings).toContainEqual(
      expect.stringContaining("unknown attribute 'sahred' (did you mean 'shared'?)"),
    );
  } finally {
    await context.close();
  }
});
