/**
 * Writes clef-nano's three graphs optimised once by onnxruntime-node (`extended`: no
 * hardware-specific layouts) into .cache/opt-nano/, beside a copy of the backbone's data, and
 * checks that the backbone optimised and run at 'disabled' answers bit for bit what the package
 * graph answers at 'all'. For `tools/bench/session-options.ts --first disabled --graphs
 * /.cache/opt-nano/` (docs/benchmarks.md).
 *
 *   npx tsx tools/bench/optimized-graphs.ts
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import * as ort from 'onnxruntime-node';

const src = resolve('models/clef-nano');
const out = resolve('.cache/opt-nano');
mkdirSync(out, { recursive: true });
for (const g of ['backbone', 'head_memory', 'head_decide']) {
  const s = await ort.InferenceSession.create(`${src}/${g}.onnx`, {
    graphOptimizationLevel: 'extended',
    optimizedModelFilePath: `${out}/${g}.onnx`,
    intraOpNumThreads: 1,
  });
  await s.release();
}
copyFileSync(`${src}/backbone.onnx.data`, `${out}/backbone.onnx.data`);

const original = await ort.InferenceSession.create(`${src}/backbone.onnx`, {
  graphOptimizationLevel: 'all',
  intraOpNumThreads: 1,
});
const optimised = await ort.InferenceSession.create(`${out}/backbone.onnx`, {
  graphOptimizationLevel: 'disabled',
  intraOpNumThreads: 1,
});
function feeds(tokens: number): Record<string, ort.Tensor> {
  const f: Record<string, ort.Tensor> = {};
  for (const m of original.inputMetadata) {
    if (!m.isTensor) continue;
    const shape = m.shape.map((d) =>
      d === 'sequence_length' ? tokens : d === 'past_sequence_length' ? 0 : Number(d),
    );
    const n = shape.reduce((a, b) => a * b, 1);
    f[m.name] =
      m.type === 'int64'
        ? new ort.Tensor(
            'int64',
            BigInt64Array.from({ length: n }, (_, i) => BigInt((i * 7919) % 4000)),
            shape,
          )
        : new ort.Tensor('float32', new Float32Array(n), shape);
  }
  return f;
}
for (const tokens of [1, 17, 256]) {
  const a = await original.run(feeds(tokens));
  const b = await optimised.run(feeds(tokens));
  let differing = 0;
  for (const name of Object.keys(a)) {
    const x = a[name]!.data as Float32Array;
    const y = b[name]!.data as Float32Array;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) differing++;
  }
  console.log(
    `${tokens} tokens: ${differing} output values differ (all ${Object.keys(a).length} outputs)`,
  );
}
console.log(`wrote ${out}`);
