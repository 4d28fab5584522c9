/**
 * clef-nano on CLINC150 (val + oos_val for the threshold, test + oos_test for the figures):
 * the converted package through the project's Node engine (src/node/engine.ts: the same
 * runner, prompt encoding and validation the browser uses, on onnxruntime's CPU kernels), and
 * optionally the PyTorch probabilities eval.py wrote, through the same metric code.
 *
 *   npx tsx tools/nano/eval.ts --package models/clef-nano \
 *       [--torch /tmp/nano/torch-probs.json] [--no-engine] [--out /tmp/nano/eval.json]
 *
 * Figures: 150-way accuracy (argmax over the 150 intents of the 151-option question, in-scope
 * test), 151-way accuracy with `none` as an option, 10-option accuracy (gold + 9 random), OOS
 * AUROC of P(none) (oos_test vs in-scope test), OOS detection with the threshold on P(none)
 * that maximises balanced accuracy on val + oos_val, the 151-class accuracy under that
 * threshold, and the expected calibration error (15 equal-width bins) of the chosen option.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { promptOptions } from '../../src/clef/prompt.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { loadNodePackage } from '../../src/node/engine.js';
import {
  NONE_OPTION,
  evalItems,
  evalSelection,
  readClinc,
  type ClincSplit,
  type RequestBody,
} from './requests.js';

interface Case {
  key: string;
  split: ClincSplit;
  kind: 'full' | 'ten';
  /** Intent name, or 'oos'. */
  gold: string;
  body: RequestBody;
  /** Option ids in prompt order (what the probabilities are listed in). */
  optionIds: string[];
}

type Probs = Record<string, number[]>;

function cases(): Case[] {
  const splits: ClincSplit[] = ['val', 'oos_val', 'test', 'oos_test'];
  const out: Case[] = [];
  for (const item of evalItems(readClinc(), splits)) {
    const selected = evalSelection(item);
    const add = (kind: 'full' | 'ten', body: RequestBody) => {
      const question = validateRequest(body).questions[0];
      if (question === undefined) throw new Error('no question');
      const optionIds = promptOptions(question).map(([id]) => id);
      out.push({
        key: `${item.split}/${item.index}/${kind}`,
        split: item.split,
        kind,
        gold: item.gold,
        body,
        optionIds,
      });
    };
    if (selected.full) add('full', item.full);
    if (selected.ten && item.ten !== null) add('ten', item.ten);
  }
  return out;
}

/** softmax in float32 arithmetic, as the engine and `logits.float().softmax(-1)` compute it. */
function float32Softmax(logits: Float32Array): number[] {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const e = Array.from(logits, (v) => Math.fround(Math.exp(Math.fround(v - max))));
  let sum = 0;
  for (const v of e) sum = Math.fround(sum + v);
  return e.map((v) => Math.fround(v / sum));
}

function argmax(xs: readonly number[], skip = -1): number {
  let best = -1;
  for (let i = 0; i < xs.length; i++) {
    if (i !== skip && (best < 0 || (xs[i] as number) > (xs[best] as number))) best = i;
  }
  return best;
}

