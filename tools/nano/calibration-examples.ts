/**
 * Writes the labelled examples `clef-web calibrate` fits clef-nano's calibration on: the fit
 * cases of calibration-cases.ts (val + oos_val only), one line each, labelled with the gold
 * intent (`none` for out-of-scope queries).
 *
 *   npx tsx tools/nano/calibration-examples.ts --out /tmp/nano/calibration-val.jsonl
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { calibrationCases } from './calibration-cases.js';
import { NONE_OPTION } from './requests.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
if (values.out === undefined) throw new Error('--out <file> is required');
const lines = calibrationCases('fit').map((c) => {
  const intent = c.gold === 'oos' ? NONE_OPTION : c.gold;
  return JSON.stringify({ request: c.body, labels: { intent } });
});
writeFileSync(values.out, `${lines.join('\n')}\n`);
process.stderr.write(`${lines.length} labelled examples -> ${values.out}\n`);
