/**
 * Option-count bands: one question type whose short and long lists are miscalibrated in
 * opposite directions (the right answer drawn from softmax(z / 2) on 3 options and from
 * softmax(z / 0.5) on 12), so one temperature cannot fit both and each band's fit must find its
 * own. The tolerances are derived, not copied from a run (see each comment).
 */
import { describe, expect, it } from 'vitest';
import {
  applyCalibration,
  CalibrationError,
  evaluate,
  fitCalibration,
  uniforms,
  parseCalibration,
  serializeCalibration,
  type CalibrationRecord,
} from '../../../src/calibrate/index.js';
import { referenceProbabilities } from '../../support/calibration-reference.js';

function normals(seed: number): () => number {
  const uniform = uniforms(seed);
  return () => {
    const u = 1 - uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

/** n choice records with k options: z ~ N(0, 4), label ~ softmax(z / t0). */
function synthetic(n: number, k: number, t0: number, seed: number): CalibrationRecord[] {
  const normal = normals(seed);
  const uniform = uniforms(seed ^ 0x5bd1e995);
  const optionIds = Array.from({ length: k }, (_, i) => `o${i}`);
  return Array.from({ length: n }, () => {
    const logits = optionIds.map(() => 2 * normal());
    const p = referenceProbabilities(logits, t0);
    let u = uniform();
    let label = 0;
    while (label < k - 1 && u >= (p[label] as number)) u -= p[label++] as number;
    return { questionId: 'q', type: 'choice' as const, optionIds, logits, label };
  });
}

const BANDS = [
  { minOptions: 2, maxOptions: 5 },
  { minOptions: 6, maxOptions: 255 },
];

describe('option-count bands', () => {
  for (const seed of [1, 2, 3]) {
    it(`fits each band's own temperature (seed ${seed})`, () => {
      const short = synthetic(1500, 3, 2, seed);
      const long = synthetic(1500, 12, 0.5, seed + 100);
      const { calibration, reports } = fitCalibration([...short, ...long], {
        coverage: 0.9,
        seed,
        bands: BANDS,
      });
      const entry = calibration.types.choice!;
      const bands = entry.bands!;
      expect(bands.map((b) => [b.minOptions, b.maxOptions])).toEqual([
        [2, 5],
        [6, 255],
      ]);
      // ~1,125 fit records each; the MLE of β = 1/T has sd ≈ 1/sqrt(n·I) with I (the mean
      // variance of z under the model) around 1-4 here: a few percent. 20% is > 5 sd.
      expect(bands[0]!.temperature).toBeGreaterThan(2 / 1.2);
      expect(bands[0]!.temperature).toBeLessThan(2 * 1.2);
      expect(bands[1]!.temperature).toBeGreaterThan(0.5 / 1.2);
      expect(bands[1]!.temperature).toBeLessThan(0.5 * 1.2);
      // The pooled temperature lies between the two, far from either.
      expect(entry.temperature).toBeGreaterThan(bands[1]!.temperature * 1.2);
      expect(entry.temperature).toBeLessThan(bands[0]!.temperature / 1.2);
      expect(reports[0]!.bands).toHaveLength(2);

      // Fresh records from the same two models: each band's sets cover ≈ 90% (sd of a
      // 2,000-record coverage ≈ 0.7 points, of the fitted threshold's coverage ≈ 0.9: 4 points
      // is > 3.5 sd of their sum), and the band beats the pooled fit in NLL on its own data.
      const freshShort = synthetic(2000, 3, 2, seed + 1000);
      const freshLong = synthetic(2000, 12, 0.5, seed + 2000);
      for (const [fresh, band] of [
        [freshShort, bands[0]!],
        [freshLong, bands[1]!],
      ] as const) {
        const own = evaluate(fresh, band.temperature, band.threshold);
        const pooled = evaluate(fresh, entry.temperature, entry.threshold);
        expect(Math.abs(own.coverage - 0.9)).toBeLessThan(0.04);
        expect(own.nll).toBeLessThan(pooled.nll);
        // applyCalibration picks the band by option count.
        const answer = applyCalibration(calibration, 'choice', fresh[0]!.logits);
        expect(answer.band).toEqual({ minOptions: band.minOptions, maxOptions: band.maxOptions });
        const want = referenceProbabilities(fresh[0]!.logits, band.temperature);
        answer.probabilities.forEach((p, i) => expect(p).toBeCloseTo(want[i]!, 12));
      }
    });
  }

  it('skips a band with too few answers, and its questions use the type entry', () => {
    const records = [...synthetic(200, 3, 2, 7), ...synthetic(20, 12, 0.5, 8)];
    const { calibration, reports } = fitCalibration(records, {
      coverage: 0.9,
      bands: BANDS,
    });
    expect(calibration.types.choice!.bands).toHaveLength(1);
    expect(reports[0]!.skippedBands).toEqual([
      { minOptions: 6, maxOptions: 255, have: 20, need: 38 },
    ]);
    const logits = records[210]!.logits;
    const answer = applyCalibration(calibration, 'choice', logits);
    expect(answer.band).toBeNull();
    const want = referenceProbabilities(logits, calibration.types.choice!.temperature);
    answer.probabilities.forEach((p, i) => expect(p).toBeCloseTo(want[i]!, 12));
  });

  it('refuses overlapping or out-of-range bands', () => {
    const records = synthetic(100, 3, 1, 9);
    for (const bands of [
      [
        { minOptions: 2, maxOptions: 10 },
        { minOptions: 10, maxOptions: 20 },
      ],
      [{ minOptions: 1, maxOptions: 4 }],
      [{ minOptions: 5, maxOptions: 4 }],
      [{ minOptions: 2, maxOptions: 256 }],
    ]) {
      expect(() => fitCalibration(records, { coverage: 0.9, bands })).toThrow(CalibrationError);
    }
  });

  it('round-trips bands through the file, and the parser refuses broken ones', () => {
    const { calibration } = fitCalibration(
      [...synthetic(200, 3, 2, 11), ...synthetic(200, 12, 0.5, 12)],
      { coverage: 0.8, bands: BANDS },
    );
    const text = serializeCalibration(calibration);
    expect(parseCalibration(text)).toEqual(calibration);
    const broken = (edit: (bands: Array<Record<string, unknown>>) => void) => {
      const o = JSON.parse(text);
      edit(o.types.choice.bands);
      return JSON.stringify(o);
    };
    for (const [edit, message] of [
      [(b) => (b[1]!.minOptions = 4), /overlaps/],
      [(b) => (b[0]!.maxOptions = 1), /maxOptions/],
      [(b) => (b[0]!.extra = 1), /unknown field/],
      [(b) => delete b[0]!.threshold, /threshold: missing/],
      [(b) => b.splice(0, 2), /non-empty array/],
    ] as Array<[(b: Array<Record<string, unknown>>) => void, RegExp]>) {
      expect(() => parseCalibration(broken(edit))).toThrow(message);
    }
  });
});
