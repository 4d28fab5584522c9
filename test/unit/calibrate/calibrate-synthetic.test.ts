/**
 * The calibration core on synthetic models whose miscalibration is known: logits z are drawn at
 * random and the right answer is drawn from softmax(z / T0), so the raw softmax(z) is
 * overconfident for T0 > 1, underconfident for T0 < 1, and T0 is the answer the fit must find.
 * Nothing here is a figure copied from a run: every bound is derived (see each test's comment).
 */
import { describe, expect, it } from 'vitest';
import {
  applyCalibration,
  evaluate,
  fitCalibration,
  fitTemperature,
  meanNll,
  uniforms,
  type CalibrationRecord,
} from '../../../src/calibrate/index.js';
import { referenceProbabilities } from '../../support/calibration-reference.js';
import type { QuestionType } from '../../../src/protocol/types.js';

/** A seeded standard normal (Box–Muller). */
function normals(seed: number): () => number {
  const uniform = uniforms(seed);
  return () => {
    const u = 1 - uniform(); // (0, 1]: log(u) finite
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

const OPTIONS: Record<QuestionType, number> = { noul: 2, choice: 5, score: 4 };

/** n records of one type: z ~ N(0, sigma²) per option, label ~ softmax(z / t0). */
function synthetic(
  type: QuestionType,
  n: number,
  t0: number,
  seed: number,
  sigma = 2,
): CalibrationRecord[] {
  const normal = normals(seed);
  const uniform = uniforms(seed ^ 0x5bd1e995);
  const k = OPTIONS[type];
  const optionIds = Array.from({ length: k }, (_, i) => String(i));
  return Array.from({ length: n }, (_, r) => {
    const logits = Array.from({ length: k }, () => sigma * normal());
    const p = referenceProbabilities(logits, t0);
    let u = uniform();
    let label = 0;
    while (label < k - 1 && u >= (p[label] as number)) u -= p[label++] as number;
    return { questionId: `q${r % 3}`, type, optionIds, logits, label };
  });
}

/** Mean over records of Var_{softmax(z/t)}(z): the Fisher information of β = 1/T per record. */
function fisherPerRecord(records: CalibrationRecord[], t: number): number {
  let total = 0;
  for (const { logits } of records) {
    const p = referenceProbabilities(logits, t);
    const mean = logits.reduce((s, z, i) => s + (p[i] as number) * z, 0);
    total += logits.reduce((s, z, i) => s + (p[i] as number) * (z - mean) ** 2, 0);
  }
  return total / records.length;
}

describe('temperature fit on a synthetic model of known temperature', () => {
  // Tolerance: the MLE of β = 1/T has standard error 1/sqrt(N·I(β0)), I the per-record Fisher
  // information (computed on the sample); by the delta method se(T) = T0²·se(β). We allow 4 se
  // (a two-sided miss has probability ~6e-5 per case), which for these cases is 3–10% of T0.
  const cases = [
    { t0: 2.5, type: 'choice' as const },
    { t0: 0.5, type: 'choice' as const },
    { t0: 2.5, type: 'noul' as const },
    { t0: 0.5, type: 'score' as const },
  ];
  for (const { t0, type } of cases) {
    for (const seed of [11, 12, 13]) {
      it(`recovers T0 = ${t0} on ${type} (seed ${seed})`, () => {
        const n = 4000;
        const records = synthetic(type, n, t0, seed);
        const fit = fitTemperature(records);
        const seT = (t0 * t0) / Math.sqrt(n * fisherPerRecord(records, t0));
        expect(Math.abs(fit.temperature - t0)).toBeLessThan(4 * seT);
        expect(fit.atBound).toBe(false);
        // The MLE's likelihood is at least the truth's (fails if the search stops short).
        expect(fit.nll).toBeLessThanOrEqual(meanNll(records, t0) + 1e-12);
      });
    }
  }

  it('finds the minimum a fine grid finds, to 1e-9 in NLL', () => {
    const records = synthetic('choice', 1500, 1.7, 5);
    const fit = fitTemperature(records);
    let best = Infinity;
    for (let logT = Math.log(0.05); logT <= Math.log(20); logT += 0.002) {
      best = Math.min(best, meanNll(records, Math.exp(logT)));
    }
    expect(fit.nll).toBeLessThanOrEqual(best + 1e-9);
  });

  it('scales with the logits: logits × 3 give a temperature × 3', () => {
    const records = synthetic('choice', 1500, 1.2, 6);
    const scaled = records.map((r) => ({ ...r, logits: r.logits.map((z) => 3 * z) }));
    const t1 = fitTemperature(records).temperature;
    const t3 = fitTemperature(scaled).temperature;
    expect(t3 / t1).toBeCloseTo(3, 6);
  });
});

describe('ECE before and after calibration', () => {
  // Bound: for a perfectly calibrated model, E[ECE] ≤ Σ_b (n_b/N)·sqrt(c_b(1−c_b)/n_b)
  // ≤ sqrt(B/N)/2 (Cauchy–Schwarz, c(1−c) ≤ 1/4): 0.027 for B = 15 bins and N = 5000 fresh
  // records. We allow 0.04 (the noise bound plus room for T̂ ≠ T0), and require the raw model
  // to be visibly miscalibrated (> 0.1) and calibration to cut its ECE at least threefold.
  for (const t0 of [2.5, 0.5]) {
    it(`calibration removes a known miscalibration (T0 = ${t0})`, () => {
      const train = synthetic('choice', 4000, t0, 21);
      const fresh = synthetic('choice', 5000, t0, 22);
      const { calibration, reports } = fitCalibration(train, { coverage: 0.9, seed: 3 });
      const entry = calibration.types.choice!;
      const before = evaluate(fresh, 1, 1);
      const after = evaluate(fresh, entry.temperature, entry.threshold);
      expect(before.ece).toBeGreaterThan(0.1);
      expect(after.ece).toBeLessThan(0.04);
      expect(after.ece).toBeLessThan(before.ece / 3);
      // The held-out figures the file records tell the same story (N = 1000: bound 0.061).
      const report = reports[0]!;
      expect(report.after.ece).toBeLessThan(0.07);
      expect(report.after.ece).toBeLessThan(report.before.ece);
      // Temperature scaling never changes the top option: accuracy is the same before and after.
      expect(report.after.accuracy).toBe(report.before.accuracy);
      // And the engine-side application gives the fitted temperature's probabilities.
      const applied = applyCalibration(calibration, 'choice', fresh[0]!.logits);
      const expected = referenceProbabilities(fresh[0]!.logits, entry.temperature);
      applied.probabilities.forEach((p, i) => expect(p).toBeCloseTo(expected[i]!, 12));
    });
  }
});

describe('split-conformal coverage on fresh random splits', () => {
  // Each run draws fresh data and a fresh split: n_fit = n_held = 1000 per type. The held-out
  // coverage varies through the test draw (variance c(1−c)/n_held) and through the threshold
  // (the conditional coverage is Beta-distributed with variance ≈ c(1−c)/(n_fit+2)), so
  // SE = sqrt(c(1−c)·(1/n_held + 1/(n_fit+2))): 0.018 at 0.8, 0.013 at 0.9, 0.010 at 0.95.
  // Per run we allow 4 SE; the mean of the runs must lie within 4·SE/sqrt(runs) of c.
  // The guarantee is ≥ c (in expectation ⌈(n+1)c⌉/(n+1), under 0.001 above c here), so the
  // band is centred on c itself.
  const seeds = [101, 102, 103, 104, 105, 106];
  const n = 2000;
  for (const coverage of [0.8, 0.9, 0.95]) {
    it(`held-out coverage is within tolerance of ${coverage}`, () => {
      const nHeld = Math.round(n * 0.5);
      const nFit = n - nHeld;
      const se = Math.sqrt(coverage * (1 - coverage) * (1 / nHeld + 1 / (nFit + 2)));
      const observed: Record<QuestionType, number[]> = { noul: [], choice: [], score: [] };
      const observedBefore: number[] = [];
      for (const seed of seeds) {
        const records = [
          ...synthetic('noul', n, 1.8, seed * 7 + 1),
          ...synthetic('choice', n, 0.6, seed * 7 + 2),
          ...synthetic('score', n, 2.2, seed * 7 + 3),
        ];
        const { reports } = fitCalibration(records, { coverage, heldOutFraction: 0.5, seed });
        expect(reports.map((r) => r.type)).toEqual(['noul', 'choice', 'score']);
        for (const r of reports) {
          expect(r.n).toEqual({ fit: nFit, heldOut: nHeld });
          expect(Math.abs(r.after.coverage - coverage)).toBeLessThan(4 * se);
          // Conformal validity does not depend on calibration: the raw-probability sets too.
          expect(Math.abs(r.before.coverage - coverage)).toBeLessThan(4 * se);
          observed[r.type].push(r.after.coverage);
          observedBefore.push(r.before.coverage);
        }
      }
      for (const type of ['noul', 'choice', 'score'] as const) {
        const mean = observed[type].reduce((a, b) => a + b, 0) / seeds.length;
        expect(Math.abs(mean - coverage)).toBeLessThan((4 * se) / Math.sqrt(seeds.length));
      }
      const meanBefore = observedBefore.reduce((a, b) => a + b, 0) / observedBefore.length;
      expect(Math.abs(meanBefore - coverage)).toBeLessThan(
        (4 * se) / Math.sqrt(observedBefore.length),
      );
    });
  }

  it('sets are never empty, and abstention follows set size and abstainBelow', () => {
    const records = synthetic('choice', 400, 1, 77);
    const { calibration } = fitCalibration(records, { coverage: 0.9, seed: 1 });
    const fresh = synthetic('choice', 500, 1, 78);
    for (const { logits } of fresh) {
      const a = applyCalibration(calibration, 'choice', logits);
      expect(a.set.length).toBeGreaterThan(0);
      expect(a.set).toContain(a.top);
      expect(a.abstain).toBe(a.set.length > 1);
      const strict = applyCalibration(calibration, 'choice', logits, { abstainBelow: 0.99 });
      expect(strict.abstain).toBe(a.set.length > 1 || a.confidence < 0.99);
    }
  });
});
