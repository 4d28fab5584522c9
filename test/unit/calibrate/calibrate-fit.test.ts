/** fitCalibration's refusals, its minimum, its determinism, and applyCalibration's contract. */
import { describe, expect, it } from 'vitest';
import {
  applyCalibration,
  CalibrationError,
  fitCalibration,
  heldOutCount,
  minimumForCoverage,
  uniforms,
  requiredAnswers,
  scaledSoftmax,
  type CalibrationRecord,
} from '../../../src/calibrate/index.js';
import type { QuestionType } from '../../../src/protocol/types.js';

/** n records of `type` with k options, random logits, labels from softmax(logits). */
function records(type: QuestionType, n: number, seed: number, k = 3): CalibrationRecord[] {
  const uniform = uniforms(seed);
  const optionIds = Array.from({ length: k }, (_, i) => `o${i}`);
  return Array.from({ length: n }, () => {
    const logits = optionIds.map(() => 4 * uniform() - 2);
    const p = scaledSoftmax(logits);
    let u = uniform();
    let label = 0;
    while (label < k - 1 && u >= p[label]!) u -= p[label++]!;
    return { questionId: 'q', type, optionIds, logits, label };
  });
}

function caught(f: () => unknown): CalibrationError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(CalibrationError);
    return error as CalibrationError;
  }
  throw new Error('expected a CalibrationError');
}

describe('the minimum number of labelled answers', () => {
  it('is what the split rule gives, computed by hand', () => {
    // coverage 0.9, 25% held out, floors 20 fit / 10 held out: fit needs max(20, 9) = 20.
    // N = 37: round(9.25) = 9 held out (< 10); N = 38: round(9.5) = 10 held out, 28 fit. → 38.
    expect(requiredAnswers({ coverage: 0.9 }).total).toBe(38);
    // coverage 0.99: the quantile needs 99 fit. N = 131: round(32.75) = 33 held, 98 fit (< 99);
    // N = 132: 33 held, 99 fit. → 132.
    const r = requiredAnswers({ coverage: 0.99 });
    expect(r).toEqual({ total: 132, fit: 99, heldOut: 10, forCoverage: 99 });
  });

  it('matches a plain scan from 1 for many settings', () => {
    for (const coverage of [0.5, 0.8, 0.9, 0.95, 0.975]) {
      for (const heldOutFraction of [0.05, 0.2, 0.25, 0.5, 0.7]) {
        for (const minPerType of [1, 20, 50]) {
          const f = Math.max(minPerType, minimumForCoverage(coverage));
          let n = 1;
          while (n - heldOutCount(n, heldOutFraction) < f || heldOutCount(n, heldOutFraction) < 10)
            n++;
          expect(requiredAnswers({ coverage, heldOutFraction, minPerType }).total).toBe(n);
        }
      }
    }
  });

  it('fits at exactly the minimum and refuses one below, naming the numbers', () => {
    const need = requiredAnswers({ coverage: 0.9 }).total; // 38, checked above
    const fitted = fitCalibration(records('choice', need, 1), { coverage: 0.9 });
    const n = fitted.calibration.types.choice!.n;
    expect(n.fit + n.heldOut).toBe(need);
    expect(n.heldOut).toBeGreaterThanOrEqual(10);
    const error = caught(() => fitCalibration(records('choice', need - 1, 1), { coverage: 0.9 }));
    expect(error.code).toBe('calibration_too_few');
    expect(error.message).toContain(`choice has ${need - 1}, needs ${need}`);
    expect(error.details.shortfalls).toEqual([{ type: 'choice', have: need - 1, need }]);
  });

  it('names every short type and writes nothing for the others', () => {
    const all = [
      ...records('noul', 12, 2, 2),
      ...records('choice', 500, 3),
      ...records('score', 3, 4, 5),
    ];
    const error = caught(() => fitCalibration(all, { coverage: 0.95 }));
    expect(error.code).toBe('calibration_too_few');
    // coverage 0.95: fit needs max(20, 19) = 20 → N = 38 as at 0.9.
    expect(error.message).toContain('noul has 12, needs 38');
    expect(error.message).toContain('score has 3, needs 38');
    expect(error.message).not.toContain('choice has');
    expect(error.message).toContain('needs 19'); // what the 0.95 quantile alone needs
  });

  it('refuses when there is nothing at all', () => {
    expect(caught(() => fitCalibration([], { coverage: 0.9 })).code).toBe('calibration_too_few');
  });

  it('rejects bad options and bad records as input errors', () => {
    const ok = records('noul', 100, 5, 2);
    for (const options of [
      { coverage: 1 },
      { coverage: 0 },
      { coverage: 0.9, heldOutFraction: 0 },
      { coverage: 0.9, heldOutFraction: 1 },
      { coverage: 0.9, seed: -1 },
      { coverage: 0.9, seed: 1.5 },
      { coverage: 0.9, minPerType: 0 },
    ]) {
      expect(caught(() => fitCalibration(ok, options)).code).toBe('calibration_input_invalid');
    }
    const bad = [...ok];
    bad[7] = { ...ok[7]!, label: 2 };
    expect(caught(() => fitCalibration(bad, { coverage: 0.9 })).message).toMatch(/record 7/);
    bad[7] = { ...ok[7]!, logits: [NaN, 0] };
    expect(caught(() => fitCalibration(bad, { coverage: 0.9 })).code).toBe(
      'calibration_input_invalid',
    );
  });
});

