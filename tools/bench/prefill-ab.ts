/**
 * Prefill variants interleaved in one worker (WASM, tools/bench/pages/prefill-worker.js) and one process (onnxruntime-node): session
 * options and chunk sizes, A B C A B C ..., so a loaded machine's drift lands on all alike;
 * reports the minimum (least disturbed) and median ms per prefill of `--tokens`.
 *
 *   npx tsx tools/bench/prefill-ab.ts [--model public/models/tiny] [--tokens 2048] [--rounds 8]
 *       [--threads 1] [--variants '[{"label":"base","chunk":256,"options":{}}]'] [--out X.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { harnessPage } from './serve.js';
import { loadAverage } from './proc.js';
import { loadOrtNode } from '../../src/node/ort-node.js';
import { backboneSpec, stateSpecs } from '../../src/core/graph-spec.js';
import { parseManifest } from '../../src/core/manifest.js';

const NO_QG = { extra: { optimization: { disable_specified_optimizers: 'QuickGeluFusion' } } };
const DEFAULT_VARIANTS = [
  { label: 'chunk 256', chunk: 256, options: {} },
  { label: 'chunk 256, no QuickGeluFusion', chunk: 256, options: NO_QG },
  { label: 'chunk 512', chunk: 512, options: {} },
  { label: 'chunk 1024', chunk: 1024, options: {} },
  { label: 'chunk 256, extended', chunk: 256, options: { graphOptimizationLevel: 'extended' } },
  { label: 'chunk 256, basic', chunk: 256, options: { graphOptimizationLevel: 'basic' } },
];
interface Variant {
  label: string;
  chunk: number;
  options: Record<string, unknown>;
}

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'public/models/tiny' },
    tokens: { type: 'string', default: '2048' },
    rounds: { type: 'string', default: '8' },
    threads: { type: 'string', default: '1' },
    variants: { type: 'string', default: JSON.stringify(DEFAULT_VARIANTS) },
    skip: { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
const dir = resolve(values.model!);
const manifest = parseManifest(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
const states = stateSpecs(backboneSpec(manifest));
const tokens = Number(values.tokens);
const rounds = Number(values.rounds);
const threads = Number(values.threads);
const variants = JSON.parse(values.variants!) as Variant[];
const ids = Array.from({ length: tokens }, (_, i) => (i * 7919 + 13) % 2000);
const skip = new Set(values.skip!.split(',').filter(Boolean));

/** ms per prefill, [variant][round]; round 0 (and the first warm-up rounds) included. */
type Times = number[][];

async function nodeSide(): Promise<Times> {
  const ort = await loadOrtNode('The prefill A/B');
  const sessions = await Promise.all(
    variants.map((v) =>
      ort.InferenceSession.create(join(dir, 'backbone.onnx'), {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        ...v.options,
      }),
    ),
  );
  const times: Times = variants.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const [k, v] of variants.entries()) {
      let feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
      for (const s of states) {
        const n = s.emptyDims.reduce((a, b) => a * b, 1);
        feeds[s.input] = new ort.Tensor('float32', new Float32Array(n), s.emptyDims);
      }
      const t0 = performance.now();
      for (let start = 0; start < tokens; start += v.chunk) {
        const part = ids.slice(start, start + v.chunk);
        feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(part, BigInt), [
          1,
          part.length,
        ]);
        const out = await sessions[k]!.run(feeds);
        feeds = {};
        for (const s of states) feeds[s.input] = out[s.output]!;
      }
      times[k]!.push(performance.now() - t0);
    }
  }
  return times;
}

async function wasmSide(): Promise<{ times: Times; crossOriginIsolated: boolean }> {
  const harness = await harnessPage(5200);
  try {
    const page = harness.page;
    const url = `/${values.model!.replace(/^public\//, '')}/`;
    const out = await page.evaluate(
      (a) =>
        new Promise<{ times?: number[][]; crossOriginIsolated?: boolean; error?: string }>(
          (done) => {
            const w = new Worker('/tools/bench/pages/prefill-worker.js', { type: 'module' });
            w.onmessage = (e: MessageEvent) => done(e.data as { error?: string });
            w.onerror = (e) => done({ error: e.message });
            w.postMessage(a);
          },
        ),
      { url, ids, threads, rounds, variants, states },
    );
    if (out.error || !out.times) throw new Error(`worker: ${out.error}`);
    return { times: out.times, crossOriginIsolated: out.crossOriginIsolated === true };
  } finally {
    await harness.close();
  }
}

const loadStart = loadAverage();
const wasm = skip.has('wasm') ? null : await wasmSide();
const loadMid = loadAverage();
const node = skip.has('node') ? null : await nodeSide();
const loadEnd = loadAverage();
// The first two rounds settle the code (tier-up); the rest are measured.
const settled = (xs: number[]) => [...xs.slice(2)].sort((a, b) => a - b);
const stat = (xs: number[] | undefined) => {
  if (!xs) return null;
  const s = settled(xs);
  return { min: s[0]!, median: s[s.length >> 1]!, tokPerSMin: tokens / (s[0]! / 1000) };
};
const rows = variants.map((v, k) => ({
  label: v.label,
  wasm: stat(wasm?.times[k]),
  node: stat(node?.[k]),
}));
console.log(
  `${values.model} ${tokens} tokens, ${threads} thread(s), ${rounds} rounds (2 settle); ` +
    `load ${loadStart?.join(' ')} → ${loadMid?.join(' ')} → ${loadEnd?.join(' ')}` +
    (wasm ? `; crossOriginIsolated ${wasm.crossOriginIsolated}` : ''),
);
console.log('| variant | WASM min / median ms | node min / median ms | WASM / node (min) |');
console.log('| ------- | -------------------- | -------------------- | ----------------- |');
const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(1));
for (const r of rows) {
  const ratio = r.wasm && r.node ? (r.node.min / r.wasm.min).toFixed(2) + '×' : '—';
  console.log(
    `| ${r.label} | ${f(r.wasm?.min)} / ${f(r.wasm?.median)} | ${f(r.node?.min)} / ${f(r.node?.median)} | ${ratio} |`,
  );
}
if (values.out) {
  const result = {
    kind: 'prefill-ab',
    date: new Date().toISOString(),
    model: values.model,
    tokens,
    threads,
    rounds,
    loadAverage: { start: loadStart, mid: loadMid, end: loadEnd },
    crossOriginIsolated: wasm?.crossOriginIsolated ?? null,
    variants,
    rows,
    wasmMs: wasm?.times ?? null,
    nodeMs: node ?? null,
  };
  writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  console.log(`wrote ${values.out}`);
}
