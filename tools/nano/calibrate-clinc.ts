/**
 * clef-nano's calibration measured on CLINC150: fitted on val + oos_val, measured on test +
 * oos_test, never the reverse (cases: calibration-cases.ts; logits: clinc-logits.ts).
 *
 *   npx tsx tools/nano/calibrate-clinc.ts --fit /tmp/nano/logits-fit.json \
 *       --test /tmp/nano/logits-test.json --calibration models/clef-nano/calibration.json \
 *       [--svg models/clef-nano/reliability.svg] [--out /tmp/nano/calibration-figures.json]
 *
 * The fit is the core's fitCalibration with the options `clef-web calibrate` was run with
 * (bands 2-12 and 13-255, 10% held out, seed 0), at 80%, 90% and 95% coverage; the 90% fit is
 * checked equal to the shipped calibration.json (which the CLI wrote from its own forwards).
 * Test figures per question kind: ECE (15 bins) before (T = 1) and after, accuracy, coverage
 * and mean size of the prediction sets, the share of answers not abstained from (a set of one)
 * and the accuracy on those.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  bandFor,
  evaluate,
  fitCalibration,
  parseCalibration,
  predictionSet,
  reliabilitySvg,
  scaledSoftmax,
  type CalibrationFile,
  type CalibrationRecord,
  type Evaluation,
} from '../../src/calibrate/index.js';
import type { SavedLogits } from './clinc-logits.js';
import { NONE_OPTION } from './requests.js';

const BANDS = [
  { minOptions: 2, maxOptions: 12 },
  { minOptions: 13, maxOptions: 255 },
];
const FIT = { bands: BANDS, heldOutFraction: 0.1, seed: 0 };
const KINDS = { full: '151-way', ten: '10-option' } as const;

type Kind = keyof typeof KINDS;
type Rec = CalibrationRecord & { kind: Kind };

function records(path: string): Rec[] {
  const saved = JSON.parse(readFileSync(path, 'utf8')) as Record<string, SavedLogits>;
  return Object.entries(saved).map(([key, s]) => {
    const label = s.optionIds.indexOf(s.gold === 'oos' ? NONE_OPTION : s.gold);
    if (label < 0) throw new Error(`${key}: gold not among the options`);
    const { optionIds, logits, kind } = s;
    return { questionId: key, type: 'choice', optionIds, logits, label, kind };
  });
}

interface KindFigures {
  n: number;
  before: Omit<Evaluation, 'reliability'>;
  after: Omit<Evaluation, 'reliability'>;
  /** Share of answers whose set is a single option (not abstained from), and their accuracy. */
  answered: number;
  accuracyAnswered: number;
  reliability: { before: Evaluation['reliability']; after: Evaluation['reliability'] };
}

/** The figures without the reliability bins. */
function strip(e: Evaluation): Omit<Evaluation, 'reliability'> {
  const { n, ece, accuracy, nll, coverage, meanSetSize } = e;
  return { n, ece, accuracy, nll, coverage, meanSetSize };
}

function measure(file: CalibrationFile, thresholdBefore: number[], test: Rec[]): KindFigures {
  const entry = file.types.choice!;
  const k = test[0]!.logits.length;
  const band = bandFor(entry, k);
  if (band === undefined) throw new Error(`no band for ${k} options`);
  const bandIndex = entry.bands!.indexOf(band);
  const before = evaluate(test, 1, thresholdBefore[bandIndex]!);
  const after = evaluate(test, band.temperature, band.threshold);
  let answered = 0;
  let right = 0;
  for (const r of test) {
    const set = predictionSet(scaledSoftmax(r.logits, band.temperature), band.threshold);
    if (set.length !== 1) continue;
    answered++;
    if (set[0] === r.label) right++;
  }
  return {
    n: test.length,
    before: strip(before),
    after: strip(after),
    answered: answered / test.length,
    accuracyAnswered: right / Math.max(1, answered),
    reliability: { before: before.reliability, after: after.reliability },
  };
}

