/**
 * `npx tsx tools/bench/full-depth.ts --package bench/work/full-q4 [--device webgpu] [--label x]
 *   [--node] [--cache] [--no-write]`
 *
 * Loads a multi-GB package (the full-depth model of `real-shape.ts --layers 32`) through
 * `createClef` in a fresh Chromium and records memory while it loads: the renderer (page,
 * worker, fetched bytes, wasm heap) and the GPU process (SwiftShader's buffers) sampled every
 * 250 ms from /proc, their sum's peak against the package's weights, and each sample's load
 * phase (from `onProgress`); PSS beside RSS, since a shared-memory upload buffer is resident in
 * both processes. Cache Storage is off unless `--cache` (the user's default: the package goes to
 * disk through the browser's storage process, whose memory is reported as "other"). After load it waits for the GPU queue to drain (the process stops growing), reads
 * `info()`, and samples once more after a full GC (`after-gc`: what the engine really keeps).
 * `--node` also loads the package on onnxruntime-node and makes one short decision, printing
 * its probabilities (a full-depth decision on SwiftShader takes too long).
 * Results go to bench/results/<date>-full-depth-<label>.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadProgress } from '../../src/wire/wire.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import type { PackageManifest } from '../../src/core/manifest.js';
import { collectGarbage, launchBrowser, launchPersistent } from './browser.js';
import { chromiumProcesses, loadAverage, machineFacts, readMemory } from './proc.js';
import { serve } from './serve.js';

interface Sample {
  t: number;
  phase: string;
  file: string | null;
  loadedBytes: number;
  /** Resident bytes (VmRSS): pages shared by the renderer and GPU process count in both. */
  renderer: number;
  gpu: number;
  /** Proportional set size: each shared page split among its processes, so sums are real. */
  rendererPss: number;
  gpuPss: number;
  /** The browser process and its other children (storage, network): Cache Storage's writes. */
  otherPss: number;
}

/** Pss (bytes) of one process from /proc/<pid>/smaps_rollup, 0 if unreadable. */
function pssOf(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

function pssByType(): { renderer: number; gpu: number; other: number } {
  const out = { renderer: 0, gpu: 0, other: 0 };
  for (const p of chromiumProcesses()) {
    const key = p.type === 'renderer' || p.type === 'gpu' ? p.type : 'other';
    out[key] += pssOf(p.pid);
  }
  return out;
}

const GiB = 2 ** 30;
const gib = (n: number) => `${(n / GiB).toFixed(2)} GiB`;

/** A short request every package answers (the tokenizer is the tiny fixture's). */
const REQUEST = {
  model: 'any',
  state: 'The parcel was due on Monday and has not arrived.',
  questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
};

async function browserLoad(dir: string, device: string, cache: boolean, log: (s: string) => void) {
  // The dev server, no watcher and no HMR: edits elsewhere must not reload the page mid-run.
  const server = await serve('dev', 5197);
  // With the cache on, an on-disk profile (a user's): off the record, Cache Storage is in memory.
  const profile = cache ? mkdtempSync(join(tmpdir(), 'clef-full-depth-')) : null;
  const context = profile
    ? await launchPersistent(profile)
    : await (await launchBrowser()).newContext();
  const samples: Sample[] = [];
  // The engine's phases, then the tool's own ('after-gc').
  let progress: Omit<LoadProgress, 'phase'> & { phase: string } = {
    phase: 'manifest',
    loadedBytes: 0,
    totalBytes: 0,
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  const t0 = performance.now();
  const sample = () => {
    const m = readMemory();
    const pss = pssByType();
    samples.push({
      t: Math.round(performance.now() - t0),
      phase: progress.phase,
      file: progress.file ?? null,
      loadedBytes: progress.loadedBytes,
      renderer: m.renderer?.rss ?? 0,
      gpu: m.gpu?.rss ?? 0,
      rendererPss: pss.renderer,
      gpuPss: pss.gpu,
      otherPss: pss.other,
    });
  };
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => log(`  [page error] ${e.message}`));
    await page.exposeFunction('__progress', (p: LoadProgress) => {
      if (p.phase !== progress.phase || p.file !== progress.file) {
        log(`  ${(performance.now() - t0).toFixed(0)} ms ${p.phase} ${p.file ?? ''}`);
      }
      progress = p;
    });
    await page.goto(server.pageUrl);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    sample();
    const idle = samples[0]!;
    timer = setInterval(sample, 250);
    const url = `/${dir.replace(/^\.?\//, '').replace(/\/?$/, '/')}`;
    const loaded = await page.evaluate(
      async ({ model, device, cache }) => {
        type W = {
          clefWeb: { createClef(o: object): Promise<{ info(): Promise<unknown> }> };
          __progress(p: unknown): void;
          __clef: unknown;
        };
        const w = window as unknown as W;
        const start = performance.now();
        const clef = await w.clefWeb.createClef({
          model,
          device,
          cache,
          warmUp: false,
          // The binding itself: an arrow here would get tsx's __name helper, absent in the page.
          onProgress: w.__progress,
        });
        w.__clef = clef;
        return { wallMs: performance.now() - start, info: await clef.info() };
      },
      { model: url, device, cache },
    );
    const createdAt = performance.now() - t0;
    log(`  createClef returned after ${(loaded.wallMs / 1000).toFixed(1)} s; draining ...`);
    // create() returns before SwiftShader has taken every upload: wait until the GPU process
    // stops growing (10 s without 1% growth, at most 3 min).
    progress = { ...progress, phase: 'ready' };
    let stable = performance.now();
    let last = samples[samples.length - 1]!.gpu;
    while (performance.now() - stable < 10_000 && performance.now() - t0 - createdAt < 180_000) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = samples[samples.length - 1]!.gpu;
      if (now > last * 1.01) {
        stable = performance.now();
        last = now;
      }
    }
    sample();
    // What stays after a full GC (page and worker): the engine's real footprint, not garbage.
    progress = { ...progress, phase: 'after-gc' };
    await collectGarbage(page);
    await new Promise((r) => setTimeout(r, 3000));
    clearInterval(timer);
    timer = undefined;
    sample();
    const mappings = largestMappings();
    return { idle, samples, wallMs: loaded.wallMs, info: loaded.info as EngineInfo, mappings };
  } finally {
    if (timer) clearInterval(timer);
    await context.close();
    await context.browser()?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await server.close();
  }
}

