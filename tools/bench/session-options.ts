/**
 * What onnxruntime-web's session options cost at session creation, on clef-nano's
 * three graphs in Chromium on WASM, one thread: graphOptimizationLevel, enableMemPattern, and
 * the three sessions created one after another against all at once. The first creation in a
 * page also compiles the runtime's code, so it is reported apart; the variants then alternate,
 * and the medians compare the options' own work.
 *
 *   npx tsx tools/bench/session-options.ts [--rounds 5] [--first all|basic|disabled]
 *       [--graphs URL-DIR]
 */
import { parseArgs } from 'node:util';
import { harnessPage } from './serve.js';
import { loadAverage } from './proc.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    // The level of the page's first creation (the one that also compiles the runtime's code).
    first: { type: 'string', default: 'all' },
    // Where the page gets the three .onnx graphs (their .data stay clef-nano's): e.g. graphs
    // optimised once by onnxruntime-node (optimizedModelFilePath), to load with 'disabled'.
    graphs: { type: 'string', default: '/clef-web/models/clef-nano/' },
  },
});
const loadStart = loadAverage();
const harness = await harnessPage(5197);
try {
  const page = harness.page;
  const out = await page.evaluate(
    async ({ rounds, firstLevel, graphDir }) => {
      type Ort = {
        env: { wasm: { wasmPaths: string; numThreads: number } };
        InferenceSession: {
          create(m: Uint8Array, o: object): Promise<{ release(): Promise<void> }>;
        };
      };
      const entry = '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
      const ort = (await import(/* @vite-ignore */ entry)) as Ort;
      ort.env.wasm.wasmPaths = '/ort/';
      ort.env.wasm.numThreads = 1;
      const base = '/clef-web/models/clef-nano/';
      const get = async (f: string) =>
        new Uint8Array(
          await (await fetch((f.endsWith('.onnx') ? graphDir : base) + f)).arrayBuffer(),
        );
      const files = Object.fromEntries(
        await Promise.all(
          [
            'backbone.onnx',
            'backbone.onnx.data',
            'head_memory.onnx',
            'head_memory.onnx.data',
            'head_decide.onnx',
            'head_decide.onnx.data',
          ].map(async (f) => [f, await get(f)] as const),
        ),
      );
      const headData = [
        { path: 'head_memory.onnx.data', data: files['head_memory.onnx.data'] },
        { path: 'head_decide.onnx.data', data: files['head_decide.onnx.data'] },
      ];
      const graphs = [
        {
          name: 'backbone',
          model: files['backbone.onnx']!,
          data: [{ path: 'backbone.onnx.data', data: files['backbone.onnx.data'] }],
        },
        { name: 'headMemory', model: files['head_memory.onnx']!, data: headData },
        { name: 'headDecide', model: files['head_decide.onnx']!, data: headData },
      ];
      const create = (g: (typeof graphs)[number], extra: object) =>
        ort.InferenceSession.create(g.model, {
          executionProviders: ['wasm'],
          externalData: g.data,
          ...extra,
        });
      const variants: Record<string, object> = {
        all: { graphOptimizationLevel: 'all' },
        extended: { graphOptimizationLevel: 'extended' },
        basic: { graphOptimizationLevel: 'basic' },
        disabled: { graphOptimizationLevel: 'disabled' },
        'all, no mem pattern': { graphOptimizationLevel: 'all', enableMemPattern: false },
      };
      /** The three graphs one after another; ms per graph. */
      const sequential = async (extra: object) => {
        const ms: Record<string, number> = {};
        for (const g of graphs) {
          const t0 = performance.now();
          const s = await create(g, extra);
          ms[g.name] = performance.now() - t0;
          await s.release();
        }
        return ms;
      };
      const first = await sequential({ graphOptimizationLevel: firstLevel });
      const results: Record<string, Array<Record<string, number>>> = {};
      const together: number[] = [];
      const oneByOne: number[] = [];
      for (let r = 0; r < rounds; r++) {
        for (const [name, extra] of Object.entries(variants)) {
          (results[name] ??= []).push(await sequential(extra));
        }
        let t0 = performance.now();
        const all = await Promise.all(graphs.map((g) => create(g, variants.all!)));
        together.push(performance.now() - t0);
        await Promise.all(all.map((s) => s.release()));
        t0 = performance.now();
        for (const g of graphs) await (await create(g, variants.all!)).release();
        oneByOne.push(performance.now() - t0);
      }
      return { first, results, together, oneByOne };
    },
    { rounds: Number(values.rounds), firstLevel: values.first!, graphDir: values.graphs! },
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  console.log(`load average ${loadStart?.join(' ')} at start, ${loadAverage()?.join(' ')} at end`);
  console.log(
    `first creation in the page (${values.graphs} at ${values.first}; compiles the runtime): ${JSON.stringify(out.first)}`,
  );
  for (const [name, runs] of Object.entries(out.results)) {
    const keys = Object.keys(runs[0]!);
    const parts = keys.map((k) => `${k} ${median(runs.map((r) => r[k]!)).toFixed(1)}`);
    const sum = median(runs.map((r) => keys.reduce((a, k) => a + r[k]!, 0)));
    console.log(`  ${name}: ${parts.join(', ')}; three ${sum.toFixed(1)} ms (median)`);
  }
  console.log(
    `  three at once (Promise.all) ${median(out.together).toFixed(1)} ms vs one after another ${median(out.oneByOne).toFixed(1)} ms`,
  );
} finally {
  await harness.close();
}
