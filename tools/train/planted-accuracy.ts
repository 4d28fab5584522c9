/** How a fit does on a planted two-option task (dev only; tests and benchmarks share it). */
import type { ModelExample } from '../../src/build/train/model.js';
import { modelLogits } from '../../src/build/train/readout.js';

/** The share of two-option examples whose label gets the larger logit. */
export function binaryAccuracy(
  params: Parameters<typeof modelLogits>[0],
  examples: readonly ModelExample[],
): number {
  let right = 0;
  for (const e of examples) {
    const [logits] = modelLogits(params, e) as [Float64Array];
    const label = (e.questions[0] as { label: number }).label;
    if ((logits[label] as number) > (logits[1 - label] as number)) right++;
  }
  return right / examples.length;
}
