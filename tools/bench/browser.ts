/**
 * One browser measurement: a fresh Chromium (so peaks belong to this model and device alone)
 * opens the test harness from the Vite dev server, loads a package with `createClef`, and runs
 * each scenario's requests one at a time through `clef.decide()`, timing each in the page and
 * reading the engine's counters around it.
 */
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import type { DecisionTimings, EngineInfo } from '../../src/wire/telemetry.js';
import { readMemory, resetPeaks, type ProcMemory } from './proc.js';
import { WARMUP_MAX_MS, warmUp } from './warmup.js';
import {
  runInterleaved,
  type DecisionSample,
  type ScenarioBodies,
  type ScenarioRun,
} from './schedule.js';

export type { DecisionSample, ScenarioBodies, ScenarioRun };

export interface BrowserRun {
  device: 'wasm' | 'webgpu';
  browserVersion: string;
  userAgent: string;
  info: EngineInfo | null;
  loadWallMs: number | null;
  /** Latencies of the warm-up decisions after load (ms), first to last. */
  warmupMs: number[];
  memory: { idle: ProcMemory; afterLoad: ProcMemory | null; jsBytes: number | null };
  scenarios: ScenarioRun[];
  error?: string;
}

/** The slice of the page's Clef object the bench calls. */
interface PageClef {
  info(): Promise<{ counters: { readbackBytes: number } }>;
  decide(body: object): Promise<{
    timings: DecisionTimings;
    response: { usage: { input_tokens: number } };
  }>;
}

type PageWindow = { clefWeb: { createClef(o: object): Promise<unknown> }; __clef: unknown };

/** A full GC in the page and its workers (Chromium runs with --expose-gc). */
export async function collectGarbage(page: Page): Promise<void> {
  const gc = () => (globalThis as { gc?: () => void }).gc?.();
  await page.evaluate(gc);
  for (const worker of page.workers()) await worker.evaluate(gc).catch(() => undefined);
}

/** Thrown when one decision outlasts the backend's budget: the backend stops there. */
class DecisionTimeout extends Error {}

/** A decision that may not run longer than `limitMs` (the browser is closed if it does). */
async function decideWithin(page: Page, body: object, limitMs: number): Promise<DecisionSample> {
  if (!Number.isFinite(limitMs)) return decideOnce(page, body);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new DecisionTimeout(`one decision took over ${(limitMs / 60_000).toFixed(1)} min`)),
      limitMs,
    );
  });
  try {
    return await Promise.race([decideOnce(page, body), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function decideOnce(page: Page, body: object): Promise<DecisionSample> {
  return page.evaluate(async (body) => {
    const clef = (window as unknown as { __clef: PageClef }).__clef;
    const before = (await clef.info()).counters.readbackBytes;
    const t0 = performance.now();
    const d = await clef.decide(body);
    const wallMs = performance.now() - t0;
    const after = (await clef.info()).counters.readbackBytes;
    const t = d.timings;
    return {
      wallMs,
      encodeMs: t.encodeMs,
      backboneMs: t.backboneMs,
      headMs: t.headMs,
      totalMs: t.totalMs,
      prefixHit: t.prefixHit,
      backboneTokens: t.backboneTokens,
      inputTokens: d.response.usage.input_tokens,
      readbackBytes: after - before,
    };
  }, body);
}

const BENCH_ARGS = [
  ...CHROMIUM_ARGS,
  '--enable-blink-features=ForceEagerMeasureMemory',
  // gc() in the page and worker: memory figures then show what is retained, not garbage.
  '--js-flags=--expose-gc',
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: BENCH_ARGS });
}

/**
 * A browser with an on-disk profile in `dir`, as a user's: Playwright's default contexts are
 * off the record, where Cache Storage lives in memory and refuses more than ~1.1 GiB per origin
 * (measured), whatever `navigator.storage.estimate()` says.
 */
export async function launchPersistent(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, { executablePath: CHROMIUM_PATH, args: BENCH_ARGS });
}

export async function benchBrowser(
  baseUrl: string,
  modelPath: string,
  device: 'wasm' | 'webgpu',
  warmup: object[],
  scenarios: ScenarioBodies[],
  log: (s: string) => void,
  budgetMs = Infinity,
  wasmBuild: 'plain' | 'asyncify' = 'plain',
): Promise<BrowserRun> {
  const browser = await launchBrowser();
  const run: BrowserRun = {
    device,
    browserVersion: browser.version(),
    userAgent: '',
    info: null,
    loadWallMs: null,
    warmupMs: [],
    memory: { idle: { renderer: null, gpu: null }, afterLoad: null, jsBytes: null },
    scenarios: [],
  };
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => log(`    [page error] ${e.message}`));
    await page.goto(`${baseUrl}/test/browser/pages/harness.html`);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    run.userAgent = await page.evaluate(() => navigator.userAgent);
    run.memory.idle = readMemory();
    resetPeaks();
    const loaded = await page.evaluate(
      async ({ model, device, wasmBuild }) => {
        const w = window as unknown as PageWindow;
        const t0 = performance.now();
        // The bench warms up itself (and reports the curve): the engine's own warm-up is off.
        const options = { model, device, cache: false, wasmBuild, warmUp: false };
        w.__clef = await w.clefWeb.createClef(options);
        const loadWallMs = performance.now() - t0;
        const info = await (w.__clef as { info(): Promise<unknown> }).info();
        return { loadWallMs, info };
      },
      { model: modelPath, device, wasmBuild },
    );
    run.info = loaded.info as EngineInfo;
    run.loadWallMs = loaded.loadWallMs;
    await collectGarbage(page);
    run.memory.afterLoad = readMemory();
    log(
      `    loaded on ${run.info.device} (${run.info.threads} threads) in ${loaded.loadWallMs.toFixed(0)} ms`,
    );
    run.warmupMs = await warmUp((b) => decideWithin(page, b, budgetMs), warmup, WARMUP_MAX_MS);
    log(`    warm-up: ${run.warmupMs.map((t) => t.toFixed(0)).join(', ')} ms`);
    run.scenarios = await runInterleaved(
      scenarios,
      {
        decide: (body) => decideWithin(page, body, budgetMs),
        before: resetPeaks,
        memory: readMemory,
        // A decision past the budget leaves the page busy: nothing more runs on this backend.
        fatal: (e) => e instanceof DecisionTimeout,
        log,
      },
      budgetMs,
    );
    run.memory.jsBytes = await page.evaluate(async () => {
      const p = performance as unknown as {
        measureUserAgentSpecificMemory?: () => Promise<{ bytes: number }>;
      };
      if (!p.measureUserAgentSpecificMemory || !crossOriginIsolated) return null;
      const timeout = new Promise<null>((r) => setTimeout(() => r(null), 30_000));
      const m = await Promise.race([p.measureUserAgentSpecificMemory(), timeout]);
      return m ? m.bytes : null;
    });
    await page.evaluate(async () => {
      await (window as unknown as { __clef: { dispose(): Promise<void> } }).__clef.dispose();
    });
  } catch (e) {
    run.error = (e as Error).message.split('\n')[0];
    log(`    failed: ${run.error}`);
  } finally {
    await browser.close();
  }
  return run;
}
