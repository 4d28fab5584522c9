/**
 * The baselines a careful engineer tries first, for the training benchmarks (dev only):
 * multinomial naive Bayes on word counts (the product's own, src/build/train/baseline.ts) and
 * multinomial logistic regression on word and word-pair counts, its L2 strength chosen from
 * C ∈ {0.1, 1, 10} (scikit-learn's convention: C · Σ loss + ½ |w|²) by 5-fold cross-validation
 * on the same training part, then refitted on all of it.
 */
import { minimize } from '../../src/build/train/lbfgs.js';
import { words } from '../../src/build/train/baseline.js';

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
export function wordPairFeatures(text: string): Map<string, number> {
  const w = words(text);
  const out = new Map<string, number>();
  const add = (f: string): void => void out.set(f, (out.get(f) ?? 0) + 1);
  w.forEach((x, i) => {
    add(`w:${x}`);
    if (i > 0) add(`p:${w[i - 1] as string} ${x}`);
  });
  return out;
}

export interface LogisticModel {
  labels: string[];
  /** Probabilities for a text, in `labels` order. */
  probabilities(text: string): Float64Array;
}

type Featurize = (text: string) => Map<string, number>;

function fitLogistic(
  examples: readonly TextExample[],
  c: number,
  featurize: Featurize,
): LogisticModel {
  const labels = [...new Set(examples.map((e) => e.label))].sort();
  const features = new Map<string, number>();
  const rows = examples.map((e) => {
    const f = featurize(e.text);
    return [...f].map(([k, v]) => {
      let id = features.get(k);
      if (id === undefined) features.set(k, (id = features.size));
      return [id, v] as const;
    });
  });
  const C = labels.length;
  const F = features.size;
  const y = examples.map((e) => labels.indexOf(e.label));
  const size = (F + 1) * C; // weights, then the intercepts (not penalised)
  const objective = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    const z = new Float64Array(C);
    rows.forEach((row, i) => {
      for (let k = 0; k < C; k++) z[k] = x[F * C + k] as number;
      for (const [f, v] of row)
        for (let k = 0; k < C; k++) z[k] = (z[k] as number) + v * (x[f * C + k] as number);
      const max = Math.max(...z);
      let sum = 0;
      for (let k = 0; k < C; k++) sum += Math.exp((z[k] as number) - max);
      loss += Math.log(sum) + max - (z[y[i] as number] as number);
      for (let k = 0; k < C; k++) {
        const g = (c * (Math.exp((z[k] as number) - max) / sum - (k === y[i] ? 1 : 0))) as number;
        grad[F * C + k] = (grad[F * C + k] as number) + g;
        for (const [f, v] of row) grad[f * C + k] = (grad[f * C + k] as number) + g * v;
      }
    });
    let penalty = 0;
    for (let i = 0; i < F * C; i++) {
      penalty += (x[i] as number) ** 2;
      grad[i] = (grad[i] as number) + (x[i] as number);
    }
    return c * loss + penalty / 2;
  };
  const fitted = minimize(objective, new Float64Array(size), {
    maxIterations: 500,
    relativeTolerance: 1e-9,
  }).x;
  return {
    labels,
    probabilities(text: string) {
      const z = new Float64Array(C);
      for (let k = 0; k < C; k++) z[k] = fitted[F * C + k] as number;
      for (const [k, v] of featurize(text)) {
        const f = features.get(k);
        if (f === undefined) continue;
        for (let j = 0; j < C; j++) z[j] = (z[j] as number) + v * (fitted[f * C + j] as number);
      }
      const max = Math.max(...z);
      const e = z.map((v) => Math.exp(v - max));
      const s = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / s);
    },
  };
}

/**
 * C chosen by 5-fold cross-validated log loss, then the model fitted on everything; on word and
 * word-pair counts unless told otherwise.
 */
export function logisticBaseline(
  examples: readonly TextExample[],
  featurize: Featurize = wordPairFeatures,
): LogisticModel & { c: number } {
  const folds = examples.map((_, i) => i % 5);
  let best = { c: 1, loss: Infinity };
  for (const c of [0.1, 1, 10]) {
    let loss = 0;
    for (let f = 0; f < 5; f++) {
      const train = examples.filter((_, i) => folds[i] !== f);
      const model = fitLogistic(train, c, featurize);
      examples.forEach((e, i) => {
        if (folds[i] !== f) return;
        const p = model.probabilities(e.text);
        const k = model.labels.indexOf(e.label);
        loss -= Math.log(Math.max(k < 0 ? 1e-12 : (p[k] as number), 1e-12));
      });
    }
    if (loss < best.loss) best = { c, loss };
  }
  return { ...fitLogistic(examples, best.c, featurize), c: best.c };
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
