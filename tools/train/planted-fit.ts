/**
 * A planted two-option task (planted.ts) prepared for the trainer, and how a fit does on it (dev
 * only; the trainer's tests and tools/bench/order-starts.ts share it).
 */
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { checkExamples, encodeExamples, prepareTokenizer } from '../../src/build/train/data.js';
import type { ModelExample } from '../../src/build/train/model.js';
import { modelLogits } from '../../src/build/train/readout.js';
import { validateRequest } from '../../src/protocol/validate.js';

export const parseExamples = (text: string) =>
  parseLabelledExamples(text, { validateRequest: (b) => validateRequest(b) });

/**
 * A planted task's training lines and fresh draws, tokenized as a small `train` run does (a
 * 600-token vocabulary, `keepWhole` kept whole) and encoded for the trainer.
 */
export function plantedData(
  trainText: string,
  freshText: string,
  keepWhole: readonly string[] = [],
) {
  const train = parseExamples(trainText);
  const questions = checkExamples(train);
  const data = prepareTokenizer(train, 600, keepWhole);
  const trained = new Set(questions.map((q) => q.id));
  const encoded = encodeExamples(train, data, 4096, trained);
  const freshEncoded = encodeExamples(parseExamples(freshText), data, 4096, trained);
  return { train, questions, data, encoded, freshEncoded, groups: [{ examples: train, encoded }] };
}

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
