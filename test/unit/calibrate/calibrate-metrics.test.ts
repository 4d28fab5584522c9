/** ECE, reliability bins, conformal thresholds and prediction sets on hand-computed cases. */
import { describe, expect, it } from 'vitest';
import {
  binIndex,
  conformalRank,
  conformalThreshold,
  evaluate,
  expectedCalibrationError,
  lacScore,
  logSumExp,
  minimumForCoverage,
  predictionSet,
  reliabilityBins,
  scaledSoftmax,
} from '../../../src/calibrate/index.js';

describe('ECE with 15 equal-width bins', () => {
  it('matches a value computed by hand', () => {
    // Bin k holds (k/15, (k+1)/15]. By hand:
    //   0.95 ×4, 3 right  → bin 14 (0.933.., 1]:    acc 0.75, conf 0.95, gap 0.20, weight 0.4
    //   0.55, 0.57, both right → bin 8 (0.533.., 0.6]: acc 1, conf 0.56, gap 0.44, weight 0.2
    //   0.30 ×4, none right → bin 4 (0.266.., 0.333..]: acc 0, conf 0.30, gap 0.30, weight 0.4
    //   ECE = 0.4·0.20 + 0.2·0.44 + 0.4·0.30 = 0.08 + 0.088 + 0.12 = 0.288
    const confidences = [0.95, 0.95, 0.95, 0.95, 0.55, 0.57, 0.3, 0.3, 0.3, 0.3];
    const correct = [true, true, true, false, true, true, false, false, false, false];
    expect(expectedCalibrationError(confidences, correct)).toBeCloseTo(0.288, 12);
    const bins = reliabilityBins(confidences, correct);
    expect(bins).toHaveLength(15);
    expect(bins.map((b) => b.count)).toEqual([0, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 4]);
    expect(bins[8]!.meanConfidence).toBeCloseTo(0.56, 12);
    expect(bins[8]!.accuracy).toBe(1);
    expect(bins[14]!.accuracy).toBe(0.75);
    expect(bins[4]!.lo).toBeCloseTo(4 / 15, 15);
    expect(bins[4]!.hi).toBeCloseTo(5 / 15, 15);
  });

  it('is 0 when each bin is right as often as it is confident', () => {
    // 0.75 ×4 with 3 right (bin 11) and 0.5 ×2 with 1 right (0.5·15 = 7.5: bin 7): in both
    // bins accuracy equals confidence.
    expect(
      expectedCalibrationError(
        [0.75, 0.75, 0.75, 0.75, 0.5, 0.5],
        [true, true, true, false, true, false],
      ),
    ).toBeCloseTo(0, 15);
  });

  it('averages within a bin before taking the gap (not per record)', () => {
    // 0.88 right and 0.92 wrong share bin 13: acc 0.5, conf 0.9 → ECE 0.4 (per record: 0.5).
    expect(expectedCalibrationError([0.88, 0.92], [true, false])).toBeCloseTo(0.4, 12);
  });

  it('puts 0 in the first bin and 1 in the last', () => {
    expect(binIndex(0)).toBe(0);
    expect(binIndex(1)).toBe(14);
    expect(binIndex(0.05)).toBe(0);
    expect(binIndex(0.07)).toBe(1);
  });
});

describe('softmax and evaluation', () => {
  it('log-sum-exp stays finite for large logits', () => {
    expect(logSumExp([1000, 1000])).toBeCloseTo(1000 + Math.log(2), 10);
    expect(scaledSoftmax([1000, 1000, -1000])).toEqual([0.5, 0.5, 0]);
    expect(scaledSoftmax([2, 0], 2)[0]).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
  });

  it('evaluate gives the hand-computed figures', () => {
    // Probabilities [0.7, 0.2, 0.1] from log-logits; threshold 0.85 keeps p ≥ 0.15: {0, 1}.
    const logits = [Math.log(0.7), Math.log(0.2), Math.log(0.1)];
    const e = evaluate(
      [
        { logits, label: 0 }, // right, covered
        { logits, label: 1 }, // wrong, covered
        { logits, label: 2 }, // wrong, not covered
      ],
      1,
      0.85,
    );
    expect(e.n).toBe(3);
    expect(e.accuracy).toBeCloseTo(1 / 3, 15);
    expect(e.coverage).toBeCloseTo(2 / 3, 15);
    expect(e.meanSetSize).toBe(2);
    expect(e.nll).toBeCloseTo(-(Math.log(0.7) + Math.log(0.2) + Math.log(0.1)) / 3, 12);
    // All three at confidence 0.7 (bin 10), one right: ECE = |1/3 − 0.7|.
    expect(e.ece).toBeCloseTo(0.7 - 1 / 3, 12);
  });
});

describe('split-conformal threshold and sets', () => {
  it('takes the ⌈(n+1)(1−α)⌉-th smallest score', () => {
    const scores = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6]; // n = 9, sorted 0.1 .. 0.9
    expect(conformalRank(9, 0.9)).toBe(9); // ⌈10 · 0.9⌉
    expect(conformalThreshold(scores, 0.9)).toBe(0.9);
    expect(conformalRank(9, 0.8)).toBe(8);
    expect(conformalThreshold(scores, 0.8)).toBe(0.8);
    expect(conformalRank(9, 0.75)).toBe(8); // ⌈7.5⌉
    expect(conformalThreshold(scores, 0.5)).toBe(0.5); // ⌈5⌉ = 5th
  });

  it('includes everything when the rank exceeds n', () => {
    const eight = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
    expect(conformalThreshold(eight, 0.9)).toBe(1); // ⌈9 · 0.9⌉ = 9 > 8
    expect(predictionSet([0.97, 0.02, 0.01], 1)).toEqual([0, 1, 2]);
  });

  it('needs n ≥ c/(1−c) scores for a real threshold', () => {
    // ⌈(n+1)c⌉ ≤ n: c = 0.8 → n = 4 (⌈4⌉ = 4; n = 3: ⌈3.2⌉ = 4 > 3); 0.9 → 9; 0.95 → 19.
    expect(minimumForCoverage(0.5)).toBe(1);
    expect(minimumForCoverage(0.8)).toBe(4);
    expect(minimumForCoverage(0.9)).toBe(9);
    expect(minimumForCoverage(0.95)).toBe(19);
    expect(minimumForCoverage(0.99)).toBe(99);
    for (const c of [0.8, 0.9, 0.95, 0.99]) {
      const n = minimumForCoverage(c);
      expect(conformalThreshold(new Array(n).fill(0.5), c)).toBe(0.5);
      expect(conformalThreshold(new Array(n - 1).fill(0.5), c)).toBe(1);
    }
  });

  it('builds sets from 1 − p ≤ threshold and never returns an empty one', () => {
    const p = [0.5, 0.3, 0.2];
    expect(lacScore(p, 1)).toBeCloseTo(0.7, 15);
    expect(predictionSet(p, 0.75)).toEqual([0, 1]); // scores 0.5, 0.7, 0.8
    expect(predictionSet(p, 0.5)).toEqual([0]);
    expect(predictionSet(p, 0.1)).toEqual([0]); // nothing qualifies: the top option
    expect(predictionSet([0.2, 0.5, 0.3], 0.1)).toEqual([1]);
    // A record whose score equals the threshold is covered (the guarantee counts ties in).
    expect(predictionSet(p, lacScore(p, 2))).toEqual([0, 1, 2]);
  });

  it('refuses a coverage outside (0, 1)', () => {
    for (const c of [0, 1, -0.1, 1.5, NaN]) {
      expect(() => conformalThreshold([0.1], c)).toThrow(/coverage/);
    }
  });
});
