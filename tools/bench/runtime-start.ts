/**
 * What onnxruntime-web's start costs in a page: the engine's `init` phase is its first
 * session creation, which fetches, compiles and instantiates the wasm and then starts the
 * runtime. This splits it: `WebAssembly.instantiateStreaming` (fetch + compile + instantiate,
 * timed by wrapping it), the rest of the first one-node session's creation (the runtime's own
 * start), and a second identical session (what a session costs once started). Visits alternate
 * cold (a new profile) and warm (the same profile again), in the dev server's page, plain build,
 * one thread. The runtime's start is split further by timing the wasm exports the loader calls
 * (their minified names mapped back from the loader's `Module._OrtInit = exports.X` lines):
 * static constructors, `OrtInit` (the environment) and the first `OrtCreateSession`.
 *
 *   npx tsx tools/bench/runtime-start.ts [--visits 3] [--chromium-arg=SWITCH]...
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import type * as Ort from 'onnxruntime-web';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { loadAverage } from './proc.js';
import { serve } from './serve.js';

const { values } = parseArgs({
  options: {
    visits: { type: 'string', default: '3' },
    // Diagnosis only, e.g. --chromium-arg=--js-flags=--no-wasm-lazy-compilation.
    'chromium-arg': { type: 'string', multiple: true, default: [] },
  },
});

/** The plain build's wasm export names, minified → readable, read from its Emscripten loader. */
function exportNames(): Record<string, string> {
  const dist = createRequire(import.meta.url).resolve('onnxruntime-web/wasm');
  const loader = readFileSync(dist.replace(/[^/]+$/, 'ort-wasm-simd-threaded.mjs'), 'utf8');
  const names: Record<string, string> = {};
  for (const m of loader.matchAll(/\b\w+\._(Ort\w+)=\w+\.([\w$]+)/g)) names[m[2]!] = m[1]!;
  // initRuntime: `function X(){...;n?...:I.Va()}` calls the static constructors.
  const ctors = /function \w+\(\)\{\w+=!0;\w+\?\w+\(\):\w+\.([\w$]+)\(\)\}/.exec(loader);
  if (ctors) names[ctors[1]!] = 'static constructors';
  if (!Object.values(names).includes('OrtInit')) throw new Error('OrtInit not found in the loader');
  return names;
}
const names = exportNames();
const server = await serve('dev', 5261);
const profile = mkdtempSync(join(tmpdir(), 'clef-runtime-start-'));
console.log(`load average ${loadAverage()?.join(' ') ?? '?'}`);
try {
  for (let v = 0; v < Number(values.visits); v++) {
    const kind = v === 0 ? 'cold' : 'warm';
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS, ...values['chromium-arg']!],
    });
    try {
      const page = await context.newPage();
      await page.routeWebSocket(/.*/, () => undefined);
      await page.goto(server.pageUrl);
      await page.locator('#status').filter({ hasText: 'ready' }).waitFor();
      const r = await page.evaluate(async (names) => {
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
        // Each export the loader calls from JS, timed (calls between wasm functions are not).
        const spent: Record<string, number> = {};
        WebAssembly.instantiateStreaming = async (...args) => {
          const s = performance.now();
          const out = await original(...args);
          instantiateMs = performance.now() - s;
          const exports: Record<string, unknown> = {};
          for (const [key, value] of Object.entries(out.instance.exports)) {
            const name = names[key];
            if (typeof value !== 'function' || !name) {
              exports[key] = value;
              continue;
            }
            exports[key] = (...a: unknown[]) => {
              const t = performance.now();
              try {
                return (value as (...b: unknown[]) => unknown)(...a);
              } finally {
                spent[name] = (spent[name] ?? 0) + performance.now() - t;
              }
            };
          }
          return { module: out.module, instance: { exports } as WebAssembly.Instance };
        };
        const options = { executionProviders: ['wasm'] };
        const first = await ort.InferenceSession.create(IDENTITY_GRAPH, options);
        const t2 = performance.now();
        const startParts = { ...spent };
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
          startParts,
        };
      }, names);
      const f = (x: number) => x.toFixed(0);
      const p = r.startParts;
      const inWasm = Object.values(p).reduce((a, b) => a + b, 0);
      console.log(
        `${kind}: import ${f(r.importMs)} ms; first session ${f(r.firstSessionMs)} ms = instantiateStreaming ${f(r.instantiateStreamingMs)} + runtime start ${f(r.runtimeStartMs)}; second session ${f(r.secondSessionMs)} ms`,
        `\n  runtime start: static constructors ${f(p['static constructors'] ?? 0)}, OrtInit ${f(p.OrtInit ?? 0)}, first OrtCreateSession ${f(p.OrtCreateSession ?? 0)}, other exports ${f(inWasm - (p['static constructors'] ?? 0) - (p.OrtInit ?? 0) - (p.OrtCreateSession ?? 0))}, JavaScript ${f(r.runtimeStartMs - inWasm)} ms`,
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
