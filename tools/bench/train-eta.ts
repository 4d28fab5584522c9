/**
 * The fit phase's time left, against the time it then took: `train`'s fit phase (prepare and
 * fitPhase as runTraining runs them, with the shard pool `train` uses) on the project's small
 * files and CLINC150 draws, each report's estimate (fit-progress.ts FitClock) beside the time the
 * phase had left, and beside the estimate before it (the mean fit's time times the fits left).
 * Also each kind of fit's mean time, the figures KIND_COST stands on.
 *
 *   npx tsx tools/bench/train-eta.ts [--tasks helpdesk,failing,gate,urgency] [--clinc-draws 3]
 *       [--clinc-first 0] [--label NAME]
 *
 * Prints, per file, what each estimate said at a tenth, three tenths, half and nine tenths of the
 * phase and what was left then (also FitClock with the contingent fits counted, the fits at the
 * most), and the mean |log((said + 1 s) / (left + 1 s))| over every
 * report (0 is exact; 0.69 is off by a factor of two). Writes JSON to bench/results.
 */
import { parseArgs } from 'node:util';
import { RMS_EPS } from '../../src/build/train/construct.js';
import { fitPhase } from '../../src/build/train/fit.js';
import { FIT_KINDS, FitClock, type FitKind } from '../../src/build/train/fit-progress.js';
import { resolveTrainInput } from '../../src/build/train/input.js';
import { prepare } from '../../src/build/train/prepare.js';
import { nodeShardPool } from '../../src/node/train/shard-pool.js';
import { defaultTrainThreads } from '../../src/node/train/train.js';
import { writeResults } from './results-file.js';
import { loadClincDraw, loadTask, type Task } from './small-tasks.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency' },
    'clinc-draws': { type: 'string', default: '3' },
    'clinc-first': { type: 'string', default: '0' },
    label: { type: 'string', default: 'train-eta' },
  },
});

interface Point {
  t: number;
  said: number | undefined;
  /** FitClock's estimate with the contingent fits counted as sure ones (the fits at the most). */
  atMost: number | undefined;
  before: number | undefined;
}

async function fitPhaseOf(task: Task) {
  const options = resolveTrainInput({
    texts: task.train.map((l) => JSON.stringify({ text: l.text, label: l.label })).join('\n'),
    plain: { format: 'jsonl', labelColumn: 'label' },
    question: { [task.questionId]: task.question },
    name: task.name,
    out: 'unused',
  });
  const prepared = prepare(
    options,
    1,
    4096,
    0.9,
    () => {},
    () => {},
  );
  const threads = defaultTrainThreads();
  const pool = threads > 1 ? nodeShardPool(threads) : undefined;
  const clock = new FitClock();
  const atMostClock = new FitClock();
  const points: Point[] = [];
  const fits: Array<{ kind: FitKind; ms: number }> = [];
  const start = Date.now();
  let last = start;
  try {
    await fitPhase(
      prepared.data,
      prepared.questions,
      { examples: prepared.trainExamples, encoded: prepared.train },
      { examples: prepared.heldOutExamples, encoded: prepared.heldOut },
      {
        seed: 1,
        rmsEps: RMS_EPS,
        pool,
        onFit: (report) => {
          const t = Date.now();
          const said = clock.read(report);
          const all = { ...report.sure };
          for (const k of FIT_KINDS) all[k] += report.contingent[k];
          const atMost = atMostClock.read({ ...report, sure: all });
          const { done, total } = report;
          const before = done === 0 ? undefined : ((t - start) / done) * (total - done);
          if (report.iteration === undefined) {
            fits.push({ kind: report.kind, ms: t - last });
            last = t;
          }
          if (done < total) points.push({ t, said, atMost, before });
        },
      },
    );
  } finally {
    await pool?.close();
  }
  return { ms: Date.now() - start, start, points, fits, threads };
}

const logRatio = (said: number, left: number) => Math.abs(Math.log((said + 1000) / (left + 1000)));

function judge(
  run: Awaited<ReturnType<typeof fitPhaseOf>>,
  pick: (p: Point) => number | undefined,
) {
  const end = run.start + run.ms;
  const judged = run.points.flatMap((p) => {
    const said = pick(p);
    return said === undefined ? [] : [{ t: p.t, said, left: end - p.t }];
  });
  const at = [0.1, 0.3, 0.5, 0.9].map((share) => {
    const upTo = judged.filter((p) => p.t - run.start <= share * run.ms).at(-1);
    return {
      share,
      said: upTo === undefined ? null : Math.round(upTo.said / 1000),
      left: upTo === undefined ? null : Math.round(upTo.left / 1000),
    };
  });
  const mean = judged.reduce((s, p) => s + logRatio(p.said, p.left), 0) / judged.length;
  return { at, meanLogRatio: Number(mean.toFixed(2)) };
}

const tasks: Task[] = [
  ...(values.tasks === '' ? [] : (values.tasks as string).split(',').map((n) => loadTask(n))),
  ...Array.from({ length: Number(values['clinc-draws']) }, (_, i) => {
    const draw = Number(values['clinc-first']) + i;
    return {
      ...loadClincDraw({ draw, intents: 6, perLabel: 40, seed: 1 }),
      name: `clinc-draw-${draw}`,
    };
  }),
];
const results = [];
for (const task of tasks) {
  const run = await fitPhaseOf(task);
  const kinds = Object.fromEntries(
    FIT_KINDS.map((kind) => {
      const of = run.fits.filter((f) => f.kind === kind);
      const mean = of.reduce((s, f) => s + f.ms, 0) / Math.max(1, of.length);
      return [kind, { fits: of.length, meanMs: Math.round(mean) }];
    }),
  );
  const bagMs = kinds.bag?.meanMs ?? 0;
  const clock = judge(run, (p) => p.said);
  const atMost = judge(run, (p) => p.atMost);
  const before = judge(run, (p) => p.before);
  results.push({
    task: task.name,
    fitPhaseMs: run.ms,
    threads: run.threads,
    kinds,
    clock,
    atMost,
    before,
  });
  console.log(
    `\n${task.name}: fit phase ${(run.ms / 1000).toFixed(0)} s on ${run.threads} threads`,
  );
  for (const [kind, k] of Object.entries(kinds)) {
    if (k.fits === 0) continue;
    const ratio = bagMs > 0 ? ` (${(k.meanMs / bagMs).toFixed(1)}× a bag fit)` : '';
    console.log(`  ${kind}: ${k.fits} fits, ${(k.meanMs / 1000).toFixed(2)} s each${ratio}`);
  }
  for (const [name, r] of [
    ['by kind (FitClock)', clock],
    ['by kind, contingent fits counted', atMost],
    ['mean fit × fits left', before],
  ] as const) {
    const at = r.at.map((a) => `${a.share * 100}%: said ${a.said}, took ${a.left}`).join('; ');
    console.log(`  ${name}: mean |log ratio| ${r.meanLogRatio}; ${at}`);
  }
}
writeResults(values.label as string, { date: new Date().toISOString(), results });