const { values } = parseArgs({
  options: {
    fit: { type: 'string' },
    test: { type: 'string' },
    calibration: { type: 'string' },
    svg: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!values.fit || !values.test) throw new Error('--fit and --test are required');
const fitRecords = records(values.fit);
const testRecords = records(values.test);
if (testRecords.some((r) => !/^(test|oos_test)\//.test(r.questionId))) throw new Error('not test');
if (fitRecords.some((r) => !/^(val|oos_val)\//.test(r.questionId))) throw new Error('not val');

const report: Record<string, unknown> = {
  fit: { n: fitRecords.length, ...FIT },
  test: { n: testRecords.length },
};
const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
const rows: string[] = [
  '| coverage asked | question | n (test) | T | ECE before | ECE after | accuracy | coverage | mean set size | answered (set of one) | accuracy answered |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];
const pooledRows: string[] = [
  '| coverage asked | question | pooled T | ECE | coverage | mean set size |',
  '|---|---|---|---|---|---|',
];
for (const coverage of [0.8, 0.9, 0.95]) {
  const { calibration, reports } = fitCalibration(fitRecords, { coverage, ...FIT });
  const thresholdBefore = reports[0]!.bands.map((b) => b.thresholdBefore);
  if (coverage === 0.9 && values.calibration) {
    const shipped = parseCalibration(readFileSync(values.calibration, 'utf8'));
    if (JSON.stringify(shipped) !== JSON.stringify(calibration)) {
      throw new Error('the shipped calibration differs from this fit');
    }
    report.shippedMatches = true;
  }
  const byKind: Record<string, KindFigures> = {};
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const f = measure(
      calibration,
      thresholdBefore,
      testRecords.filter((r) => r.kind === kind),
    );
    byKind[kind] = f;
    const band = bandFor(calibration.types.choice!, kind === 'full' ? 151 : 10)!;
    rows.push(
      `| ${pct(coverage)} | ${KINDS[kind]} | ${f.n} | ${band.temperature.toFixed(3)} | ` +
        `${f.before.ece.toFixed(4)} | ${f.after.ece.toFixed(4)} | ${pct(f.after.accuracy)} | ` +
        `${pct(f.after.coverage)} | ${f.after.meanSetSize.toFixed(2)} | ${pct(f.answered)} | ` +
        `${pct(f.accuracyAnswered)} |`,
    );
  }
  // The same fit without bands' help: the choice type's own (pooled) entry for every question.
  const pooled = calibration.types.choice!;
  const pooledFigures: Record<string, Omit<Evaluation, 'reliability'>> = {};
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const f = strip(
      evaluate(
        testRecords.filter((r) => r.kind === kind),
        pooled.temperature,
        pooled.threshold,
      ),
    );
    pooledFigures[kind] = f;
    pooledRows.push(
      `| ${pct(coverage)} | ${KINDS[kind]} | ${pooled.temperature.toFixed(3)} | ` +
        `${f.ece.toFixed(4)} | ${pct(f.coverage)} | ${f.meanSetSize.toFixed(2)} |`,
    );
  }
  report[String(coverage)] = { calibration, figures: byKind, pooled: pooledFigures };
  if (coverage === 0.9 && values.svg) {
    const f = byKind as Record<Kind, KindFigures>;
    const panels = (Object.keys(KINDS) as Kind[]).flatMap((kind) => [
      { title: `${KINDS[kind]}, raw`, bins: f[kind].reliability.before, ece: f[kind].before.ece },
      {
        title: `${KINDS[kind]}, calibrated`,
        bins: f[kind].reliability.after,
        ece: f[kind].after.ece,
      },
    ]);
    const caption =
      'clef-nano on CLINC150 test + oos_test (fit on val + oos_val); bars: accuracy, dots: mean confidence';
    writeFileSync(values.svg, reliabilitySvg(panels, caption));
  }
}
process.stdout.write(`${rows.join('\n')}\n\nwithout bands (one choice entry for both):\n`);
process.stdout.write(`${pooledRows.join('\n')}\n`);
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
