/**
 * Single-op graphs at the backbone's shapes, timed on onnxruntime-web (WASM, in Chromium) and on
 * onnxruntime-node with the same thread count: GFLOP/s (or GB/s-ish element rates) per kernel,
 * the ratio that explains the prefill gap. Graphs are written with the project's
 * GraphBuilder into .cache/kernel-bench/ and served by the dev server.
 *
 *   npx tsx tools/bench/kernel-bench.ts [--threads 1] [--min-ms 1500] [--only a,b] [--out X.json]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { harnessPage } from './serve.js';
import { loadAverage } from './proc.js';
import { loadOrtNode } from '../../src/node/ort-node.js';
import { attr, GraphBuilder } from '../../src/build/onnx/graph.js';
import { DataType } from '../../src/build/onnx/proto.js';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1' },
    'min-ms': { type: 'string', default: '1500' },
    only: { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
const threads = Number(values.threads);
const minMs = Number(values['min-ms']);
const DIR = '.cache/kernel-bench';
mkdirSync(DIR, { recursive: true });

interface Case {
  name: string;
  /** What one run computes: 2·M·K·N for a matmul, elements for elementwise ops. */
  work: number;
  unit: 'GFLOP/s' | 'Melem/s';
  /** Input name → [dims], float32, filled with small pseudo-random values. */
  inputs: Record<string, number[]>;
}

let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.2;
const floats = (n: number) => Float32Array.from({ length: n }, rand);
const bytes = (n: number) => Uint8Array.from({ length: n }, () => (rand() * 2560) & 0xff);

function write(name: string, build: (g: GraphBuilder) => void): void {
  const g = new GraphBuilder({
    name,
    onnxPath: join(DIR, `${name}.onnx`),
    inlineBelowBytes: 2 ** 31,
  });
  build(g);
  g.finish();
}

function matmul(name: string, b: number, m: number, k: number, n: number): Case {
  write(name, (g) => {
    const x = g.input('x', DataType.FLOAT, [b, m, k]);
    const w = g.initializer('w', DataType.FLOAT, [k, n], floats(k * n));
    g.output(g.op('MatMul', [x, w]), 'y', DataType.FLOAT, [b, m, n]);
  });
  return { name, work: 2 * b * m * k * n, unit: 'GFLOP/s', inputs: { x: [b, m, k] } };
}

function matmulNBits(name: string, m: number, k: number, n: number, level: number): Case {
  write(name, (g) => {
    const x = g.input('x', DataType.FLOAT, [1, m, k]);
    const blocks = k / 32;
    const q = g.initializer('q', DataType.UINT8, [n, blocks, 16], bytes(n * blocks * 16));
    const s = g.initializer(
      's',
      DataType.FLOAT,
      [n, blocks],
      floats(n * blocks).map((v) => v * 0.1),
    );
    const z = g.initializer(
      'z',
      DataType.UINT8,
      [n, Math.ceil(blocks / 2)],
      bytes(n * Math.ceil(blocks / 2)),
    );
    const attrs = {
      K: attr.int(k),
      N: attr.int(n),
      bits: attr.int(4),
      block_size: attr.int(32),
      ...(level > 0 ? { accuracy_level: attr.int(level) } : {}),
    };
    g.output(g.op('MatMulNBits', [x, q, s, z], attrs, 'com.microsoft'), 'y', DataType.FLOAT, [
      1,
      m,
      n,
    ]);
  });
  return { name, work: 2 * m * k * n, unit: 'GFLOP/s', inputs: { x: [1, m, k] } };
}

function unary(name: string, op: string, dims: number[], attrs = {}, domain?: string): Case {
  write(name, (g) => {
    const x = g.input('x', DataType.FLOAT, dims);
    g.output(g.op(op, [x], attrs, domain), 'y', DataType.FLOAT, dims);
  });
  const elems = dims.reduce((a, b) => a * b, 1);
  return { name, work: elems, unit: 'Melem/s', inputs: { x: dims } };
}

function silu(name: string, dims: number[]): Case {
  write(name, (g) => {
    const x = g.input('x', DataType.FLOAT, dims);
    g.output(g.op('Mul', [x, g.op('Sigmoid', [x])]), 'y', DataType.FLOAT, dims);
  });
  const elems = dims.reduce((a, b) => a * b, 1);
  return { name, work: elems, unit: 'Melem/s', inputs: { x: dims } };
}

const all: Array<() => Case> = [
  // tiny: MLP up/down and the q/k/v projections of 256 tokens, 16 chunks per run
  () => matmul('matmul-tiny-256x64x128-b16', 16, 256, 64, 128),
  () => matmul('matmul-tiny-256x128x64-b16', 16, 256, 128, 64),
  // a mid-size fp32 GEMM (compute bound on both sides)
  () => matmul('matmul-256x1024x1024', 1, 256, 1024, 1024),
  // Clef-flash's MLP up projection, 4-bit, a quarter of N (full N: 12288)
  () => matmulNBits('mmnbits-q4-256x4096x3072', 256, 4096, 3072, 0),
  () => matmulNBits('mmnbits-q4-acc4-256x4096x3072', 256, 4096, 3072, 4),
  // the full-attention layer's softmax of one 256-token chunk at a 2,048-token state (tiny)
  () => unary('softmax-1x4x256x2048', 'Softmax', [1, 4, 256, 2048], { axis: attr.int(-1) }),
  () =>
    unary(
      'quickgelu-256x1024',
      'QuickGelu',
      [1, 256, 1024],
      { alpha: attr.float(1) },
      'com.microsoft',
    ),
  () => silu('silu-sigmoid-mul-256x1024', [1, 256, 1024]),
];
const only = new Set(values.only!.split(',').filter(Boolean));
const cases = all.map((f) => f()).filter((c) => only.size === 0 || only.has(c.name));

