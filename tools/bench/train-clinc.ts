/**
 * `clef-web train` on CLINC150, measured: fit on train + oos_train, select (and calibrate) on
 * val + oos_val, report on all of test + oos_test through the package (onnxruntime-node), never
 * the reverse. Prints the figures and their targets (the model card's) and writes them as JSON.
 *
 *   npx tsx tools/bench/train-clinc.ts --out bench/work/clinc [--per-intent 10,25,50,100]
 *       [--package models/clef-nano] [--label NAME] [--threads N] [--eval-every N]
 *
 * - The main run: training time and the peak resident memory of this process, the package's
 *   bytes, then test 150-way accuracy (in scope, `none` left out of the argmax), 151-way
 *   accuracy, AUROC of P(none) (out of scope = positive), ECE of the top option on the 151-way
 *   question raw and calibrated (the package's calibration.json: its temperature), and
 *   10-option accuracy (each in-scope test query asked with its intent and 9 others drawn with a
 *   fixed seed, a request of its own).
 * - `--per-intent`: the learning curve, the same run on N training queries per intent (and
 *   N·2/3 out-of-scope ones), 150-way and 10-option accuracy on every 5th in-scope test query
 *   (`--curve-every`: 900 of 4,500; a 151-option request takes ~50-90 ms here), beside naive
 *   Bayes fitted on the same rows and judged on the same queries (`naiveBayes150`).
 * - `--threads N`: the fit's threads (`clef-web train --threads`; default: the cores, at most 4).
 *   The training time is printed with the CPU time of the whole process (every thread) and the
 *   load average at its start and end: the machine may be shared.
 * - `--eval-every N`: the main run's figures on every Nth test query only (default 1: all);
 *   0 skips the evaluation (a run that only times the training).
 * - `--package DIR` also keeps the main run's package there (how models/clef-nano is made).
 * - `--evaluate DIR [--eval-every N]`: no training; the test figures of the package in DIR (e.g.
 *   models/clef-nano) on every Nth query of `test` + `oos_test` (and every Nth of `test` for the
 *   10-option requests).
 * - `--described`: each training and held-out query also as a 10-option choice with descriptions
 *   (tools/train/intent-descriptions.json), as pages ask clef-nano; the calibration fits the
 *   2-12 and 13-255 option bands on their own.
 */
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseCalibration } from '../../src/calibrate/file.js';
import { binIndex, expectedCalibrationError } from '../../src/calibrate/metrics.js';
import { scaledSoftmax } from '../../src/calibrate/softmax.js';
import { loadNodePackage } from '../../src/node/engine.js';
import { Rng } from '../../src/calibrate/prng.js';
import { trainDecisionModel } from '../../src/node/train/train.js';
import { formatProgress } from '../../src/node/train/cli.js';
import { fitNaiveBayes, naiveBayesChoice } from '../../src/build/train/baseline.js';
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { validateRequest } from '../../src/protocol/validate.js';
import {
  CLINC_MODEL,
  CLINC_QUESTION,
  clincDescribedLine,
  clincLine,
  clincRequest,
  intentsOf,
  NONE_OPTION,
  readClinc,
  readDescriptions,
  type ClincData,
} from '../train/clinc-examples.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'bench/work/clinc' },
    'per-intent': { type: 'string' },
    package: { type: 'string' },
    label: { type: 'string', default: 'train-clinc' },
    'skip-main': { type: 'boolean', default: false },
    described: { type: 'boolean', default: false },
    'curve-every': { type: 'string', default: '5' },
    evaluate: { type: 'string' },
    threads: { type: 'string' },
    'eval-every': { type: 'string', default: '1' },
  },
});
const work = values.out as string;
mkdirSync(work, { recursive: true });
const data = readClinc();
const intents = intentsOf(data);
const options151 = [...intents, NONE_OPTION];

function jsonl(rows: Array<[string, string]>, described = false): string {
  const lines = rows.map(([q, i]) => clincLine(q, i, options151));
  if (described) {
    // Each query once more as a 10-option choice with descriptions (as pages ask clef-nano).
    const rng = new Rng(77);
    const descriptions = readDescriptions();
    for (const [q, i] of rows) lines.push(clincDescribedLine(q, i, intents, descriptions, rng));
  }
  return lines.join('\n') + '\n';
}

