/**
 * Temperature-scaled softmax in float64. The engine's answers use float32 (to match the Python
 * host bit for bit); calibration needs no such match, and float64 keeps the likelihood and its
 * derivatives smooth enough for the temperature search.
 */

/** log Σ exp(x_i / T), stable: the largest term is factored out. */
export function logSumExp(logits: ArrayLike<number>, temperature = 1): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = (logits[i] as number) / temperature;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let i = 0; i < logits.length; i++)
    sum += Math.exp((logits[i] as number) / temperature - max);
  return max + Math.log(sum);
}

/**
 * softmax(logits / T), float64, in the logits' order. Exponentials relative to the largest
 * scaled logit, divided by their sum: subtracting a large log-sum-exp instead would cost the
 * probabilities digits (exp(1000 − (1000 + log 2)) is 0.5 only to 13 places).
 */
export function scaledSoftmax(logits: ArrayLike<number>, temperature = 1): number[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = (logits[i] as number) / temperature;
    if (v > max) max = v;
  }
  const out = new Array<number>(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const e = Math.exp((logits[i] as number) / temperature - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** Index of the largest value; the first one on a tie, as the engine's answers pick. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    if ((values[i] as number) > (values[best] as number)) best = i;
  }
  return best;
}
