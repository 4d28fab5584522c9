/**
 * What onnxruntime-web's start costs in a page (issue 15): the engine's `init` phase is its first
 * session creation, which fetches, compiles and instantiates the wasm and then starts the
 * runtime. This splits it: `WebAssembly.instantiateStreaming` (fetch + compile + instantiate,
 * timed by wrapping it), the rest of the first one-node session's creation (the runtime's own
 * start), and a second identical session (what a session costs once started). Visits alternate
 * cold (a new profile) and warm (the same profile again), in the dev server's page, plain build,
 * one thread.
 *
 *   npx tsx tools/bench/runtime-start.ts [--visits 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import type * as Ort from 'onnxruntime-web';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { loadAverage } from './proc.js';
import { serve } from './serve.js';

const { values } = parseArgs({ options: { visits: { type: 'string', default: '3' } } });
const server = await serve('dev', 5261);
const profile = mkdtempSync(join(tmpdir(), 'clef-runtime-start-'));
console.log(`load average ${loadAverage()?.join(' ') ?? '?'}`);
try {
  for (let v = 0; v < Number(values.visits); v++) {
    const kind = v === 0 ? 'cold' : 'warm';
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await context.newPage();
      await page.routeWebSocket(/.*/, () => undefined);
      await page.goto(server.pageUrl);
      await page.locator('#status').filter({ hasText: 'ready' }).waitFor();
      const r = await page.evaluate(async () => {
        const t0 = performance.now();
        const entry = '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
        const ort = (await import(/* @vite-ignore */ entry)) as typeof Ort;
        const graph = '/src/engine/identity-graph.ts';
        const { IDENTITY_GRAPH } = (await import(/* @vite-ignore */ graph)) as {
          IDENTITY_GRAPH: Uint8Array;
        };
        const t1 = performance.now();
        ort.env.wasm.wasmPaths = new URL('/ort/', location.href).href;
        ort.env.wasm.numThreads = 1;
        const original = WebAssembly.instantiateStreaming;
        let instantiateMs = NaN;
        WebAssembly.instantiateStreaming = async (...args) => {
          const s = performance.now();
          const out = await original(...args);
          instantiateMs = performance.now() - s;
          return out;
        };
        const options = { executionProviders: ['wasm'] };
        const first = await ort.InferenceSession.create(IDENTITY_GRAPH, options);
        const t2 = performance.now();
        const second = await ort.InferenceSession.create(IDENTITY_GRAPH, options);
        const t3 = performance.now();
        await first.release();
        await second.release();
        return {
          importMs: t1 - t0,
          firstSessionMs: t2 - t1,
          instantiateStreamingMs: instantiateMs,
          runtimeStartMs: t2 - t1 - instantiateMs,
          secondSessionMs: t3 - t2,
        };
      });
      const f = (x: number) => x.toFixed(0);
      console.log(
        `${kind}: import ${f(r.importMs)} ms; first session ${f(r.firstSessionMs)} ms = instantiateStreaming ${f(r.instantiateStreamingMs)} + runtime start ${f(r.runtimeStartMs)}; second session ${f(r.secondSessionMs)} ms`,
      );
    } finally {
      await context.close();
    }
  }
} finally {
  rmSync(profile, { recursive: true, force: true });
  await server.close();
}
console.log(`load average ${loadAverage()?.join(' ') ?? '?'}`);
