/**
 * Pieces shared by the word-level design trials (dev only: pointer-trial.ts, clause-trial.ts):
 * how a text is cut into words, and a softmax regression's loss and gradient in its logits.
 */

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
