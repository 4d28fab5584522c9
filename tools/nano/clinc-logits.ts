/**
 * The package's raw logits for the calibration cases (tools/nano/calibration-cases.ts), through
 * the Node engine, saved as JSON { key: { kind, gold, optionIds, logits } } so the fit and the
 * measurement can be rerun without the ~20 minutes of forwards.
 *
 *   npx tsx tools/nano/clinc-logits.ts --part fit|test --out /tmp/nano/logits-fit.json
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { shuffledIndices } from '../../src/calibrate/index.js';
import { loadNodePackage } from '../../src/node/engine.js';
import { calibrationCases } from './calibration-cases.js';

export interface SavedLogits {
  kind: 'full' | 'ten';
  gold: string;
  optionIds: string[];
  logits: number[];
}

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'models/clef-nano' },
    part: { type: 'string', default: 'fit' },
    out: { type: 'string' },
  },
});
const part = values.part === 'test' ? 'test' : 'fit';
// In a seeded random order, saved every 250 cases: a run stopped early leaves a random subset.
const cases = calibrationCases(part);
const all = shuffledIndices(cases.length, 17).map((i) => cases[i]!);
const engine = await loadNodePackage(values.package as string, { threads: 1 });
const saved: Record<string, SavedLogits> = {};
const started = Date.now();
try {
  for (const [i, c] of all.entries()) {
    const decision = await engine.decide(c.body);
    const q = decision.encoded.questions[0];
    const row = decision.logits[0];
    if (q === undefined || row === undefined) throw new Error(`${c.key}: no answer`);
    saved[c.key] = { kind: c.kind, gold: c.gold, optionIds: q.optionIds, logits: Array.from(row) };
    if ((i + 1) % 250 === 0) {
      if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(saved));
      const s = ((Date.now() - started) / 1000).toFixed(0);
      process.stderr.write(`${part}: ${i + 1}/${all.length}, ${s} s\n`);
    }
  }
} finally {
  await engine.dispose();
}
if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(saved));
process.stderr.write(
  `${part}: ${all.length} cases in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