/**
 * The renderer's and GPU process's biggest resident mappings after load (/proc/<pid>/smaps):
 * tells a wasm heap (one big anonymous mapping) from shared memory and heap allocations.
 */
function largestMappings(): Array<{ process: string; mapping: string; rss: number }> {
  const out: Array<{ process: string; mapping: string; rss: number }> = [];
  for (const p of chromiumProcesses()) {
    if (p.type !== 'renderer' && p.type !== 'gpu') continue;
    let text = '';
    try {
      text = readFileSync(`/proc/${p.pid}/smaps`, 'utf8');
    } catch {
      continue;
    }
    let head = '';
    for (const line of text.split('\n')) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(line))
        head = line.split(/\s+/).slice(5).join(' ') || '[anon]';
      const m = /^Rss:\s+(\d+) kB/.exec(line);
      if (m && Number(m[1]) > 100 * 1024) {
        out.push({ process: p.type, mapping: head, rss: Number(m[1]) * 1024 });
      }
    }
  }
  return out.sort((a, b) => b.rss - a.rss).slice(0, 12);
}

async function nodeDecision(dir: string, log: (s: string) => void) {
  const { loadNodePackage } = await import('../../src/node/engine.js');
  const t0 = performance.now();
  const engine = await loadNodePackage(dir, { threads: 2 });
  const loadMs = performance.now() - t0;
  log(`  onnxruntime-node loaded in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    const t1 = performance.now();
    const out = await engine.decide({ ...REQUEST, model: engine.models[0] });
    const decideMs = performance.now() - t1;
    return { loadMs, decideMs, response: out.response, logits: out.logits.map((l) => [...l]) };
  } finally {
    await engine.dispose();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      package: { type: 'string', default: 'bench/work/full-q4' },
      device: { type: 'string', default: 'webgpu' },
      label: { type: 'string' },
      node: { type: 'boolean' },
      cache: { type: 'boolean' },
      'no-browser': { type: 'boolean' },
      'no-write': { type: 'boolean' },
    },
  });
  const dir = values.package!;
  const log = (s: string) => console.log(s);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;
  const weights = manifest.variant.weightBytes;
  const loadStart = loadAverage();
  log(
    `${dir}: ${manifest.model.name}, ${manifest.architecture.numLayers} layers, ${gib(weights)} of weights; load average ${loadStart?.join(' ')}`,
  );
  let browser: Awaited<ReturnType<typeof browserLoad>> | null = null;
  let summary: Record<string, unknown> | null = null;
  if (!values['no-browser']) {
    browser = await browserLoad(dir, values.device!, values.cache === true, log);
    const idle = browser.idle;
    // Above the idle page: RSS (shared pages in both processes), PSS (shared pages split).
    const net = browser.samples.map((s) => ({
      phase: s.phase,
      rss: s.renderer + s.gpu - idle.renderer - idle.gpu,
      pss: s.rendererPss + s.gpuPss - idle.rendererPss - idle.gpuPss,
      renderer: s.rendererPss - idle.rendererPss,
      gpu: s.gpuPss - idle.gpuPss,
      other: s.otherPss - idle.otherPss,
    }));
    type Net = (typeof net)[number];
    const peakOf = (pick: (s: Net) => number, during: (s: Net) => boolean = () => true) =>
      Math.max(0, ...net.filter(during).map(pick));
    const phases = [...new Set(net.map((s) => s.phase))];
    summary = {
      peakPss: peakOf((s) => s.pss),
      peakRss: peakOf((s) => s.rss),
      peakRenderer: peakOf((s) => s.renderer),
      peakGpu: peakOf((s) => s.gpu),
      peakOther: peakOf((s) => s.other),
      final: net.at(-1),
      perPhase: Object.fromEntries(
        phases.map((p) => {
          const during = (s: Net) => s.phase === p;
          const peaks = {
            pss: peakOf((s) => s.pss, during),
            renderer: peakOf((s) => s.renderer, during),
            gpu: peakOf((s) => s.gpu, during),
            other: peakOf((s) => s.other, during),
          };
          return [p, peaks];
        }),
      ),
    };
    const peak = summary.peakPss as number;
    log(`  device ${browser.info.device}; loadMs ${JSON.stringify(browser.info.loadMs)}`);
    log(
      `  peak renderer + GPU process PSS (above the idle page): ${gib(peak)} = weights × ${(peak / weights).toFixed(2)} (bound: × 1.35); RSS sum ${gib(summary.peakRss as number)}`,
    );
    log(
      `  peaks alone (PSS): renderer ${gib(summary.peakRenderer as number)}, GPU process ${gib(summary.peakGpu as number)}; browser and its other processes ${gib(summary.peakOther as number)}`,
    );
    for (const m of browser.mappings) log(`    mapping ${m.process} ${m.mapping}: ${gib(m.rss)}`);
    for (const [p, v] of Object.entries(summary.perPhase as Record<string, Record<string, number>>))
      log(
        `    ${p}: renderer ${gib(v.renderer!)}, GPU ${gib(v.gpu!)}, sum ${gib(v.pss!)}; other ${gib(v.other!)}`,
      );
  }
  const node = values.node ? await nodeDecision(dir, log) : null;
  if (node)
    log(
      `  node decision in ${(node.decideMs / 1000).toFixed(1)} s: ${JSON.stringify(node.response.answers)}`,
    );
  const loadEnd = loadAverage();
  const out = {
    date: new Date().toISOString(),
    command: `npx tsx tools/bench/full-depth.ts ${process.argv.slice(2).join(' ')}`,
    machine: machineFacts(loadStart, loadEnd),
    package: { dir, name: manifest.model.name, weightBytes: weights, files: manifest.files.length },
    browser: browser
      ? {
          wallMs: browser.wallMs,
          info: browser.info,
          idle: browser.idle,
          summary,
          samples: browser.samples,
        }
      : null,
    node,
  };
  if (!values['no-write']) {
    mkdirSync('bench/results', { recursive: true });
    const label = values.label ?? manifest.model.name;
    const path = `bench/results/${out.date.slice(0, 10)}-full-depth-${label}.json`;
    writeFileSync(path, `${JSON.stringify(out, null, 1)}\n`);
    log(`wrote ${path}`);
  }
}

await main();
