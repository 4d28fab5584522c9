/**
 * What a calibration is judged by, on held-out records: top-1 accuracy, expected calibration
 * error over equal-width confidence bins (Naeini et al., 2015; Guo et al., 2017), mean NLL, and
 * the prediction sets' empirical coverage and mean size.
 */
import { predictionSet } from './conformal.js';
import { inputError } from './errors.js';
import { argmax, logSumExp, scaledSoftmax } from './softmax.js';
import type { LabelledLogits } from './temperature.js';
import type { Evaluation, ReliabilityBin } from './types.js';

/** Bins of the ECE the CLI prints and the file records. */
const ECE_BINS = 15;

/**
 * Bin of a confidence: bin k holds (k/bins, (k+1)/bins]; 0 goes in the first bin. A confidence
 * sitting exactly on an edge may land either side by a rounding of c · bins.
 */
export function binIndex(confidence: number, bins = ECE_BINS): number {
  return Math.min(bins - 1, Math.max(0, Math.ceil(confidence * bins) - 1));
}

/** The reliability diagram: per bin, its count, mean confidence and accuracy. */
export function reliabilityBins(
  confidences: readonly number[],
  correct: readonly boolean[],
  bins = ECE_BINS,
): ReliabilityBin[] {
  if (confidences.length !== correct.length) {
    throw inputError(`${confidences.length} confidences for ${correct.length} outcomes`);
  }
  if (!Number.isInteger(bins) || bins < 1) throw inputError(`bins must be a positive integer`);
  const count = new Array<number>(bins).fill(0);
  const confidenceSum = new Array<number>(bins).fill(0);
  const correctSum = new Array<number>(bins).fill(0);
  confidences.forEach((c, i) => {
    if (!(c >= 0 && c <= 1)) throw inputError(`confidence ${i} (${c}) is not in [0, 1]`);
    const k = binIndex(c, bins);
    count[k] = (count[k] as number) + 1;
    confidenceSum[k] = (confidenceSum[k] as number) + c;
    if (correct[i]) correctSum[k] = (correctSum[k] as number) + 1;
  });
  return count.map((n, k) => ({
    lo: k / bins,
    hi: (k + 1) / bins,
    count: n,
    meanConfidence: n === 0 ? 0 : (confidenceSum[k] as number) / n,
    accuracy: n === 0 ? 0 : (correctSum[k] as number) / n,
  }));
}

/** ECE = Σ_bins (count / N) · |accuracy − mean confidence|, from a reliability diagram. */
function eceFromBins(bins: readonly ReliabilityBin[]): number {
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return 0;
  return bins.reduce(
    (sum, b) => sum + (b.count / total) * Math.abs(b.accuracy - b.meanConfidence),
    0,
  );
}

export function expectedCalibrationError(
  confidences: readonly number[],
  correct: readonly boolean[],
  bins = ECE_BINS,
): number {
  return eceFromBins(reliabilityBins(confidences, correct, bins));
}

/**
 * Every figure for `records` under softmax(logits / temperature) and sets at `threshold`
 * (the same predictionSet the engine uses, so the coverage measured is the coverage served).
 */
export function evaluate(
  records: readonly LabelledLogits[],
  temperature: number,
  threshold: number,
): Evaluation {
  if (records.length === 0) throw inputError('evaluate: no records');
  const confidences: number[] = [];
  const correct: boolean[] = [];
  let nll = 0;
  let covered = 0;
  let setSizes = 0;
  for (const { logits, label } of records) {
    const p = scaledSoftmax(logits, temperature);
    const top = argmax(p);
    confidences.push(p[top] as number);
    correct.push(top === label);
    nll += logSumExp(logits, temperature) - (logits[label] as number) / temperature;
    const set = predictionSet(p, threshold);
    if (set.includes(label)) covered++;
    setSizes += set.length;
  }
  const n = records.length;
  const reliability = reliabilityBins(confidences, correct);
  return {
    n,
    ece: eceFromBins(reliability),
    accuracy: correct.filter(Boolean).length / n,
    nll: nll / n,
    coverage: covered / n,
    meanSetSize: setSizes / n,
    reliability,
  };
}
