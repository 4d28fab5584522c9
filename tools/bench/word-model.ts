/**
 * Pieces shared by the word-level design trials (dev only: pointer-trial.ts, clause-trial.ts):
 * how a text is cut into words, a softmax regression's loss and gradient in its logits, and the
 * harness around a fit (labels and vocabulary, folds, the gradient check, the misses).
 */

/** Words that name no thing: never what a later word points at. */
export const FUNCTION_WORDS = new Set(
  (
    'the a an is are was were be been being am it its this that these those to of in on for at ' +
    "by with from my our your their his her i we me us you they he she and or so just it’s it's"
  ).split(' '),
);

/** Words, punctuation and spaced dashes, lower-cased. */
export function tokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/’/g, "'")
      .match(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*|[,.;:!?()\u2013\u2014]|\s-+(?=\s)/gu) ?? []
  );
}

/** The cross-entropy's gradient in the logits z for `label`, divided by `count` (the mean's). */
export function softmaxStep(z: Float64Array, label: number, count: number): Float64Array {
  const max = Math.max(...z);
  let sum = 0;
  for (const v of z) sum += Math.exp(v - max);
  return z.map((v, c) => (Math.exp(v - max) / sum - (c === label ? 1 : 0)) / count);
}

/** The cross-entropy of the logits for `label`. */
export function crossEntropy(logits: Float64Array, label: number): number {
  const max = Math.max(...logits);
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  return Math.log(sum) + max - (logits[label] as number);
}

/** The logits' softmax, by label. */
export function probabilities(labels: readonly string[], z: Float64Array): Map<string, number> {
  const max = Math.max(...z);
  const e = Array.from(z, (v) => Math.exp(v - max));
  const s = e.reduce((a, b) => a + b, 0);
  return new Map(labels.map((l, c) => [l, (e[c] as number) / s]));
}

/** A task's labels (sorted), each training line's label index, the words' ids and the folds. */
export function wordSetup(
  train: ReadonlyArray<{ text: string; label: string }>,
  words: (text: string) => readonly string[],
  folds: number,
) {
  const labels = [...new Set(train.map((l) => l.label))].sort();
  const y = Int32Array.from(train, (l) => labels.indexOf(l.label));
  const vocab = new Map<string, number>();
  for (const line of train)
    for (const w of words(line.text)) if (!vocab.has(w)) vocab.set(w, vocab.size);
  const fold = train.map((_, i) => i % folds);
  return { labels, C: labels.length, y, vocab, V: vocab.size, fold };
}

/** The option with the highest probability. */
export function top(p: Map<string, number>): string {
  return [...p].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

/** Every test line a model answers wrong, for reading what it misses. */
export function misses(
  scored: ReadonlyArray<{
    p: Map<string, number>;
    label: string;
    line: { kind?: string; text: string };
  }>,
) {
  return scored
    .filter((x) => top(x.p) !== x.label)
    .map((x) => ({
      kind: x.line.kind ?? 'plain',
      label: x.label,
      answer: top(x.p),
      text: x.line.text,
    }));
}

/**
 * An objective's gradient at x against central differences (step 1e-6): the worst relative
 * error over the coordinates.
 */
export function gradientError(
  evaluate: (x: Float64Array, grad: Float64Array) => number,
  x: Float64Array,
): number {
  const grad = new Float64Array(x.length);
  evaluate(x, grad);
  const scratch = new Float64Array(x.length);
  let worst = 0;
  for (let k = 0; k < x.length; k++) {
    const h = 1e-6;
    const up = x.slice();
    const down = x.slice();
    up[k] = (up[k] as number) + h;
    down[k] = (down[k] as number) - h;
    const numeric = (evaluate(up, scratch) - evaluate(down, scratch)) / (2 * h);
    worst = Math.max(
      worst,
      Math.abs(numeric - (grad[k] as number)) / Math.max(1e-8, Math.abs(numeric)),
    );
  }
  return worst;
}

/**
 * The mean out-of-fold cross-entropy: for each fold, `fit` on the other rows, each row of the
 * fold judged by the model fitted without it.
 */
export function outOfFold<Row>(
  data: readonly Row[],
  y: Int32Array,
  fold: readonly number[],
  folds: number,
  fit: (rows: Row[], y: Int32Array) => (row: Row) => Float64Array,
): number {
  let loss = 0;
  for (let f = 0; f < folds; f++) {
    const model = fit(
      data.filter((_, i) => fold[i] !== f),
      y.filter((_, i) => fold[i] !== f),
    );
    data.forEach((row, i) => {
      if (fold[i] === f) loss += crossEntropy(model(row), y[i] as number);
    });
  }
  return loss / data.length;
}

/**
 * Adds the L2 penalty (rate/2)·x_k² over [from, to) to `loss` and rate·x_k to the gradient, one
 * coordinate after another (the order every trial's fits were measured with), and returns the loss.
 */
export function addPenalty(
  loss: number,
  x: Float64Array,
  grad: Float64Array,
  from: number,
  to: number,
  rate: number,
): number {
  let sum = loss;
  for (let k = from; k < to; k++) {
    sum += (rate / 2) * (x[k] as number) ** 2;
    grad[k] = (grad[k] as number) + rate * (x[k] as number);
  }
  return sum;
}
