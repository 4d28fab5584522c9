/**
 * Split conformal prediction with the LAC score (Sadinle, Lei & Wasserman, 2019): a record's
 * score is 1 − p(right option) under the calibrated probabilities. With n calibration scores and
 * coverage 1 − α, the threshold is the ⌈(n+1)(1−α)⌉-th smallest score; a fresh exchangeable
 * record's right option then lands in {options : 1 − p ≤ threshold} with probability ≥ 1 − α.
 */
import { inputError } from './errors.js';
import { argmax } from './softmax.js';

/** Products such as 20 · 0.95 land an ulp off the integer they mean; this absorbs that. */
const RANK_SLACK = 1e-9;

function checkCoverage(coverage: number): void {
  if (!(coverage > 0 && coverage < 1)) {
    throw inputError(`coverage must be a number strictly between 0 and 1 (got ${coverage})`);
  }
}

/** ⌈(n+1)·coverage⌉: the 1-based rank of the calibration score that is the threshold. */
export function conformalRank(n: number, coverage: number): number {
  checkCoverage(coverage);
  return Math.max(1, Math.ceil((n + 1) * coverage - RANK_SLACK));
}

/**
 * The fewest calibration scores for which the threshold is a real score (rank ≤ n), i.e.
 * n ≥ coverage / (1 − coverage): 9 at 0.9, 19 at 0.95, 99 at 0.99. Below it the only valid set
 * is "every option", which says nothing.
 */
export function minimumForCoverage(coverage: number): number {
  checkCoverage(coverage);
  let n = Math.max(1, Math.floor(coverage / (1 - coverage)) - 1);
  while (conformalRank(n, coverage) > n) n++;
  return n;
}

/** The LAC score of a record: 1 − p(label). */
export function lacScore(probabilities: ArrayLike<number>, label: number): number {
  return 1 - (probabilities[label] as number);
}

/**
 * The threshold for `coverage` from calibration scores; 1 (every option: scores never exceed 1)
 * when there are too few scores for the rank to exist.
 */
export function conformalThreshold(scores: readonly number[], coverage: number): number {
  const rank = conformalRank(scores.length, coverage);
  if (rank > scores.length) return 1;
  for (const s of scores) {
    if (!Number.isFinite(s)) throw inputError('conformalThreshold: a score is not finite');
  }
  const sorted = [...scores].sort((a, b) => a - b);
  return sorted[rank - 1] as number;
}

/**
 * Indices (ascending, prompt order) of the options whose score 1 − p is ≤ threshold. Compared
 * in score space, exactly as the calibration scores were computed, so a record whose score equals
 * the threshold is covered. Never empty: if nothing qualifies, the top option is the set.
 */
export function predictionSet(probabilities: ArrayLike<number>, threshold: number): number[] {
  const set: number[] = [];
  for (let i = 0; i < probabilities.length; i++) {
    if (1 - (probabilities[i] as number) <= threshold) set.push(i);
  }
  if (set.length === 0) set.push(argmax(probabilities));
  return set;
}