interface Timing {
  medianMs: number;
  runs: number;
}

async function nodeSide(): Promise<Record<string, Timing>> {
  const ort = await loadOrtNode('The kernel bench');
  const out: Record<string, Timing> = {};
  for (const c of cases) {
    const s = await ort.InferenceSession.create(join(DIR, `${c.name}.onnx`), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
    });
    const feeds = Object.fromEntries(
      Object.entries(c.inputs).map(([k, d]) => [
        k,
        new ort.Tensor('float32', floats(d.reduce((a, b) => a * b, 1)), d),
      ]),
    );
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) await s.run(feeds);
    const t = performance.now();
    while (ms.length < 5 || performance.now() - t < minMs) {
      const t0 = performance.now();
      await s.run(feeds);
      ms.push(performance.now() - t0);
    }
    await s.release();
    out[c.name] = { medianMs: [...ms].sort((a, b) => a - b)[ms.length >> 1]!, runs: ms.length };
  }
  return out;
}

async function wasmSide(): Promise<Record<string, Timing>> {
  const harness = await harnessPage(5199);
  try {
    const page = harness.page;
    return await page.evaluate(
      async (a) => {
        type T = object;
        type Ort = {
          env: { wasm: { wasmPaths: string; numThreads: number } };
          Tensor: new (t: string, d: Float32Array, dims: number[]) => T;
          InferenceSession: {
            create(
              m: Uint8Array,
              o: object,
            ): Promise<{
              run(f: Record<string, T>): Promise<unknown>;
              release(): Promise<void>;
            }>;
          };
        };
        const entry = '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
        const ort = (await import(/* @vite-ignore */ entry)) as Ort;
        ort.env.wasm.wasmPaths = '/ort/';
        ort.env.wasm.numThreads = a.threads;
        const out: Record<string, { medianMs: number; runs: number }> = {};
        for (const c of a.cases) {
          const model = new Uint8Array(
            await (await fetch(`/${a.dir}/${c.name}.onnx`)).arrayBuffer(),
          );
          const s = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
          const feeds = Object.fromEntries(
            Object.entries(c.inputs).map(([k, d]) => {
              const n = d.reduce((x, y) => x * y, 1);
              return [
                k,
                new ort.Tensor(
                  'float32',
                  Float32Array.from({ length: n }, (_, i) => ((i * 37) % 101) / 500 - 0.1),
                  d,
                ),
              ];
            }),
          );
          const ms: number[] = [];
          for (let i = 0; i < 3; i++) await s.run(feeds);
          const t = performance.now();
          while (ms.length < 5 || performance.now() - t < a.minMs) {
            const t0 = performance.now();
            await s.run(feeds);
            ms.push(performance.now() - t0);
          }
          await s.release();
          out[c.name] = {
            medianMs: [...ms].sort((x, y) => x - y)[ms.length >> 1]!,
            runs: ms.length,
          };
        }
        return out;
      },
      { threads, minMs, dir: DIR, cases: cases.map((c) => ({ name: c.name, inputs: c.inputs })) },
    );
  } finally {
    await harness.close();
  }
}

const loadStart = loadAverage();
const wasm = await wasmSide();
const node = await nodeSide();
const loadEnd = loadAverage();
const rows = cases.map((c) => {
  const rate = (t: Timing) => c.work / (t.medianMs / 1000) / (c.unit === 'GFLOP/s' ? 1e9 : 1e6);
  return {
    name: c.name,
    unit: c.unit,
    wasmMs: wasm[c.name]!.medianMs,
    nodeMs: node[c.name]!.medianMs,
    wasmRate: rate(wasm[c.name]!),
    nodeRate: rate(node[c.name]!),
    wasmOverNode: node[c.name]!.medianMs / wasm[c.name]!.medianMs,
  };
});
console.log(`${threads} thread(s); load average ${loadStart?.join(' ')} → ${loadEnd?.join(' ')}`);
console.log('| kernel | WASM ms | node ms | WASM rate | node rate | WASM / node speed |');
console.log('| ------ | ------- | ------- | --------- | --------- | ----------------- |');
for (const r of rows) {
  console.log(
    `| ${r.name} | ${r.wasmMs.toFixed(2)} | ${r.nodeMs.toFixed(2)} | ${r.wasmRate.toFixed(2)} ${r.unit} | ${r.nodeRate.toFixed(2)} ${r.unit} | ${r.wasmOverNode.toFixed(2)}× |`,
  );
}
if (values.out) {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*: (.*)/)?.[1] ?? null;
  const result = {
    kind: 'kernel-bench',
    date: new Date().toISOString(),
    cpu,
    threads,
    loadAverage: { start: loadStart, end: loadEnd },
    rows,
    wasm,
    node,
  };
  writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  console.log(`wrote ${values.out}`);
}