function sample(rows: Array<[string, string]>, n: number, rng: Rng): Array<[string, string]> {
  const a = [...rows];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j] as [string, string], a[i] as [string, string]];
  }
  return a.slice(0, n);
}

function trainRows(perIntent: number | null): Array<[string, string]> {
  if (perIntent === null) return [...data.train, ...data.oos_train];
  const rng = new Rng(perIntent);
  const byIntent = new Map<string, Array<[string, string]>>();
  for (const row of data.train) byIntent.set(row[1], [...(byIntent.get(row[1]) ?? []), row]);
  const rows = intents.flatMap((i) => sample(byIntent.get(i) ?? [], perIntent, rng));
  rows.push(...sample(data.oos_train, Math.max(5, Math.round((perIntent * 2) / 3)), rng));
  return rows;
}

/**
 * Multinomial naive Bayes on word counts, fitted on the same training rows, judged 150-way on the
 * same in-scope test queries as the model (every `every`th): the baseline the curve must beat.
 */
function naiveBayes150(rows: Array<[string, string]>, every: number): number {
  const examples = parseLabelledExamples(
    rows.map(([q, i]) => clincLine(q, i, options151)).join('\n'),
    {
      validateRequest: (b) => validateRequest(b),
    },
  );
  const nb = fitNaiveBayes(examples, CLINC_QUESTION);
  if (nb === null) throw new Error('naive Bayes fitted on nothing');
  const test = data.test.filter((_, i) => i % every === 0);
  return (
    test.filter(([q, intent]) => naiveBayesChoice(nb, q, intents) === intent).length / test.length
  );
}

function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

function auroc(positive: number[], negative: number[]): number {
  const all = [...positive.map((v) => [v, 1] as const), ...negative.map((v) => [v, 0] as const)];
  all.sort((a, b) => a[0] - b[0]);
  let rankSum = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (
      j < all.length &&
      (all[j] as readonly [number, number])[0] === (all[i] as readonly [number, number])[0]
    )
      j++;
    const rank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if ((all[k] as readonly [number, number])[1] === 1) rankSum += rank;
    i = j;
  }
  const p = positive.length;
  return (rankSum - (p * (p + 1)) / 2) / (p * negative.length);
}

/** Ten options for an in-scope query: its intent and nine others, drawn per query. */
function tenOptions(intent: string, rng: Rng): string[] {
  const others = intents.filter((i) => i !== intent);
  const picked = sample(
    others.map((o) => [o, o] as [string, string]),
    9,
    rng,
  ).map(([o]) => o);
  return [intent, ...picked];
}

/** Out-of-scope queries per in-scope one in val + oos_val (100 and 3,000). */
const VAL_OOS_ODDS = 100 / 3000;

/** ECE over metrics.ts's bins (their count: the bin of confidence 1, plus one), weighted per answer. */
function weightedEce(
  confidences: readonly number[],
  correct: readonly boolean[],
  weight: (k: number) => number,
): number {
  const bins = Array.from({ length: binIndex(1) + 1 }, () => ({ w: 0, conf: 0, right: 0 }));
  let total = 0;
  confidences.forEach((c, k) => {
    const bin = bins[binIndex(c)] as { w: number; conf: number; right: number };
    const w = weight(k);
    bin.w += w;
    bin.conf += w * c;
    if (correct[k]) bin.right += w;
    total += w;
  });
  return bins.reduce((e, b) => (b.w === 0 ? e : e + Math.abs(b.right - b.conf) / total), 0);
}

