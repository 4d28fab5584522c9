/**
 * Browser soak, run by hand, not in CI:
 *
 *   npm run models:tiny && node tools/sw/build-routes.mjs
 *   nice -n 5 npx tsx tools/soak/browser-soak.ts [--device wasm|webgpu|both] [--count 1000]
 *       [--warmup 600] [--json out.json] [--batch 100] [--requests varied|invalid|distinct]
 *
 * Starts the Vite dev server and Debian's Chromium, loads the tiny package with createClef on
 * each device, warms up, then runs `count` decisions of varied size (states of a few to a few
 * hundred tokens, 1 to 4 questions of every type, some states repeated so the prefix cache hits)
 * in batches of 100. After warm-up and after each batch, with the engine idle and after a full
 * GC in the page and the worker, it samples: the page's and the worker's JS memory
 * (performance.measureUserAgentSpecificMemory: the dev server is cross-origin isolated), the
 * worker's WebAssembly memory, live onnxruntime tensors and, on WebGPU, live GPU buffers.
 * Pass: memory at the end within 2% of its level after warm-up, and no tensor beyond what the
 * prefix cache holds (its budget is fixed at 1 MiB, so it fills during warm-up).
 * WebGPU runs on SwiftShader here (a CPU): slow, so its states are kept small (4-24 words).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import type { TestEngineInfo } from '../../test/support/instrumented-worker/instrumented-wire.js';

const { values } = parseArgs({
  options: {
    device: { type: 'string', default: 'both' },
    count: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '600' },
    json: { type: 'string' },
    // 'invalid': only requests refused before the model (422), to tell the messaging layer's
    // memory from the runtime's. 'distinct': every state has made-up words new to the tokenizer.
    requests: { type: 'string', default: 'varied' },
    // Decisions between two samples.
    batch: { type: 'string', default: '100' },
  },
});
const COUNT = Number(values.count);
const WARMUP = Number(values.warmup);
const BATCH = Number(values.batch);
const CACHE_BUDGET = 1024 * 1024;
const TOLERANCE = 0.02;

// ---------------------------------------------------------------------------------------------
// Requests

// ---------------------------------------------------------------------------------------------
// Measuring

interface Sample {
  phase: string;
  decisions: number;
  pageJsBytes: number;
  workerJsBytes: number;
  totalBytes: number;
  /** Memory measureUserAgentSpecificMemory attributes to no context (shared), with its types. */
  otherBytes: number;
  otherTypes: string[];
  wasmMemoryBytes: number | null;
  liveTensors: number;
  cachedTensors: number;
  gpuBuffers: number | null;
  gpuBufferBytes: number | null;
  prefixHits: number;
  secondsSoFar: number;
}

async function collectGarbage(page: Page): Promise<void> {
  const gc = () => (globalThis as { gc?: () => void }).gc?.();
  for (let k = 0; k < 2; k++) {
    await page.evaluate(gc);
    for (const worker of page.workers()) await worker.evaluate(gc).catch(() => undefined);
  }
}

async function measure(page: Page, phase: string, decisions: number, t0: number): Promise<Sample> {
  await collectGarbage(page);
  const memory = await page.evaluate(async () => {
    const perf = performance as Performance & {
      measureUserAgentSpecificMemory(): Promise<{
        bytes: number;
        breakdown: Array<{
          bytes: number;
          attribution: Array<{ scope: string }>;
          types: string[];
        }>;
      }>;
    };
    const m = await perf.measureUserAgentSpecificMemory();
    let page = 0;
    let worker = 0;
    let other = 0;
    const otherTypes = new Set<string>();
    for (const b of m.breakdown) {
      const scope = b.attribution[0]?.scope;
      if (scope === 'Window') page += b.bytes;
      else if (scope === 'DedicatedWorkerGlobalScope') worker += b.bytes;
      else {
        other += b.bytes;
        for (const t of b.types) otherTypes.add(`${t}@${scope ?? 'shared'}`);
      }
    }
    return { total: m.bytes, page, worker, other, otherTypes: [...otherTypes] };
  });
  const info = (await page.evaluate(async () => {
    const out = await window.enginePage.info('soak');
    if (!out.ok) throw new Error(out.error.message);
    return out.value;
  })) as TestEngineInfo;
  const c = info.counters;
  return {
    phase,
    decisions,
    pageJsBytes: memory.page,
    workerJsBytes: memory.worker,
    totalBytes: memory.total,
    otherBytes: memory.other,
    otherTypes: memory.otherTypes,
    wasmMemoryBytes: c.wasmMemoryBytes,
    liveTensors: c.liveTensors,
    cachedTensors: c.cachedTensors,
    gpuBuffers: c.gpuBuffers,
    gpuBufferBytes: c.gpuBufferBytes,
    prefixHits: c.prefixHits,
    secondsSoFar: (performance.now() - t0) / 1000,
  };
}

