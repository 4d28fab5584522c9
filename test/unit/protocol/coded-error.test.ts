// One base under every error with a stable code: each class extends it, keeps its name, code and
// message, and is told apart by name where instanceof fails (another bundle's copy of the class).
import { describe, expect, it } from 'vitest';
import { CodedError, isCodedError } from '../../../src/protocol/coded-error.js';
import { SystemOneError, isSystemOneError } from '../../../src/protocol/errors.js';
import { ClefError, IntegrityError, PackageError } from '../../../src/wire/errors.js';
import { CalibrationError, isCalibrationError } from '../../../src/calibrate/errors.js';
import { TrainError, isTrainError } from '../../../src/build/train/errors.js';
import { fromWireError, toWireError } from '../../../src/wire/error-wire.js';

describe('CodedError', () => {
  const cases: Array<[CodedError, string, string, string]> = [
    [
      new SystemOneError(503, { detail: { error_type: 'overloaded', message: 'busy' } }),
      'SystemOneError',
      'overloaded',
      'busy',
    ],
    [
      new PackageError('bad manifest', { file: 'manifest.json' }),
      'PackageError',
      'package_invalid',
      'bad manifest',
    ],
    [new ClefError('engine_failed', 'boom'), 'ClefError', 'engine_failed', 'boom'],
    [
      new CalibrationError('calibration_too_few', 'too few', { n: 3 }),
      'CalibrationError',
      'calibration_too_few',
      'too few',
    ],
    [
      new TrainError('examples_invalid', 'line 2', { line: 2 }),
      'TrainError',
      'examples_invalid',
      'line 2',
    ],
  ];

  it.each(cases)(
    'is the base of %s, with its name, code and message',
    (error, name, code, message) => {
      expect(error).toBeInstanceOf(CodedError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(error.message).toBe(message);
      expect(isCodedError(error, name)).toBe(true);
      expect(String(error)).toBe(`${name}: ${message}`);
    },
  );

  it('keeps each class its own details and fields', () => {
    expect(new CalibrationError('calibration_too_few', 'x', { n: 3 }).details).toEqual({ n: 3 });
    expect(new TrainError('examples_invalid', 'x').details).toEqual({});
    const integrity = new IntegrityError('a.onnx', 'aa', 'bb');
    expect(integrity.code).toBe('integrity_mismatch');
    expect(Object.isFrozen(integrity.details)).toBe(true);
    const s = new SystemOneError(422, {
      detail: [{ loc: ['body', 'state'], msg: 'missing', type: 'missing' }],
    });
    expect([s.code, s.status]).toEqual(['validation_error', 422]);
  });

  it('tells a copy from another bundle by name and code, and nothing else', () => {
    const foreign = Object.assign(new Error('x'), {
      name: 'CalibrationError',
      code: 'calibration_invalid',
    });
    expect(isCalibrationError(foreign)).toBe(true);
    expect(isTrainError(foreign)).toBe(false);
    expect(isCodedError(foreign, 'CalibrationError')).toBe(true);
    expect(isCodedError(Object.assign(new Error('x'), { name: 'TrainError' }), 'TrainError')).toBe(
      false,
    );
    expect(isCodedError({ name: 'TrainError', code: 'examples_invalid' }, 'TrainError')).toBe(
      false,
    );
    expect(isCodedError(new TrainError('examples_invalid', 'x'), 'CalibrationError')).toBe(false);
    expect(
      isSystemOneError(
        Object.assign(new Error('x'), { name: 'SystemOneError', code: 'overloaded' }),
      ),
    ).toBe(false);
  });

  it('crosses the worker boundary and comes back the same class with the same code', () => {
    for (const e of [
      new PackageError('bad', { file: 'm.json' }),
      new CalibrationError('calibration_unavailable', 'none'),
      new SystemOneError(400, { detail: { error_type: 'api_usage_error', message: 'no' } }),
    ]) {
      const back = fromWireError(structuredClone(toWireError(e))) as CodedError;
      expect(back).toBeInstanceOf(e.constructor);
      expect(back).toBeInstanceOf(CodedError);
      expect([back.name, back.code, back.message]).toEqual([e.name, e.code, e.message]);
    }
  });
});