async function evaluate(dir: string, d: ClincData, full: boolean, every = 1) {
  const engine = await loadNodePackage(dir);
  const calibration = full
    ? parseCalibration(readFileSync(join(dir, 'calibration.json'), 'utf8'))
    : null;
  const temperature = (options: number): number => {
    const entry = calibration?.types.choice;
    const band = entry?.bands?.find((b) => options >= b.minOptions && options <= b.maxOptions);
    return band?.temperature ?? entry?.temperature ?? 1;
  };
  try {
    // The head's logits are in prompt order: a choice's options sorted by code point.
    const promptOrder = [...options151].sort();
    const none = promptOrder.indexOf(NONE_OPTION);
    let right150 = 0;
    let right151 = 0;
    let inScope = 0;
    const pNoneIn: number[] = [];
    const pNoneOut: number[] = [];
    const conf = {
      raw: [] as number[],
      cal: [] as number[],
      correct: [] as boolean[],
      outOfScope: [] as boolean[],
    };
    const started = Date.now();
    const rows = [...d.test, ...(full ? d.oos_test : [])].filter((_, i) => i % every === 0);
    for (const [i, [query, intent]] of rows.entries()) {
      const logits = (await engine.decide(clincRequest(query, options151)))
        .logits[0] as ArrayLike<number>;
      const p = scaledSoftmax(logits);
      const label = intent === 'oos' ? none : promptOrder.indexOf(intent);
      let best = 0;
      let best150 = -1;
      for (let k = 0; k < p.length; k++) {
        if ((p[k] as number) > (p[best] as number)) best = k;
        if (k !== none && (best150 < 0 || (p[k] as number) > (p[best150] as number))) best150 = k;
      }
      if (best === label) right151++;
      if (intent !== 'oos') {
        inScope++;
        if (best150 === label) right150++;
        pNoneIn.push(p[none] as number);
      } else pNoneOut.push(p[none] as number);
      conf.raw.push(p[best] as number);
      conf.cal.push(Math.max(...scaledSoftmax(logits, temperature(151))));
      conf.correct.push(best === label);
      conf.outOfScope.push(intent === 'oos');
      if ((i + 1) % 500 === 0) {
        const per = (Date.now() - started) / (i + 1);
        process.stderr.write(`eval: ${i + 1}/${rows.length}, ${per.toFixed(1)} ms a request\n`);
      }
    }
    const msPerRequest151 = (Date.now() - started) / rows.length;
    const rng = new Rng(10);
    let right10 = 0;
    const tenRows = d.test.filter((_, i) => i % every === 0);
    for (const [query, intent] of tenRows) {
      const opts = tenOptions(intent, rng);
      const response = (await engine.decide(clincRequest(query, opts))).response;
      if ((response.answers.intent as { choice: string }).choice === intent) right10++;
    }
    return {
      accuracy150: right150 / inScope,
      accuracy151: full ? right151 / rows.length : null,
      aurocNone: full ? auroc(pNoneOut, pNoneIn) : null,
      ece151Raw: full ? expectedCalibrationError(conf.raw, conf.correct) : null,
      ece151Calibrated: full ? expectedCalibrationError(conf.cal, conf.correct) : null,
      temperature151: full ? temperature(151) : null,
      // The calibrated ECE where test's mix of out-of-scope queries (18%) is weighted to the
      // mix the temperature was fitted on (val + oos_val: 100 of 3,100), and in scope alone.
      ece151CalibratedAtValMix: full
        ? weightedEce(conf.cal, conf.correct, (k) =>
            conf.outOfScope[k] ? VAL_OOS_ODDS * (inScope / (rows.length - inScope)) : 1,
          )
        : null,
      ece151CalibratedInScope: full
        ? expectedCalibrationError(
            conf.cal.filter((_, k) => !conf.outOfScope[k]),
            conf.correct.filter((_, k) => !conf.outOfScope[k]),
          )
        : null,
      accuracy10: right10 / tenRows.length,
      testQueries: rows.length,
      msPerRequest151,
    };
  } finally {
    await engine.dispose();
  }
}