/** Mann-Whitney AUROC: P(positive score > negative score), ties count half. */
export function auroc(positives: readonly number[], negatives: readonly number[]): number {
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

/** Expected calibration error over equal-width confidence bins. */
export function ece(
  confidences: readonly number[],
  correct: readonly boolean[],
  bins = 15,
): number {
  const sumConf = new Array<number>(bins).fill(0);
  const sumAcc = new Array<number>(bins).fill(0);
  const count = new Array<number>(bins).fill(0);
  confidences.forEach((c, i) => {
    const b = Math.min(bins - 1, Math.floor(c * bins));
    sumConf[b] = (sumConf[b] as number) + c;
    sumAcc[b] = (sumAcc[b] as number) + (correct[i] ? 1 : 0);
    count[b] = (count[b] as number) + 1;
  });
  let total = 0;
  for (let b = 0; b < bins; b++) {
    if ((count[b] as number) > 0) total += Math.abs((sumAcc[b] as number) - (sumConf[b] as number));
  }
  return total / confidences.length;
}

export interface Figures {
  n: { full_in: number; full_oos: number; ten: number; val_in: number; val_oos: number };
  acc150: number;
  acc151: number;
  acc10: number;
  auroc: number;
  threshold: number;
  oosRecall: number;
  inScopeKept: number;
  oosBinaryAccuracy: number;
  acc151Thresholded: number;
  ece151: number;
  ece10: number;
}

/** Every figure from one source of probabilities. */
export function figures(all: readonly Case[], probs: Probs): Figures {
  const p = (c: Case): number[] => {
    const v = probs[c.key];
    if (v === undefined || v.length !== c.optionIds.length)
      throw new Error(`no probabilities for ${c.key}`);
    return v;
  };
  const noneOf = (c: Case): number => p(c)[c.optionIds.indexOf(NONE_OPTION)] as number;
  const goldIndex = (c: Case): number =>
    c.optionIds.indexOf(c.gold === 'oos' ? NONE_OPTION : c.gold);
  const full = all.filter(
    (c) => c.kind === 'full' && (c.split === 'test' || c.split === 'oos_test'),
  );
  const val = all.filter((c) => c.kind === 'full' && (c.split === 'val' || c.split === 'oos_val'));
  const ten = all.filter((c) => c.kind === 'ten');
  const fullIn = full.filter((c) => c.gold !== 'oos');
  const fullOos = full.filter((c) => c.gold === 'oos');
  const rate = (xs: readonly boolean[]): number => xs.filter(Boolean).length / xs.length;

  const acc150 = rate(
    fullIn.map((c) => argmax(p(c), c.optionIds.indexOf(NONE_OPTION)) === goldIndex(c)),
  );
  const acc151 = rate(full.map((c) => argmax(p(c)) === goldIndex(c)));
  const acc10 = rate(ten.map((c) => argmax(p(c)) === goldIndex(c)));
  const auc = auroc(fullOos.map(noneOf), fullIn.map(noneOf));

  // Threshold on val + oos_val: flag oos when P(none) >= t; maximise balanced accuracy.
  const valIn = val.filter((c) => c.gold !== 'oos').map(noneOf);
  const valOos = val.filter((c) => c.gold === 'oos').map(noneOf);
  let threshold = 1;
  let best = -1;
  for (const t of [...new Set([...valIn, ...valOos])].sort((a, b) => a - b)) {
    const score =
      (valOos.filter((x) => x >= t).length / valOos.length +
        valIn.filter((x) => x < t).length / valIn.length) /
      2;
    if (score > best) [best, threshold] = [score, t];
  }
  const oosRecall = rate(fullOos.map((c) => noneOf(c) >= threshold));
  const inScopeKept = rate(fullIn.map((c) => noneOf(c) < threshold));
  const oosBinaryAccuracy =
    (oosRecall * fullOos.length + inScopeKept * fullIn.length) / full.length;
  const acc151Thresholded = rate(
    full.map((c) =>
      c.gold === 'oos'
        ? noneOf(c) >= threshold
        : noneOf(c) < threshold && argmax(p(c), c.optionIds.indexOf(NONE_OPTION)) === goldIndex(c),
    ),
  );
  const chosen = (cs: readonly Case[]) => ({
    conf: cs.map((c) => Math.max(...p(c))),
    ok: cs.map((c) => argmax(p(c)) === goldIndex(c)),
  });
  const c151 = chosen(full);
  const c10 = chosen(ten);
  return {
    n: {
      full_in: fullIn.length,
      full_oos: fullOos.length,
      ten: ten.length,
      val_in: valIn.length,
      val_oos: valOos.length,
    },
    acc150,
    acc151,
    acc10,
    auroc: auc,
    threshold,
    oosRecall,
    inScopeKept,
    oosBinaryAccuracy,
    acc151Thresholded,
    ece151: ece(c151.conf, c151.ok),
    ece10: ece(c10.conf, c10.ok),
  };
}

async function engineProbs(
  dir: string,
  all: readonly Case[],
): Promise<{ probs: Probs; msPerRequest: number }> {
  const engine = await loadNodePackage(dir, { threads: 1 });
  const probs: Probs = {};
  const started = Date.now();
  try {
    for (const [i, c] of all.entries()) {
      const decision = await engine.decide(c.body);
      const q = decision.encoded.questions[0];
      const logits = decision.logits[0];
      if (q === undefined || logits === undefined) throw new Error('no answer');
      if (q.optionIds.join('\n') !== c.optionIds.join('\n'))
        throw new Error(`${c.key}: option order`);
      probs[c.key] = float32Softmax(logits);
      if ((i + 1) % 100 === 0)
        process.stderr.write(
          `engine: ${i + 1}/${all.length}, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        );
    }
  } finally {
    await engine.dispose();
  }
  return { probs, msPerRequest: (Date.now() - started) / all.length };
}

function table(columns: Array<[string, Figures]>): string {
  const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
  const rows: Array<[string, (f: Figures) => string]> = [
    ['150-way accuracy (in-scope test)', (f) => pct(f.acc150)],
    ['151-way accuracy (none as an option)', (f) => pct(f.acc151)],
    ['10-option accuracy', (f) => pct(f.acc10)],
    ['OOS AUROC of P(none)', (f) => f.auroc.toFixed(4)],
    ['threshold on P(none) (from val)', (f) => f.threshold.toFixed(4)],
    ['OOS recall at threshold', (f) => pct(f.oosRecall)],
    ['in-scope kept at threshold', (f) => pct(f.inScopeKept)],
    ['OOS detection accuracy', (f) => pct(f.oosBinaryAccuracy)],
    ['151-class accuracy at threshold', (f) => pct(f.acc151Thresholded)],
    ['ECE, 151-way (chosen option)', (f) => f.ece151.toFixed(4)],
    ['ECE, 10-option (chosen option)', (f) => f.ece10.toFixed(4)],
  ];
  const head = `| figure | ${columns.map(([n]) => n).join(' | ')} |\n|---|${columns.map(() => '---|').join('')}`;
  return [
    head,
    ...rows.map(([name, f]) => `| ${name} | ${columns.map(([, c]) => f(c)).join(' | ')} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      package: { type: 'string', default: 'models/clef-nano' },
      torch: { type: 'string' },
      'no-engine': { type: 'boolean', default: false },
      // Save the package's probabilities, or read them back instead of running the engine.
      'save-probs': { type: 'string' },
      'engine-probs': { type: 'string' },
      out: { type: 'string' },
      // Smoke runs only: keep every Nth case (the reported figures use every case).
      every: { type: 'string', default: '1' },
    },
  });
  const every = Number(values.every);
  const all = cases().filter((_, i) => i % every === 0);
  const report: Record<string, unknown> = { cases: all.length, every };
  const columns: Array<[string, Figures]> = [];
  let engine: Probs | undefined;
  let torch: Probs | undefined;
  if (values['engine-probs'] !== undefined) {
    engine = JSON.parse(readFileSync(values['engine-probs'], 'utf8')) as Probs;
  } else if (!values['no-engine']) {
    const run = await engineProbs(values.package as string, all);
    engine = run.probs;
    report.engineMsPerRequest = run.msPerRequest;
    if (values['save-probs'] !== undefined)
      writeFileSync(values['save-probs'], JSON.stringify(engine));
  }
  if (engine !== undefined) {
    report.engine = figures(all, engine);
    columns.push(['package (Node engine)', report.engine as Figures]);
  }
  if (values.torch !== undefined) {
    torch = JSON.parse(readFileSync(values.torch, 'utf8')) as Probs;
    report.torch = figures(all, torch);
    columns.push(['PyTorch', report.torch as Figures]);
  }
  if (engine && torch) {
    let max = 0;
    let sameChoice = 0;
    for (const c of all) {
      const a = engine[c.key] as number[];
      const b = torch[c.key] as number[];
      a.forEach((v, i) => (max = Math.max(max, Math.abs(v - (b[i] as number)))));
      if (argmax(a) === argmax(b)) sameChoice++;
    }
    report.maxAbsDpEngineVsTorch = max;
    report.sameChoice = sameChoice / all.length;
  }
  const n = (columns[0]?.[1] as Figures | undefined)?.n;
  process.stdout.write(`${table(columns)}\n\ncases: ${JSON.stringify(n)}\n`);
  if (report.maxAbsDpEngineVsTorch !== undefined) {
    process.stdout.write(
      `max |dp| package vs PyTorch: ${(report.maxAbsDpEngineVsTorch as number).toExponential(2)}, same choice ${(100 * (report.sameChoice as number)).toFixed(2)}%\n`,
    );
  }
  if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(report, null, 2) + '\n');
}

await main();
