/**
 * One decision's time on two packages, interleaved so that both see the same machine load:
 * onnxruntime-node, one thread, a 151-option CLINC150 request and a 4-option one, the median of
 * five after one warm-up each, and their ratio.
 *
 *   npx tsx tools/bench/decision-compare.ts <package-a> <package-b> [--runs 6]
 */
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { parseRequestJson } from '../../src/protocol/json.js';
import { intentsOf, NONE_OPTION, readClinc } from '../train/clinc-examples.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '6' } },
});
if (positionals.length !== 2) {
  console.error('usage: decision-compare.ts <package-a> <package-b> [--runs N]');
  process.exit(2);
}
const runs = Number(values.runs);
const all = Object.fromEntries(
  [...intentsOf(readClinc()), NONE_OPTION].map((o) => [o, null] as const),
);
const four = { report_fraud: null, card_declined: null, transactions: null, none: null };
const engines = await Promise.all(positionals.map((d) => loadNodePackage(d, { threads: 1 })));
try {
  for (const [label, criteria] of [
    ['151 options', all],
    ['4 options', four],
  ] as const) {
    const times = positionals.map(() => [] as number[]);
    for (let r = 0; r < runs; r++) {
      for (const [k, engine] of engines.entries()) {
        const body = parseRequestJson(
          JSON.stringify({
            model: 'clef-nano',
            state: `my card was declined at the store, attempt ${r}`,
            questions: { intent: { type: 'choice', criteria } },
          }),
        );
        const t0 = performance.now();
        await engine.decide(body);
        (times[k] as number[]).push(performance.now() - t0);
      }
    }
    const medians = times.map((t) => {
      const s = t.slice(1).sort((a, b) => a - b);
      return s[Math.floor(s.length / 2)] as number;
    });
    console.log(
      `${label}: ${positionals.map((d, k) => `${d} ${(medians[k] as number).toFixed(1)} ms`).join(', ')}; ratio b/a ${((medians[1] as number) / (medians[0] as number)).toFixed(2)}×`,
    );
  }
} finally {
  for (const e of engines) await e.dispose();
}