async function run(perIntent: number | null) {
  const name = perIntent === null ? 'full' : `per-${perIntent}`;
  const out = join(work, name);
  rmSync(out, { recursive: true, force: true });
  rmSync(`${out}-release`, { recursive: true, force: true });
  const examples = jsonl(trainRows(perIntent), values.described === true);
  const heldOut = jsonl([...data.val, ...data.oos_val], values.described === true);
  let peakRss = process.memoryUsage().rss;
  let peakLoad = loadavg()[0] as number;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakLoad = Math.max(peakLoad, loadavg()[0] as number);
  }, 200);
  const loadAtStart = loadavg();
  const cpuAtStart = process.cpuUsage();
  const started = Date.now();
  const result = await trainDecisionModel({
    examples,
    heldOutExamples: heldOut,
    out,
    name: CLINC_MODEL,
    seed: 1,
    threads: values.threads === undefined ? undefined : Number(values.threads),
    fidelityRequests: perIntent === null ? 2 : 0,
    cardNotes: readFileSync(join('tools', 'train', 'clef-nano-card.md'), 'utf8'),
    calibrationBands: [
      { minOptions: 2, maxOptions: 12 },
      { minOptions: 13, maxOptions: 255 },
    ],
    onProgress: (p) => {
      if (p.phase !== 'verify' || p.done === p.total)
        process.stderr.write(`${formatProgress(p)}\n`);
    },
  });
  clearInterval(sampler);
  const trainMs = Date.now() - started;
  const cpu = process.cpuUsage(cpuAtStart);
  const loadAtEnd = loadavg();
  const every = Number(values[perIntent === null ? 'eval-every' : 'curve-every']);
  const figures = every === 0 ? null : await evaluate(out, data, perIntent === null, every);
  return {
    run: name,
    naiveBayes150: every === 0 ? null : naiveBayes150(trainRows(perIntent), every),
    trainExamples: result.examples.train,
    trainMs,
    trainCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    /** The 1-, 5- and 15-minute load averages at the training's start and end, and the 1-minute's peak. */
    load: { atStart: loadAtStart, atEnd: loadAtEnd, peak1min: peakLoad },
    phasesMs: result.timingsMs,
    peakRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
    packageBytes: dirBytes(out),
    settings: result.selection.settings,
    maxPackageDeltaP: result.maxPackageDeltaP,
    ...(figures ?? {
      accuracy150: null,
      aurocNone: null,
      ece151Raw: null,
      ece151Calibrated: null,
      accuracy10: null,
    }),
    dir: out,
  };
}

const machine = { cpus: cpus().length, model: cpus()[0]?.model, loadBefore: loadavg() };
const results: unknown[] = [];
if (values.evaluate !== undefined) {
  const figures = await evaluate(values.evaluate, data, true, Number(values['eval-every']));
  results.push({
    run: 'evaluate',
    dir: values.evaluate,
    every: Number(values['eval-every']),
    ...figures,
  });
  console.log(JSON.stringify(figures, null, 2));
} else if (!values['skip-main']) {
  const main = await run(null);
  results.push(main);
  console.log(JSON.stringify(main, null, 2));
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(2)}%`);
  console.log(
    [
      `150-way ${pct(main.accuracy150)} (target ≥ 90%)`,
      `AUROC(none) ${main.aurocNone?.toFixed(4)} (≥ 0.92)`,
      `ECE 151-way calibrated ${main.ece151Calibrated?.toFixed(4)} (≤ 0.03; raw ${main.ece151Raw?.toFixed(4)})`,
      `10-option ${pct(main.accuracy10)} (≥ 97%)`,
      `train ${(main.trainMs / 60000).toFixed(1)} min (≤ 10; CPU ${(main.trainCpuMs / 60000).toFixed(1)} min, ` +
        `load ${main.load.atStart[0]?.toFixed(2)} at the start, ${main.load.atEnd[0]?.toFixed(2)} at the end, ${main.load.peak1min.toFixed(2)} at most), peak RSS ${(main.peakRssBytes / 2 ** 30).toFixed(2)} GiB (≤ 2)`,
      `package ${(main.packageBytes / 2 ** 20).toFixed(2)} MiB (≤ 4)`,
    ].join('\n'),
  );
  if (values.package !== undefined) {
    rmSync(values.package, { recursive: true, force: true });
    cpSync(main.dir, values.package, { recursive: true });
    console.log(`copied the package to ${values.package}`);
  }
}
for (const n of (values['per-intent'] ?? '').split(',').filter((s) => s !== '')) {
  const r = await run(Number(n));
  results.push(r);
  console.log(JSON.stringify(r));
}
const file = join(work, `${values.label}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ machine: { ...machine, loadAfter: loadavg() }, results }, null, 2)}\n`,
);
console.log(`wrote ${file}`);