/** Decides requests `start` .. `start + n - 1` of run `seed`, made in the page (soak-requests.ts). */
async function runBatch(
  page: Page,
  batch: { seed: number; start: number; n: number; sizes: number[]; sweep: boolean },
): Promise<void> {
  const kind =
    values.requests === 'invalid' || values.requests === 'distinct' ? values.requests : 'varied';
  const failures = await page.evaluate(
    async ({ seed, start, n, sizes, sweep, kind }) => {
      const path = '/tools/soak/soak-requests.ts';
      const made = (await import(/* @vite-ignore */ path)) as typeof import('./soak-requests.js');
      const out: string[] = [];
      for (const r of made.requests(seed, start, n, sizes, kind, sweep)) {
        const got = await window.enginePage.decide('soak', r);
        if (!got.ok && got.error.status !== 422) out.push(got.error.message);
      }
      return out;
    },
    { ...batch, kind } as const,
  );
  if (failures.length) throw new Error(`decisions failed: ${failures.slice(0, 3).join('; ')}`);
}

// ---------------------------------------------------------------------------------------------
// Running

interface DeviceReport {
  device: string;
  sizes: number[];
  samples: Sample[];
  verdict: { memory: number; wasm: number | null; tensorsClean: boolean; pass: boolean };
}

async function soak(baseUrl: string, device: 'wasm' | 'webgpu'): Promise<DeviceReport> {
  const sizes = device === 'webgpu' ? [4, 12, 24] : [4, 16, 64, 200, 400];
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      ...CHROMIUM_ARGS,
      '--js-flags=--expose-gc',
      '--enable-blink-features=ForceEagerMeasureMemory',
    ],
  });
  try {
    const page = await browser.newPage({ baseURL: baseUrl });
    await page.routeWebSocket(/.*/, () => undefined);
    await page.goto('/test/browser/pages/engine.html');
    await page.locator('#status', { hasText: 'ready' }).waitFor();
    const loaded = await page.evaluate(
      ([device, budget]) =>
        window.enginePage.load('soak', {
          model: '/models/tiny/',
          device: device as 'wasm' | 'webgpu',
          cacheBudgetBytes: budget,
        }),
      [device, CACHE_BUDGET] as const,
    );
    if (!loaded.ok) throw new Error(`load failed: ${loaded.error.message}`);
    const t0 = performance.now();
    const samples: Sample[] = [];
    const log = (s: Sample) => {
      samples.push(s);
      // Kept as it goes: a long run (WebGPU on SwiftShader) stopped early still has its figures.
      if (values.json) writeFileSync(`${values.json}.partial`, JSON.stringify(samples, null, 2));
      process.stderr.write(
        `${device} ${s.phase} ${s.decisions} ${(s.totalBytes / 2 ** 20).toFixed(1)} MiB live ${s.liveTensors}/${s.cachedTensors} ${s.secondsSoFar.toFixed(0)} s\n`,
      );
    };
    log(await measure(page, 'loaded', 0, t0));
    for (let i = 0; i < WARMUP; i += BATCH) {
      const n = Math.min(BATCH, WARMUP - i);
      await runBatch(page, { seed: 7, start: i, n, sizes, sweep: true });
    }
    log(await measure(page, 'warm', WARMUP, t0));
    for (let i = 0; i < COUNT; i += BATCH) {
      const n = Math.min(BATCH, COUNT - i);
      await runBatch(page, { seed: 11, start: i, n, sizes, sweep: false });
      log(await measure(page, 'soak', WARMUP + i + n, t0));
    }
    const warm = samples.find((s) => s.phase === 'warm')!;
    const last = samples[samples.length - 1]!;
    const memory = last.totalBytes / warm.totalBytes - 1;
    const wasm =
      last.wasmMemoryBytes !== null && warm.wasmMemoryBytes
        ? last.wasmMemoryBytes / warm.wasmMemoryBytes - 1
        : null;
    const tensorsClean = samples.every((s) => s.liveTensors === s.cachedTensors);
    const pass = memory <= TOLERANCE && (wasm === null || wasm <= TOLERANCE) && tensorsClean;
    return { device, sizes, samples, verdict: { memory, wasm, tensorsClean, pass } };
  } finally {
    await browser.close();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startVite(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(
    'node_modules/.bin/vite',
    ['--port', String(port), '--strictPort', '--host', 'localhost'],
    { stdio: 'ignore' },
  );
  const url = `http://localhost:${port}`;
  for (let k = 0; k < 600; k++) {
    try {
      if ((await fetch(`${url}/`)).ok) return { url, stop: () => child.kill() };
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill();
  throw new Error('the Vite dev server did not start');
}

const MiB = (n: number | null) => (n === null ? '-' : (n / 2 ** 20).toFixed(2));

function table(report: DeviceReport): string {
  const head =
    'phase   decisions  page MiB  worker MiB  total MiB  wasm MiB  tensors live/cached  gpu buffers (MiB)  s';
  const rows = report.samples.map((s) =>
    [
      s.phase.padEnd(7),
      String(s.decisions).padStart(9),
      MiB(s.pageJsBytes).padStart(9),
      MiB(s.workerJsBytes).padStart(11),
      MiB(s.totalBytes).padStart(10),
      MiB(s.wasmMemoryBytes).padStart(9),
      `${s.liveTensors}/${s.cachedTensors}`.padStart(20),
      (s.gpuBuffers === null ? '-' : `${s.gpuBuffers} (${MiB(s.gpuBufferBytes)})`).padStart(18),
      s.secondsSoFar.toFixed(0).padStart(4),
    ].join(' '),
  );
  const v = report.verdict;
  const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(2)}%`);
  return [
    `== ${report.device} (state sizes in words: ${report.sizes.join(', ')}; prefix cache budget 1 MiB)`,
    head,
    ...rows,
    `end vs warm: total memory ${pct(v.memory)}, wasm memory ${pct(v.wasm)}, tensors beyond the cache: ${v.tensorsClean ? 'none' : 'LEAK'} -> ${v.pass ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}

if (!existsSync('public/models/tiny/manifest.json')) {
  throw new Error('No tiny package: run `npm run models:tiny` first');
}
const devices =
  values.device === 'both' ? (['wasm', 'webgpu'] as const) : [values.device as 'wasm' | 'webgpu'];
const vite = await startVite();
const reports: DeviceReport[] = [];
try {
  for (const device of devices) reports.push(await soak(vite.url, device));
} finally {
  vite.stop();
}
const browserVersion = chromium.name();
console.log(
  `browser soak: ${COUNT} decisions after ${WARMUP} of warm-up per device (${browserVersion} at ${CHROMIUM_PATH})`,
);
for (const r of reports) console.log(`\n${table(r)}`);
const json = JSON.stringify({ count: COUNT, warmup: WARMUP, reports }, null, 2);
console.log(`\n${json}`);
if (values.json) writeFileSync(values.json, json);
process.exit(reports.every((r) => r.verdict.pass) ? 0 : 1);
