/**
 * `npx tsx tools/bench/long-context-web.ts [--package bench/work/real-q4] [--tokens 2048,16384]
 *   [--label x] [--no-write]`
 *
 * The browser counterpart of `long-context.ts`: memory growth with the state on WASM in
 * Chromium. A fresh Chromium loads the package through `createClef` (device 'wasm', cache off,
 * the engine's threads: `hardwareConcurrency - 1`, 1 on a two-core machine), then makes one
 * decision per state length, each on a fresh state (the same texts as the node tool), with the
 * engine's default score budget. The renderer processes (page, worker, wasm heap) are sampled
 * every 250 ms from /proc (PSS from smaps_rollup, RSS; VmHWM reset before each decision); the
 * growth of each decision's peak over after-load is given as a share of the package's weights.
 * `info().counters.wasmMemoryBytes` (onnxruntime's heap) is read after load and after each
 * decision (a wasm memory only grows, so that is its peak too).
 *
 * A package whose manifest lists only 'webgpu' (real-q4: its 8-bit `GatherBlockQuantized`
 * embedding had no CPU kernel in the WebGPU build, which the engine no longer uses for WASM) is
 * served through an overlay under tmp/: symlinks to its files and a manifest that adds 'wasm'.
 * A renderer crash (wasm out of memory, say) is recorded at the length where it happened.
 * Results go to bench/results/<date>-long-context-wasm[-label].json.
 */
import { mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from '@playwright/test';
import type { PackageManifest } from '../../src/core/manifest.js';
import type { DecisionTimings } from '../../src/wire/telemetry.js';
import type { TestEngineInfo } from '../../test/support/instrumented-worker/instrumented-wire.js';
import { loadTokenizerSync } from '../../src/clef/tokenizer.js';
import { encodeRequest } from '../../src/clef/prompt.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { collectGarbage, launchBrowser } from './browser.js';
import { chromiumProcesses, loadAverage, machineFacts, readMemory, resetPeaks } from './proc.js';
import { serve } from './serve.js';

const MiB = 2 ** 20;
const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;

/** The renderers' summed PSS (smaps_rollup) and RSS, and their VmHWM since the last reset. */
function renderer(): { pss: number; rss: number; hwm: number } {
  let pss = 0;
  for (const p of chromiumProcesses()) {
    if (p.type !== 'renderer') continue;
    try {
      const text = readFileSync(`/proc/${p.pid}/smaps_rollup`, 'utf8');
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const m = readMemory().renderer;
  return { pss, rss: m?.rss ?? 0, hwm: m?.peak ?? 0 };
}

/** The package as the dev server serves it: itself, or an overlay that lists 'wasm'. */
function servedPackage(dir: string, manifest: PackageManifest): { url: string; overlay: boolean } {
  const root = resolve('.');
  const inRoot = (p: string) => resolve(p).startsWith(`${root}/`);
  if (manifest.variant.devices.includes('wasm') && inRoot(dir)) {
    // Vite serves public/ at the site's root.
    const path = resolve(dir)
      .slice(root.length + 1)
      .replace(/^public\//, '');
    return { url: `/${path}/`, overlay: false };
  }
  const out = join('tmp', 'long-context-web', basename(resolve(dir)));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const f of manifest.files) symlinkSync(realpathSync(join(dir, f.path)), join(out, f.path));
  const devices = [...new Set([...manifest.variant.devices, 'wasm' as const])];
  const patched = { ...manifest, variant: { ...manifest.variant, devices } };
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(patched, null, 1));
  return { url: `/${out}/`, overlay: !manifest.variant.devices.includes('wasm') };
}

interface PageClef {
  info(): Promise<TestEngineInfo>;
  decide(body: object): Promise<{
    timings: DecisionTimings;
    response: { answers: Record<string, unknown>; usage: { input_tokens: number } };
  }>;
}

async function decide(page: Page, body: object) {
  return page.evaluate(async (body) => {
    const clef = (window as unknown as { __clef: PageClef }).__clef;
    const t0 = performance.now();
    // The wasm heap between graph runs (the worker answers info() between them), every 10 s.
    const wasmTrace: Array<[number, number | null]> = [];
    const poll = setInterval(() => {
      void clef.info().then((i) => {
        wasmTrace.push([Math.round((performance.now() - t0) / 1000), i.counters.wasmMemoryBytes]);
      });
    }, 10_000);
    try {
      const d = await clef.decide(body);
      const wallMs = performance.now() - t0;
      const counters = (await clef.info()).counters;
      return { wallMs, timings: d.timings, response: d.response, counters, wasmTrace };
    } finally {
      clearInterval(poll);
    }
  }, body);
}

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'bench/work/real-q4' },
    tokens: { type: 'string', default: '2048,16384' },
    label: { type: 'string' },
    'no-write': { type: 'boolean' },
  },
});
const dir = values.package!;
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;
const weights = manifest.variant.weightBytes;
const fileOf = (role: string) => manifest.files.find((f) => f.role === role);
const tokenizerFile = fileOf('tokenizer')!;
const configFile = fileOf('tokenizer-config');
const tokenizer = loadTokenizerSync(
  JSON.parse(readFileSync(join(dir, tokenizerFile.path), 'utf8')) as object,
  configFile ? (JSON.parse(readFileSync(join(dir, configFile.path), 'utf8')) as object) : undefined,
);
const served = servedPackage(dir, manifest);
const loadStart = loadAverage();
const log = (s: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${s}`);
log(
  `${dir}: ${mib(weights)} of weights${served.overlay ? ' (served with wasm added to its devices)' : ''}; load average ${loadStart?.join(' ')}`,
);

const server = await serve('dev', 5198);
const browser = await launchBrowser();
const browserVersion = browser.version();
const rows: Array<Record<string, unknown>> = [];
let info: TestEngineInfo | null = null;
let idle: ReturnType<typeof renderer> | null = null;
let afterLoad: (ReturnType<typeof renderer> & { wasmMemoryBytes: number | null }) | null = null;
let loadWallMs: number | null = null;
let error: string | null = null;
let timer: ReturnType<typeof setInterval> | undefined;
try {
  const page = await browser.newPage();
  let crashed = false;
  page.on('crash', () => {
    crashed = true;
    log('  [renderer crashed]');
  });
  page.on('pageerror', (e) => log(`  [page error] ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') log(`  [console ${m.type()}] ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) log(`  [http ${r.status()}] ${r.url()}`);
  });
  page.on('worker', (w) => w.on('close', () => log('  [worker closed]')));
  await page.goto(server.pageUrl);
  await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
  idle = renderer();
  const loaded = await page.evaluate(async (model) => {
    const w = window as unknown as {
      clefWeb: { createClef(o: object): Promise<PageClef> };
      __clef: PageClef;
    };
    const t0 = performance.now();
    w.__clef = await w.clefWeb.createClef({ model, device: 'wasm', cache: false, warmUp: false });
    return { wallMs: performance.now() - t0, info: await w.__clef.info() };
  }, served.url);
  info = loaded.info;
  loadWallMs = loaded.wallMs;
  await collectGarbage(page);
  await new Promise((r) => setTimeout(r, 3000));
  afterLoad = { ...renderer(), wasmMemoryBytes: info.counters.wasmMemoryBytes };
  log(
    `  loaded on ${info.device} (${info.threads} thread${info.threads === 1 ? '' : 's'}) in ${(loadWallMs / 1000).toFixed(1)} s; renderer after load PSS ${mib(afterLoad.pss)}, RSS ${mib(afterLoad.rss)} (idle page PSS ${mib(idle.pss)}); wasm memory ${afterLoad.wasmMemoryBytes === null ? '?' : mib(afterLoad.wasmMemoryBytes)}`,
  );
  const sentence =
    'The parcel left the depot on Monday and the courier has not called since then. ';
  const perSentence = tokenizer.encode(sentence).length;
  for (const [k, target] of values.tokens!.split(',').map(Number).entries()) {
    // The node tool's states: a distinct opening per run, so no prefix-cache hit between lengths.
    const state = `Case ${k}. ` + sentence.repeat(Math.ceil(target / perSentence));
    const body = {
      model: info.model,
      state,
      questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
    };
    const encoded = encodeRequest(tokenizer, validateRequest(body), {
      maxTokens: info.contextTokens,
    });
    let peakPss = 0;
    let peakRss = 0;
    const trace: Array<[number, number, number]> = [];
    const t0 = performance.now();
    resetPeaks();
    timer = setInterval(() => {
      const m = renderer();
      peakPss = Math.max(peakPss, m.pss);
      peakRss = Math.max(peakRss, m.rss);
      const t = Math.round((performance.now() - t0) / 1000);
      // One trace point per 10 s in the file (peaks use every sample).
      if (trace.length === 0 || t >= trace.at(-1)![0] + 10) trace.push([t, m.pss, m.rss]);
    }, 250);
    const loadBefore = loadAverage();
    log(`  state ${encoded.stateEnd} tokens (${encoded.inputIds.length} in all) ...`);
    try {
      const out = await decide(page, body);
      clearInterval(timer);
      timer = undefined;
      const end = renderer();
      peakPss = Math.max(peakPss, end.pss);
      peakRss = Math.max(peakRss, end.rss, end.hwm);
      const row = {
        stateTokens: encoded.stateEnd,
        inputTokens: encoded.inputIds.length,
        ms: Math.round(out.wallMs),
        timings: out.timings,
        peakPss,
        peakRss,
        growthPss: peakPss - afterLoad.pss,
        growthRss: peakRss - afterLoad.rss,
        growthPssOfWeights: (peakPss - afterLoad.pss) / weights,
        growthRssOfWeights: (peakRss - afterLoad.rss) / weights,
        afterPss: end.pss,
        afterRss: end.rss,
        wasmMemoryBytes: out.counters.wasmMemoryBytes,
        cacheBytes: out.counters.cacheBytes,
        loadAverage: { start: loadBefore, end: loadAverage() },
        answers: out.response.answers,
        trace,
        wasmTrace: out.wasmTrace,
      };
      rows.push(row);
      log(
        `    ${(out.wallMs / 1000).toFixed(0)} s (backbone ${(out.timings.backboneMs / 1000).toFixed(0)} s); peak PSS ${mib(peakPss)} (+${mib(row.growthPss)} = ${(100 * row.growthPssOfWeights).toFixed(1)}% of the weights), RSS ${mib(peakRss)} (+${mib(row.growthRss)} = ${(100 * row.growthRssOfWeights).toFixed(1)}%); wasm memory ${row.wasmMemoryBytes === null ? '?' : mib(row.wasmMemoryBytes)}; load ${row.loadAverage.end?.join(' ')}; answers ${JSON.stringify(out.response.answers.late)}`,
      );
    } catch (e) {
      clearInterval(timer);
      timer = undefined;
      const message = (e as Error).message.split('\n')[0]!;
      error = `${crashed ? 'renderer crashed' : 'decision failed'} at a ${encoded.stateEnd}-token state after ${((performance.now() - t0) / 1000).toFixed(0)} s: ${message}`;
      rows.push({
        stateTokens: encoded.stateEnd,
        inputTokens: encoded.inputIds.length,
        error,
        peakPss,
        peakRss,
        loadAverage: { start: loadBefore, end: loadAverage() },
        trace,
      });
      log(`    ${error}; peak PSS ${mib(peakPss)}, RSS ${mib(peakRss)}`);
      break;
    }
  }
} catch (e) {
  error = (e as Error).message.split('\n')[0]!;
  log(`  failed: ${error}`);
} finally {
  if (timer) clearInterval(timer);
  await browser.close();
  await server.close();
}

if (!values['no-write']) {
  mkdirSync('bench/results', { recursive: true });
  const date = new Date().toISOString();
  const path = `bench/results/${date.slice(0, 10)}-long-context-wasm${values.label ? `-${values.label}` : ''}.json`;
  const machine = machineFacts(loadStart);
  const command = `npx tsx tools/bench/long-context-web.ts ${process.argv.slice(2).join(' ')}`;
  const result = {
    date,
    command,
    machine,
    browserVersion,
    package: dir,
    overlay: served.overlay,
    weights,
    device: info?.device ?? null,
    threads: info?.threads ?? null,
    loadWallMs,
    loadMs: info?.loadMs ?? null,
    idle,
    afterLoad,
    error,
    rows,
  };
  writeFileSync(path, `${JSON.stringify(result, null, 1)}\n`);
  log(`wrote ${path}`);
}
