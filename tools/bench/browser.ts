/**
 * One browser measurement: a fresh Chromium (so peaks belong to this model and device alone)
 * opens the test harness from the Vite dev server, loads a package with `createClef`, and runs
 * each scenario's requests one at a time through `clef.decide()`, timing each in the page and
 * reading the engine's counters around it.
 */
import { chromium, type Browser, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import type { DecisionTimings, EngineInfo } from '../../src/engine/wire.js';
import { readMemory, resetPeaks, type ProcMemory } from './proc.js';

export interface DecisionSample {
  /** Page-side latency of clef.decide(), ms (includes the worker round trip). */
  wallMs: number;
  encodeMs: number;
  backboneMs: number;
  headMs: number;
  totalMs: number;
  prefixHit: boolean;
  backboneTokens: number;
  inputTokens: number;
  /** Bytes the engine's graphs handed to the CPU for this decision (GPU readback on WebGPU). */
  readbackBytes: number;
}

export interface ScenarioRun {
  id: string;
  samples: DecisionSample[];
  /** Process memory at the end of the scenario, peaks over the scenario. */
  memory: ProcMemory;
  error?: string;
}

export interface BrowserRun {
  device: 'wasm' | 'webgpu';
  browserVersion: string;
  userAgent: string;
  info: EngineInfo | null;
  loadWallMs: number | null;
  memory: { idle: ProcMemory; afterLoad: ProcMemory | null; jsBytes: number | null };
  scenarios: ScenarioRun[];
  error?: string;
}

export interface ScenarioBodies {
  id: string;
  hit: boolean;
  bodies: object[];
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
async function collectGarbage(page: Page): Promise<void> {
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

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      ...CHROMIUM_ARGS,
      '--enable-blink-features=ForceEagerMeasureMemory',
      // gc() in the page and worker: memory figures then show what is retained, not garbage.
      '--js-flags=--expose-gc',
    ],
  });
}

export async function benchBrowser(
  baseUrl: string,
  modelPath: string,
  device: 'wasm' | 'webgpu',
  warmup: object,
  scenarios: ScenarioBodies[],
  log: (s: string) => void,
  budgetMs = Infinity,
): Promise<BrowserRun> {
  const browser = await launchBrowser();
  const run: BrowserRun = {
    device,
    browserVersion: browser.version(),
    userAgent: '',
    info: null,
    loadWallMs: null,
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
      async ({ model, device }) => {
        const w = window as unknown as PageWindow;
        const t0 = performance.now();
        w.__clef = await w.clefWeb.createClef({ model, device, cache: false });
        const loadWallMs = performance.now() - t0;
        const info = await (w.__clef as { info(): Promise<unknown> }).info();
        return { loadWallMs, info };
      },
      { model: modelPath, device },
    );
    run.info = loaded.info as EngineInfo;
    run.loadWallMs = loaded.loadWallMs;
    await collectGarbage(page);
    run.memory.afterLoad = readMemory();
    log(
      `    loaded on ${run.info.device} (${run.info.threads} threads) in ${loaded.loadWallMs.toFixed(0)} ms`,
    );
    await decideWithin(page, warmup, budgetMs);
    const budget = overBudget(budgetMs);
    for (const s of scenarios) {
      resetPeaks();
      const out: ScenarioRun = { id: s.id, samples: [], memory: { renderer: null, gpu: null } };
      const started = performance.now();
      try {
        for (let i = 0; i < s.bodies.length; i++) {
          if (budget(i, out.samples.length)) break;
          const sample = await decideWithin(page, s.bodies[i] as object, budgetMs);
          // A hit scenario's first body is the warm-up that puts its state in the cache.
          if (!(s.hit && i === 0)) out.samples.push(sample);
        }
      } catch (e) {
        out.error = (e as Error).message.split('\n')[0];
        log(`    ${s.id}: ${out.error}`);
      }
      budgetNote(out, s.bodies.length - (s.hit ? 1 : 0));
      out.memory = readMemory();
      run.scenarios.push(out);
      // A decision past the budget leaves the page busy: stop this backend here.
      if (out.error?.startsWith('one decision took over')) throw new DecisionTimeout(out.error);
      const med = median(out.samples.map((x) => x.wallMs));
      log(
        `    ${s.id}: ${out.samples.length} runs, median ${med.toFixed(1)} ms (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
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

/**
 * Time budget of one backend: once spent, a scenario already begun keeps one timed run and
 * later scenarios are skipped, so slow machines still finish in minutes (said in the output).
 */
export function overBudget(budgetMs: number): (index: number, samples: number) => boolean {
  const start = performance.now();
  return (index, samples) => performance.now() - start > budgetMs && (index === 0 || samples > 0);
}

/** A note when the budget cut a scenario short. */
export function budgetNote(run: ScenarioRun, planned: number): void {
  if (!run.error && run.samples.length < planned) {
    run.error = `time budget: ${run.samples.length} of ${planned} runs`;
  }
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}