describe('determinism', () => {
  it('gives the same calibration for the same seed, another split for another', () => {
    const data = [...records('noul', 300, 6, 2), ...records('score', 300, 7, 4)];
    const a = fitCalibration(data, { coverage: 0.9, seed: 42 });
    const b = fitCalibration(data, { coverage: 0.9, seed: 42 });
    expect(b).toEqual(a);
    const c = fitCalibration(data, { coverage: 0.9, seed: 43 });
    expect(c.calibration.types.noul!.temperature).not.toBe(a.calibration.types.noul!.temperature);
    expect(c.calibration.split.seed).toBe(43);
    expect(a.calibration.types.noul!.n).toEqual({ fit: 225, heldOut: 75 });
  });
});

describe('applyCalibration', () => {
  const { calibration } = fitCalibration(records('score', 200, 8, 4), { coverage: 0.8 });

  it('scales by the fitted temperature and builds the set from the threshold', () => {
    const entry = calibration.types.score!;
    const logits = [0.3, 2.1, -1, 0.9];
    const a = applyCalibration(calibration, 'score', logits);
    const p = scaledSoftmax(logits, entry.temperature);
    expect(a.probabilities).toEqual(p);
    expect(a.set).toEqual([0, 1, 2, 3].filter((i) => 1 - p[i]! <= entry.threshold));
    expect(a.top).toBe(1);
    expect(a.confidence).toBe(p[1]);
    expect(a.coverage).toBe(0.8);
  });

  it('abstains on a set of several, or under abstainBelow', () => {
    const entry = calibration.types.score!;
    const confident = [0, 50, 0, 0]; // p(1) ≈ 1: a one-option set
    expect(applyCalibration(calibration, 'score', confident).abstain).toBe(false);
    expect(applyCalibration(calibration, 'score', confident, { abstainBelow: 0.5 }).abstain).toBe(
      false,
    );
    const flat = [0, 0, 0, 0]; // p = 1/4 each: the set is all four unless threshold < 3/4
    const a = applyCalibration(calibration, 'score', flat);
    expect(a.abstain).toBe(entry.threshold >= 0.75);
    const t = { ...calibration, types: { score: { ...entry, threshold: 0.5 } } };
    const single = applyCalibration(t, 'score', [0, 1, 0, 0]); // p(1) ≈ 0.475 → no option passes
    expect(single.set).toEqual([1]); // never empty: the top option
    expect(single.abstain).toBe(false);
    expect(applyCalibration(t, 'score', [0, 1, 0, 0], { abstainBelow: 0.6 }).abstain).toBe(true);
  });

  it('refuses an uncalibrated type and bad logits', () => {
    expect(caught(() => applyCalibration(calibration, 'noul', [1, 0])).code).toBe(
      'calibration_type_missing',
    );
    expect(caught(() => applyCalibration(calibration, 'score', [1])).code).toBe(
      'calibration_input_invalid',
    );
    expect(caught(() => applyCalibration(calibration, 'score', [1, Infinity])).code).toBe(
      'calibration_input_invalid',
    );
    expect(
      caught(() => applyCalibration(calibration, 'score', [1, 0], { abstainBelow: 2 })).code,
    ).toBe('calibration_input_invalid');
  });
});

describe('the temperature floor (minTemperature)', () => {
  // Labels drawn from softmax(logits / 0.5): the model is underconfident, so the fit sharpens it.
  function underconfident(n: number, seed: number): CalibrationRecord[] {
    const uniform = uniforms(seed + 1);
    return records('choice', n, seed).map((r) => {
      const p = scaledSoftmax(r.logits, 0.5);
      let u = uniform();
      let label = 0;
      while (label < p.length - 1 && u >= p[label]!) u -= p[label++]!;
      return { ...r, label };
    });
  }

  it('keeps a fitted temperature below it at the floor, and the threshold fitted at the floor', () => {
    const data = underconfident(400, 11);
    const free = fitCalibration(data, { coverage: 0.9, seed: 3 }).calibration.types.choice!;
    expect(free.temperature).toBeLessThan(0.8);
    const floored = fitCalibration(data, { coverage: 0.9, seed: 3, minTemperature: 1 });
    const entry = floored.calibration.types.choice!;
    expect(entry.temperature).toBe(1);
    // The conformal threshold is refitted at the floor, not kept from the free fit.
    expect(entry.threshold).not.toBe(free.threshold);
    expect(floored.reports[0]!.temperatureAtBound).toBe(false);
  });

  it('leaves a fitted temperature above it as it is', () => {
    const data = records('choice', 400, 12).map((r) => ({
      ...r,
      logits: r.logits.map((z) => 3 * z),
    }));
    const free = fitCalibration(data, { coverage: 0.9, seed: 3 }).calibration.types.choice!;
    expect(free.temperature).toBeGreaterThan(1.5);
    const floored = fitCalibration(data, { coverage: 0.9, seed: 3, minTemperature: 1 });
    expect(floored.calibration.types.choice).toEqual(free);
  });

  it('refuses a floor that is not a finite number ≥ 0', () => {
    for (const minTemperature of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() =>
        fitCalibration(records('choice', 60, 1), { coverage: 0.9, minTemperature }),
      ).toThrow(/minTemperature must be a finite number ≥ 0/);
  });
});
