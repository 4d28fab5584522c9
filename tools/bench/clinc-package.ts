/**
 * CLINC150 as a plain text-and-label file, and a package trained from it judged on CLINC150's
 * test queries (onnxruntime-node): the route a user takes with `clef-web train --texts`.
 *
 *   npx tsx tools/bench/clinc-package.ts --csv bench/work/clinc-train.csv
 *   npx clef-web train --texts bench/work/clinc-train.csv --out bench/work/clinc-plain
 *   npx tsx tools/bench/clinc-package.ts --package bench/work/clinc-plain [--every 5]
 *
 * The CSV holds `train` + `oos_train` (15,100 queries; out of scope labelled `none`). The
 * judgement asks every `--every`-th query of `test` and of `oos_test` as the 151-option choice
 * and prints 150-way accuracy (in scope, `none` left out of the argmax), 151-way accuracy and the
 * AUROC of P(none) (out of scope = positive) as one JSON line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { parseRequestJson } from '../../src/protocol/json.js';
import { intentsOf, NONE_OPTION, readClinc } from '../train/clinc-examples.js';
import { auroc } from './baselines.js';

const { values } = parseArgs({
  options: {
    csv: { type: 'string' },
    package: { type: 'string' },
    every: { type: 'string', default: '5' },
  },
});
const data = readClinc();
const label = (intent: string) => (intent === 'oos' ? NONE_OPTION : intent);
const field = (s: string) => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

if (values.csv !== undefined) {
  const rows = [...data.train, ...data.oos_train].map(([q, i]) => `${field(q)},${label(i)}`);
  writeFileSync(values.csv, `text,label\n${rows.join('\n')}\n`);
  console.log(`wrote ${values.csv}: ${rows.length} rows`);
}
if (values.package !== undefined) {
  const every = Number(values.every);
  const manifest = JSON.parse(readFileSync(join(values.package, 'manifest.json'), 'utf8'));
  const question = manifest.training.questions[0] as { id: string };
  const options = [...intentsOf(data), NONE_OPTION];
  const criteria = Object.fromEntries(options.map((o) => [o, null]));
  const engine = await loadNodePackage(values.package, { threads: 2 });
  const pick = <T>(rows: T[]) => rows.filter((_, i) => i % every === 0);
  let right150 = 0;
  let right151 = 0;
  const inScope: number[] = [];
  const outOfScope: number[] = [];
  const rows = [...pick(data.test), ...pick(data.oos_test)];
  const started = Date.now();
  try {
    for (const [q, intent] of rows) {
      const body = parseRequestJson(
        JSON.stringify({
          model: manifest.model.name,
          state: q,
          questions: { [question.id]: { type: 'choice', criteria } },
        }),
      );
      const decided = await engine.decide(body);
      const answer = (
        decided.response.answers as Record<string, { probabilities: Record<string, number> }>
      )[question.id];
      const p = Object.entries(answer?.probabilities ?? {}).sort((a, b) => b[1] - a[1]);
      if (p[0]?.[0] === label(intent)) right151++;
      const none = answer?.probabilities[NONE_OPTION] ?? 0;
      if (intent === 'oos') outOfScope.push(none);
      else {
        inScope.push(none);
        if (p.find(([o]) => o !== NONE_OPTION)?.[0] === intent) right150++;
      }
    }
  } finally {
    await engine.dispose();
  }
  console.log(
    JSON.stringify({
      package: values.package,
      every,
      inScope: inScope.length,
      outOfScope: outOfScope.length,
      accuracy150: right150 / inScope.length,
      accuracy151: right151 / rows.length,
      aurocNone: auroc(outOfScope, inScope),
      ms: Date.now() - started,
    }),
  );
}
