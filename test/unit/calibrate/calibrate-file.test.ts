/** The calibration file: it round-trips through its parser, and the parser refuses tampering. */
import { describe, expect, it } from 'vitest';
import {
  CalibrationError,
  fitCalibration,
  uniforms,
  parseCalibration,
  serializeCalibration,
  validateCalibration,
  type CalibrationFile,
  type CalibrationRecord,
} from '../../../src/calibrate/index.js';
import type { QuestionType } from '../../../src/protocol/types.js';

function records(type: QuestionType, n: number, k: number, seed: number): CalibrationRecord[] {
  const uniform = uniforms(seed);
  const optionIds = Array.from({ length: k }, (_, i) => String(i));
  return Array.from({ length: n }, () => ({
    questionId: 'q',
    type,
    optionIds,
    logits: optionIds.map(() => 6 * uniform() - 3),
    label: Math.floor(uniform() * k),
  }));
}

const fitted: CalibrationFile = fitCalibration(
  [...records('noul', 120, 2, 1), ...records('choice', 80, 6, 2), ...records('score', 60, 5, 3)],
  { coverage: 0.9, seed: 9 },
).calibration;

function invalid(text: string): CalibrationError {
  try {
    parseCalibration(text);
  } catch (error) {
    expect(error).toBeInstanceOf(CalibrationError);
    expect((error as CalibrationError).code).toBe('calibration_invalid');
    return error as CalibrationError;
  }
  throw new Error('the parser accepted it');
}

/** The fitted file's JSON with one edit applied. */
function edited(edit: (o: Record<string, any>) => void): string {
  const o = JSON.parse(serializeCalibration(fitted));
  edit(o);
  return JSON.stringify(o);
}

describe('calibration file', () => {
  it('round-trips through serialize and parse', () => {
    const text = serializeCalibration(fitted);
    expect(text.endsWith('\n')).toBe(true);
    const parsed = parseCalibration(text);
    expect(parsed).toEqual(fitted);
    expect(serializeCalibration(parsed)).toBe(text);
    expect(Object.keys(parsed.types)).toEqual(['noul', 'choice', 'score']);
    expect(parsed.format).toBe('clef-web.calibration');
    expect(parsed.version).toBe(1);
  });

  it('refuses text that is not JSON', () => {
    expect(invalid('{"format": ').message).toMatch(/not JSON/);
  });

  const tampered: Array<[string, (o: Record<string, any>) => void, RegExp]> = [
    ['another format', (o) => (o.format = 'other'), /calibration\.format/],
    ['another version', (o) => (o.version = 2), /calibration\.version/],
    ['another method', (o) => (o.method.conformal = 'aps'), /calibration\.method\.conformal/],
    ['an unknown field', (o) => (o.extra = 1), /calibration\.extra: unknown field/],
    ['a missing field', (o) => delete o.types.noul.threshold, /types\.noul\.threshold: missing/],
    ['a negative temperature', (o) => (o.types.noul.temperature = -1), /noul\.temperature/],
    ['a huge temperature', (o) => (o.types.choice.temperature = 1e9), /choice\.temperature/],
    ['a threshold over 1', (o) => (o.types.score.threshold = 1.5), /score\.threshold/],
    ['a string number', (o) => (o.types.score.threshold = '0.5'), /score\.threshold/],
    ['coverage 1', (o) => (o.types.noul.coverage = 1), /noul\.coverage/],
    ['an edited coverage', (o) => (o.types.score.coverage = 0.999), /score\.n\.fit: .*needs 999/],
    ['a fractional count', (o) => (o.types.noul.n.fit = 10.5), /noul\.n\.fit/],
    ['figures of another n', (o) => (o.types.noul.heldOut.after.n = 1), /heldOut\.after\.n/],
    ['an ECE over 1', (o) => (o.types.choice.heldOut.before.ece = 2), /before\.ece/],
    ['an unknown type', (o) => (o.types.yesno = o.types.noul), /types\.yesno: not a question/],
    ['no types', (o) => (o.types = {}), /at least one question type/],
    ['a bad split', (o) => (o.split.heldOutFraction = 0), /split\.heldOutFraction/],
  ];
  for (const [what, edit, where] of tampered) {
    it(`refuses ${what}`, () => {
      const error = invalid(edited(edit));
      // One edit, one problem: the message names it.
      expect(error.details.issues).toHaveLength(1);
      expect(error.message).toMatch(/^Invalid calibration file: /);
      expect(error.message).toMatch(where);
    });
  }

  it('refuses a root that is not an object', () => {
    expect(invalid('[]').message).toMatch(/calibration: must be an object/);
    expect(invalid('null').message).toMatch(/calibration: must be an object/);
  });

  it('reports every problem, not just the first', () => {
    const error = invalid(
      edited((o) => {
        o.version = 3;
        o.types.noul.temperature = 0;
        o.types.choice.threshold = -0.1;
      }),
    );
    expect(error.details.issues).toHaveLength(3);
    expect(error.message).toContain('(and 2 more)');
  });

  it('keeps "__proto__" as data and refuses it as an unknown field', () => {
    const text = serializeCalibration(fitted).replace('{', '{"__proto__": {"x": 1},');
    expect(invalid(text).message).toMatch(/__proto__: unknown field/);
  });

  it('validates an object built in code the same way', () => {
    expect(validateCalibration(fitted)).toEqual(fitted);
    expect(() => validateCalibration({ ...fitted, version: 0 })).toThrow(CalibrationError);
  });
});
