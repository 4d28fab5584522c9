/**
 * The baselines a careful engineer tries first, for the training benchmarks (dev only):
 * multinomial naive Bayes on word counts and multinomial logistic regression on word and
 * word-pair counts, both the product's own (src/build/train/baseline.ts and logistic.ts). Here the
 * regression's strength is chosen from C ∈ {0.1, 1, 10} by 5-fold cross-validation on the
 * training part alone (its folds every fifth line), then refitted on all of it, to be judged on
 * a test file written apart.
 */
import { exp, log } from '../../src/build/train/portable-math.js';
import {
  fitLogistic,
  LOGISTIC_CS,
  wordPairCounts,
  type Featurize,
} from '../../src/build/train/logistic.js';
import { words } from '../../src/build/train/words.js';

export interface TextExample {
  text: string;
  label: string;
}

/** Word counts alone (to see what the word pairs add). */
export function wordFeatures(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of words(text)) out.set(`w:${x}`, (out.get(`w:${x}`) ?? 0) + 1);
  return out;
}

/** Word and adjacent word-pair counts. */
export const wordPairFeatures: Featurize = wordPairCounts;

export interface LogisticModel {
  labels: readonly string[];
  /** Probabilities for a text, in `labels` order. */
  probabilities(text: string): Float64Array;
}

/**
 * C chosen by 5-fold cross-validated log loss, then the model fitted on everything; on word and
 * word-pair counts unless told otherwise.
 */
export function logisticBaseline(
  examples: readonly TextExample[],
  featurize: Featurize = wordPairCounts,
): LogisticModel & { c: number } {
  const folds = examples.map((_, i) => i % 5);
  let best = { c: 1, loss: Infinity };
  for (const c of LOGISTIC_CS) {
    let loss = 0;
    for (let f = 0; f < 5; f++) {
      const model = fitLogistic(
        examples.filter((_, i) => folds[i] !== f),
        c,
        featurize,
      );
      examples.forEach((e, i) => {
        if (folds[i] !== f) return;
        const k = model.labels.indexOf(e.label);
        loss -= Math.max(
          k < 0 ? -Infinity : (model.logProbabilities(e.text)[k] as number),
          log(1e-12),
        );
      });
    }
    if (loss < best.loss) best = { c, loss };
  }
  const model = fitLogistic(examples, best.c, featurize);
  return {
    labels: model.labels,
    probabilities: (text) => model.logProbabilities(text).map(exp),
    c: best.c,
  };
}

/** Area under the ROC curve: P(score of a positive > score of a negative), ties half. */
export function auroc(positive: readonly number[], negative: readonly number[]): number {
  let s = 0;
  const neg = [...negative].sort((a, b) => a - b);
  for (const p of positive) {
    let lo = 0;
    let hi = neg.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((neg[mid] as number) < p) lo = mid + 1;
      else hi = mid;
    }
    let eq = lo;
    while (eq < neg.length && neg[eq] === p) eq++;
    s += lo + (eq - lo) / 2;
  }
  return s / (positive.length * negative.length);
}
