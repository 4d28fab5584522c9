/**
 * Where a prefill's time goes, per op type, on onnxruntime-web (WASM, in Chromium) and on
 * onnxruntime-node, same package graph, same tokens, same thread count. Both run the
 * backbone over `--tokens` tokens in chunks of `--chunk` (state fed back as the engine does),
 * `--warm` times to settle the code, then once with onnxruntime's per-node profiler on; the
 * table sums each op type's kernel time over that last prefill.
 *
 *   npx tsx tools/bench/op-profile.ts [--model public/models/tiny] [--tokens 2048] [--chunk 256]
 *       [--threads 1] [--warm 4] [--opt all] [--out bench/results/X.json]
 *
 * onnxruntime-web's profiler writes its JSON (Chrome trace format) to stdout, which the wasm
 * module prints through console.log, one event per line: the tool collects the page's console.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { harnessPage } from './serve.js';
import { loadAverage } from './proc.js';
import { loadOrtNode } from '../../src/node/ort-node.js';
import { backboneSpec, stateSpecs } from '../../src/core/graph-spec.js';
import { parseManifest } from '../../src/core/manifest.js';
import { collectProfile, opTable, type ProfileEvent, type Prefill } from './profile-parse.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'public/models/tiny' },
    tokens: { type: 'string', default: '2048' },
    chunk: { type: 'string', default: '256' },
    threads: { type: 'string', default: '1' },
    warm: { type: 'string', default: '4' },
    opt: { type: 'string', default: 'all' },
    out: { type: 'string' },
    // Session config entries for both sides, as JSON, e.g.
    // '{"optimization":{"disable_specified_optimizers":"QuickGeluFusion"}}'
    extra: { type: 'string', default: '{}' },
    skip: { type: 'string', default: '' },
  },
});
const dir = resolve(values.model!);
const manifest = parseManifest(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
const states = stateSpecs(backboneSpec(manifest));
const tokens = Number(values.tokens);
const chunk = Number(values.chunk);
const threads = Number(values.threads);
const warm = Number(values.warm);
const vocab = 2000; // every package's vocabulary is larger; ids only need to be valid
const ids = Array.from({ length: tokens }, (_, i) => (i * 7919 + 13) % vocab);
const extra = JSON.parse(values.extra!) as Record<string, unknown>;
const skip = new Set(values.skip!.split(',').filter(Boolean));

/** onnxruntime-node: the same loop, profile file from endProfiling(). */
async function nodeSide(): Promise<Prefill> {
  const ort = await loadOrtNode('The op profile');
  const tmp = mkdtempSync(join(tmpdir(), 'clef-prof-'));
  const prefix = join(tmp, 'node');
  const session = await ort.InferenceSession.create(join(dir, 'backbone.onnx'), {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: values.opt as 'all',
    enableProfiling: true,
    profileFilePrefix: prefix,
    extra,
  });
  const runMs: number[][] = [];
  for (let p = 0; p <= warm; p++) {
    let feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
    for (const s of states) {
      const n = s.emptyDims.reduce((a, b) => a * b, 1);
      feeds[s.input] = new ort.Tensor('float32', new Float32Array(n), s.emptyDims);
    }
    const ms: number[] = [];
    for (let start = 0; start < tokens; start += chunk) {
      const part = ids.slice(start, start + chunk);
      feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(part, BigInt), [1, part.length]);
      const t0 = performance.now();
      const out = await session.run(feeds);
      ms.push(performance.now() - t0);
      feeds = {};
      for (const s of states) feeds[s.input] = out[s.output]!;
    }
    runMs.push(ms);
  }
  await session.endProfiling(); // writes <prefix>_<date>.json
  await session.release();
  const file = readdirSync(tmp).find((f) => f.endsWith('.json'));
  if (!file) throw new Error(`no profile file in ${tmp}`);
  const events = JSON.parse(readFileSync(join(tmp, file), 'utf8')) as ProfileEvent[];
  return collectProfile(events, runMs, tokens / chunk);
}

