/**
 * The pointer (src/build/train/pointer.ts) in the trainer's own model, apart from `clef-web train`'s
 * other choices (dev only): the model `train` keeps on the ops questions (the bag with the scope
 * layer), and the same with the pointer after the scope layer (a word carries, by gates the fit
 * learns, the class content of the last content word before it in its clause).
 * train-construct.test.ts proves the release computes this model (the scope layer, then the
 * pointer, then the pooling layer); here it is judged through the trainer's function
 * (modelLogits), on the test files only.
 *
 *   npx tsx tools/bench/pointer-product.ts [--tasks failing,gate,urgency] [--lambda 10]
 *       [--pair-lambdas 1e-4,1e-5] [--with-pairs] [--label NAME]
 *
 * Per question: the scope reading `train`'s rule keeps (both cross-fitted at --lambda, the λ
 * `train` chose on every ops question), then the pointer on top at each penalty (relative to λ,
 * as the order layer's), each cross-fitted on the trainer's own folds (select.ts crossFit). Prints
 * the out-of-fold cross-entropy and the test figures of each, whether the rule (the lowest
 * out-of-fold cross-entropy) would keep the pointer, the test items whose answer it changes, and
 * the words with the largest net gate (what a word carries of the thing named before it).
 */
import { parseArgs } from 'node:util';
import { fitModel } from '../../src/build/train/learner.js';
import type { LayerChoice } from '../../src/build/train/learner-setup.js';
import type { ModelParams } from '../../src/build/train/model.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { sigmoid } from '../../src/build/train/pairs.js';
import { pointerShape } from '../../src/build/train/pointer.js';
import { SCOPE_READINGS, type ScopeCues } from '../../src/build/train/scope.js';
import { crossFit } from '../../src/build/train/select.js';
import { MAX_ITERATIONS } from '../../src/build/train/layer-settings.js';
import { loadTask, summarise, type Scored, type Task } from './small-tasks.js';
import { prepareTrainerTask } from './trainer-task.js';
import { writeResults } from './results-file.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'failing,gate,urgency' },
    lambda: { type: 'string', default: '10' },
    'pair-lambdas': { type: 'string', default: '1e-4,1e-5' },
    label: { type: 'string', default: 'pointer-product' },
    'with-pairs': { type: 'boolean', default: false },
  },
});
const lambda = Number(values.lambda);
const pairLambdas = (values['pair-lambdas'] as string).split(',').map(Number);
const base = { lambda, normScale: 0.3, bias: 1 };

function judge(task: Task, params: ModelParams, prepared: ReturnType<typeof prepareTrainerTask>) {
  return prepared.encodedTest.map((e, i): Scored => {
    const logits = modelLogits(params, e)[0] as Float64Array;
    const top = Math.max(...logits);
    const exps = [...logits].map((v) => Math.exp(v - top));
    const sum = exps.reduce((a, b) => a + b, 0);
    const line = task.test[i] as Task['test'][number];
    return {
      p: new Map(prepared.options.map((o, k) => [o, (exps[k] as number) / sum])),
      label: line.label,
      line,
    };
  });
}

const answer = (s: Scored) => [...s.p.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];

