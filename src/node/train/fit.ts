/**
 * Fits the matcher: Adam over shuffled minibatches, token dropout, and selection on the held-out
 * examples after each epoch (the best epoch's parameters are kept). Deterministic for a seed:
 * one stream of random numbers, in one order, on one thread.
 */
import { Rng } from '../rng.js';
import {
  accumulate,
  Adam,
  cloneParams,
  matcherLogits,
  zeroGradients,
  type MatcherExample,
  type MatcherParams,
} from './matcher.js';

export interface FitSettings {
  epochs: number;
  /** Examples per step; 'auto': an epoch of at least 16 steps, at most 128 examples a step. */
  batch: number | 'auto';
  lr: number;
  weightDecay: number;
  /** Chance of leaving a bag token out while fitting. */
  dropout: number;
  seed: number;
}

export const DEFAULT_FIT: Readonly<FitSettings> = Object.freeze({
  epochs: 20,
  batch: 'auto',
  lr: 0.005,
  weightDecay: 1e-4,
  dropout: 0.3,
  seed: 1,
});

export interface EpochReport {
  epoch: number;
  trainLoss: number;
  heldOutLoss: number;
  heldOutAccuracy: number;
}

/** Mean cross-entropy and accuracy of the labelled questions. */
export function evaluate(params: MatcherParams, examples: readonly MatcherExample[]) {
  let loss = 0;
  let right = 0;
  let n = 0;
  for (const e of examples) {
    const logits = matcherLogits(params, e);
    e.questions.forEach((q, k) => {
      if (q.label < 0) return;
      const l = logits[k] as Float64Array;
      let max = -Infinity;
      let best = 0;
      l.forEach((v, i) => {
        if (v > max) {
          max = v;
          best = i;
        }
      });
      let sum = 0;
      for (const v of l) sum += Math.exp(v - max);
      loss += Math.log(sum) - ((l[q.label] as number) - max);
      if (best === q.label) right++;
      n++;
    });
  }
  return { loss: n === 0 ? 0 : loss / n, accuracy: n === 0 ? 0 : right / n };
}

export function fitMatcher(
  initial: MatcherParams,
  train: readonly MatcherExample[],
  heldOut: readonly MatcherExample[],
  settings: FitSettings,
  onEpoch?: (report: EpochReport) => void,
): { params: MatcherParams; best: EpochReport; history: EpochReport[] } {
  const params = cloneParams(initial);
  const rng = new Rng(settings.seed ^ 0x7f4a7c15);
  const adam = new Adam(params, settings.lr, settings.weightDecay);
  const drop = (bag: Int32Array): Int32Array => {
    if (settings.dropout <= 0) return bag;
    const kept = bag.filter(
      (t, i) => i === 0 || rng.uniform() >= settings.dropout || initial.frozen.has(t),
    );
    // The first token is the STATE marker (no content): keep the whole bag if nothing else is left.
    return kept.length > 1 ? kept : bag;
  };
  const order = train.map((_, i) => i);
  const batchSize =
    settings.batch === 'auto'
      ? Math.max(8, Math.min(128, Math.ceil(train.length / 16)))
      : settings.batch;
  const history: EpochReport[] = [];
  let best: EpochReport | null = null;
  let bestParams = cloneParams(params);
  for (let epoch = 1; epoch <= settings.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    let loss = 0;
    let questions = 0;
    for (let start = 0; start < order.length; start += batchSize) {
      const batch = order.slice(start, start + batchSize).map((i) => train[i] as MatcherExample);
      const grads = zeroGradients(params);
      const r = accumulate(params, batch, grads, drop);
      loss += r.loss;
      questions += r.questions;
      adam.apply(grads);
    }
    const held = evaluate(params, heldOut);
    const report = {
      epoch,
      trainLoss: questions === 0 ? 0 : loss / questions,
      heldOutLoss: held.loss,
      heldOutAccuracy: held.accuracy,
    };
    history.push(report);
    onEpoch?.(report);
    if (
      best === null ||
      report.heldOutAccuracy > best.heldOutAccuracy ||
      (report.heldOutAccuracy === best.heldOutAccuracy && report.heldOutLoss < best.heldOutLoss)
    ) {
      best = report;
      bestParams = cloneParams(params);
    }
  }
  if (best === null) throw new Error('no epoch ran');
  return { params: bestParams, best, history };
}