/** onnxruntime-web in Chromium (page, not worker: numThreads 1 runs on the page's thread). */
async function wasmSide(): Promise<Prefill & { crossOriginIsolated: boolean }> {
  const lines: string[] = [];
  const harness = await harnessPage(5198);
  try {
    const page = harness.page;
    page.on('console', (m) => lines.push(m.text()));
    const url = `/${values.model!.replace(/^public\//, '')}/`;
    const out = await page.evaluate(
      async (a) => {
        type T = { dims: readonly number[] };
        type Ort = {
          env: { wasm: { wasmPaths: string; numThreads: number; proxy: boolean } };
          Tensor: new (t: string, d: ArrayBufferView, dims: readonly number[]) => T;
          InferenceSession: {
            create(
              m: Uint8Array,
              o: object,
            ): Promise<{
              run(f: Record<string, T>): Promise<Record<string, T>>;
              endProfiling(): void;
              release(): Promise<void>;
            }>;
          };
        };
        const entry = '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
        const ort = (await import(/* @vite-ignore */ entry)) as Ort;
        ort.env.wasm.wasmPaths = '/ort/';
        ort.env.wasm.numThreads = a.threads;
        const get = async (f: string) =>
          new Uint8Array(await (await fetch(a.url + f)).arrayBuffer());
        const session = await ort.InferenceSession.create(await get('backbone.onnx'), {
          executionProviders: ['wasm'],
          graphOptimizationLevel: a.opt,
          enableProfiling: true,
          extra: a.extra,
          externalData: [{ path: 'backbone.onnx.data', data: await get('backbone.onnx.data') }],
        });
        const runMs: number[][] = [];
        for (let p = 0; p <= a.warm; p++) {
          let feeds: Record<string, T> = {};
          for (const s of a.states) {
            const n = s.emptyDims.reduce((x, y) => x * y, 1);
            feeds[s.input] = new ort.Tensor('float32', new Float32Array(n), s.emptyDims);
          }
          const ms: number[] = [];
          for (let start = 0; start < a.ids.length; start += a.chunk) {
            const part = a.ids.slice(start, start + a.chunk);
            feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(part, BigInt), [
              1,
              part.length,
            ]);
            const t0 = performance.now();
            const o = await session.run(feeds);
            ms.push(performance.now() - t0);
            feeds = {};
            for (const s of a.states) feeds[s.input] = o[s.output]!;
          }
          runMs.push(ms);
        }
        session.endProfiling();
        await session.release();
        return { runMs, crossOriginIsolated: globalThis.crossOriginIsolated };
      },
      { url, ids, chunk, threads, warm, opt: values.opt!, states, extra },
    );
    const events = parseConsoleProfile(lines);
    return {
      ...collectProfile(events, out.runMs, tokens / chunk),
      crossOriginIsolated: out.crossOriginIsolated,
    };
  } finally {
    await harness.close();
  }
}

/** The profiler's JSON array, printed line by line ("[", `{...},` per event, "]"). */
function parseConsoleProfile(lines: string[]): ProfileEvent[] {
  const events: ProfileEvent[] = [];
  for (const raw of lines) {
    for (const line of raw.split('\n')) {
      const t = line
        .trim()
        .replace(/^\[/, '')
        .replace(/,?\]?$/, '');
      if (!t.startsWith('{"cat"')) continue;
      try {
        events.push(JSON.parse(t) as ProfileEvent);
      } catch {
        // not an event line
      }
    }
  }
  if (events.length === 0) {
    throw new Error(`no profile events on the console (${lines.length} lines): ${lines[0]}`);
  }
  return events;
}

const loadStart = loadAverage();
const wasm = skip.has('wasm') ? null : await wasmSide();
const node = skip.has('node') ? null : await nodeSide();
const loadEnd = loadAverage();
const table = opTable(wasm, node);
console.log(
  `${values.model} ${tokens} tokens, chunks of ${chunk}, ${threads} thread(s), opt ${values.opt} extra ${values.extra}; ` +
    `load average ${loadStart?.join(' ')} → ${loadEnd?.join(' ')}` +
    (wasm ? `; crossOriginIsolated ${wasm.crossOriginIsolated}` : ''),
);
console.log(table.markdown);
if (values.out) {
  const result = {
    kind: 'op-profile',
    date: new Date().toISOString(),
    model: values.model,
    tokens,
    chunk,
    threads,
    optimization: values.opt,
    extra,
    warmPrefills: warm,
    loadAverage: { start: loadStart, end: loadEnd },
    wasm,
    node,
    rows: table.rows,
  };
  writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  console.log(`wrote ${values.out}`);
}