/** Each single-token word's net gate (head 0's mean gate minus head 1's), at r = 1/2. */
function gates(params: ModelParams, decode: (ids: number[]) => string) {
  const p = params.pairs;
  const emb = params.emb;
  if (p === undefined || emb === undefined) return [];
  const { m, dv } = p.shape;
  const r = 0.5;
  const out: Array<{ word: string; gate: number }> = [];
  for (let t = 0; t < params.shape.vocab; t++) {
    const text = decode([t]);
    if (!/^ [a-z']+$/.test(text)) continue;
    let net = 0;
    for (let h = 0; h < 2; h++)
      for (let c = 1; c < dv; c++) {
        const k = h * dv + c;
        let z = r * (p.zBias[k] as number);
        for (let j = 0; j < m; j++)
          z += (p.z[k * m + j] as number) * r * (emb[t * m + j] as number);
        net += ((h === 0 ? 1 : -1) * z * sigmoid(z)) / (dv - 1);
      }
    out.push({ word: text.trim(), gate: net });
  }
  return out.sort((a, b) => b.gate - a.gate);
}

const round = (v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(3)) : v);
const results = [];
for (const name of (values.tasks as string).split(',')) {
  const task = loadTask(name, values['with-pairs']);
  const prepared = prepareTrainerTask(task);
  const cross = async (layer: LayerChoice, settings = base) =>
    (
      await crossFit(prepared.setup(layer), prepared.encoded, {
        candidates: [settings],
        seed: 1,
        maxIterations: MAX_ITERATIONS,
      })
    ).scores[0] as { logLoss: number; accuracy: number };
  let cues: ScopeCues | null = null;
  let kept = await cross(null);
  for (const reading of SCOPE_READINGS) {
    const score = await cross(reading);
    if (score.logLoss < kept.logLoss) [cues, kept] = [reading, score];
  }
  const fit = async (layer: LayerChoice, settings: typeof base & { pairLambda?: number }) =>
    (
      await fitModel(prepared.setup(layer), prepared.encoded, {
        settings,
        maxIterations: MAX_ITERATIONS,
      })
    ).params;
  const keptParams = await fit(cues, base);
  const keptScored = judge(task, keptParams, prepared);
  const rows: Array<Record<string, unknown>> = [
    { model: cues ?? 'plain', outOfFold: kept.logLoss, ...summarise(task, keptScored) },
  ];
  // The pointer comes after the scope layer (its breaks empty the pointer's memory).
  const pairs = pointerShape(prepared.setup(null).classWidth);
  const layer: LayerChoice = cues === null ? null : { cues, pairs };
  for (const pairLambda of layer === null ? [] : pairLambdas) {
    const settings = { ...base, pairLambda };
    const score = await cross(layer, settings);
    const params = await fit(layer, settings);
    const scored = judge(task, params, prepared);
    const changed = scored
      .map((s, i) => ({ s, was: answer(keptScored[i] as Scored), now: answer(s) }))
      .filter(({ was, now }) => was !== now)
      .map(({ s, was, now }) => ({
        kind: s.line.kind,
        label: s.label,
        was,
        now,
        text: s.line.text,
      }));
    const words = gates(params, (ids) => prepared.data.tokenizer.decode(ids));
    rows.push({
      model: `${cues ?? 'plain'}+pointer`,
      pairLambda,
      outOfFold: score.logLoss,
      keptByRule: score.logLoss < kept.logLoss,
      ...summarise(task, scored),
      gatesHighest: words.slice(0, 8).map((w) => `${w.word} ${w.gate.toFixed(2)}`),
      gatesLowest: words.slice(-8).map((w) => `${w.word} ${w.gate.toFixed(2)}`),
      changed,
    });
  }
  console.log(`\n${task.name} (λ ${lambda}; the kept scope reading: ${cues ?? 'none'})`);
  for (const row of rows) {
    const { changed, gatesHighest, gatesLowest, ...figures } = row;
    console.log(
      JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, round(v)]))),
    );
    if (gatesHighest !== undefined)
      console.log(`  gates, highest: ${(gatesHighest as string[]).join(', ')}`);
    if (gatesLowest !== undefined)
      console.log(`  gates, lowest: ${(gatesLowest as string[]).join(', ')}`);
    for (const c of (changed as Array<Record<string, string>> | undefined) ?? [])
      console.log(
        `  ${c.now === c.label ? 'now right' : c.was === c.label ? 'now wrong' : 'both wrong'} (${c.kind}, ${c.label}: ${c.was} → ${c.now}) ${c.text}`,
      );
  }
  results.push({ task: task.name, lambda, rows });
}
writeResults(values.label as string, { results });
