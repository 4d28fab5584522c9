/**
 * The labelled-examples JSONL: labels become prompt-order option indices (checked against the
 * engine's own encoder), and every bad line is reported with its number.
 */
import { describe, expect, it } from 'vitest';
import {
  CalibrationError,
  labelledRecords,
  parseLabelledExamples,
  type LineError,
} from '../../../src/calibrate/index.js';
import { encodeRequest, type TextTokenizer } from '../../../src/clef/prompt.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import type { JsonValue } from '../../../src/protocol/types.js';

const options = {
  validateRequest: (body: JsonValue) => validateRequest(body, { models: ['clef-flash'] }),
};

/** One token per code point: enough to run the real encoder for its option order. */
const codePoints: TextTokenizer = { encode: (text) => [...text].map((c) => c.codePointAt(0)!) };

const request = {
  model: 'clef-flash',
  state: 'a ticket',
  questions: {
    urgent: { type: 'noul' },
    // Written out of code-point order: the prompt sorts choice options.
    route: { type: 'choice', criteria: { zeta: 'z', Alpha: null, mid: 'm', alpha: 'a' } },
    grade: { type: 'score', criteria: ['bad', 'ok', 'good'] },
  },
};

function line(labels: Record<string, unknown>, req: unknown = request): string {
  return JSON.stringify({ request: req, labels });
}

function failure(text: string): CalibrationError {
  try {
    parseLabelledExamples(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(CalibrationError);
    expect((error as CalibrationError).code).toBe('examples_invalid');
    return error as CalibrationError;
  }
  throw new Error('the file was accepted');
}

describe('labelled examples', () => {
  it('maps labels to the option index in prompt order', () => {
    const text = [
      line({ urgent: true, route: 'alpha', grade: 2 }),
      line({ urgent: false, route: 'zeta' }),
      line({ route: 'Alpha', grade: 0 }),
    ].join('\n');
    const examples = parseLabelledExamples(text, options);
    expect(examples.map((e) => e.line)).toEqual([1, 2, 3]);
    const encoded = encodeRequest(codePoints, examples[0]!.valid, { maxTokens: 100_000 });
    const promptOrder = Object.fromEntries(encoded.questions.map((q) => [q.id, q.optionIds]));
    // The encoder's order, independently: noul true/false; choice by code point ("A" < "a").
    expect(promptOrder).toEqual({
      urgent: ['true', 'false'],
      route: ['Alpha', 'alpha', 'mid', 'zeta'],
      grade: ['0', '1', '2'],
    });
    const expectIndex = (k: number, id: string, option: string) =>
      expect(examples[k]!.labels.get(id)).toBe(promptOrder[id]!.indexOf(option));
    expectIndex(0, 'urgent', 'true');
    expectIndex(0, 'route', 'alpha');
    expectIndex(0, 'grade', '2');
    expectIndex(1, 'urgent', 'false');
    expectIndex(1, 'route', 'zeta');
    expectIndex(2, 'route', 'Alpha');
    expect(examples[1]!.labels.has('grade')).toBe(false);

    // Records: only labelled questions, logits rows taken in request order.
    const logits = [
      [0.5, -0.5],
      [1, 2, 3, 4],
      [0, 1, 2],
    ];
    const records = labelledRecords(examples[1]!, logits);
    expect(records).toEqual([
      {
        questionId: 'urgent',
        type: 'noul',
        optionIds: ['true', 'false'],
        logits: [0.5, -0.5],
        label: 1,
        line: 2,
        copyKey: 'a ticket',
      },
      {
        questionId: 'route',
        type: 'choice',
        optionIds: promptOrder.route,
        logits: [1, 2, 3, 4],
        label: 3,
        line: 2,
        copyKey: 'a ticket',
      },
    ]);
  });

  it('keeps the request as written (key order) for the engine', () => {
    const text =
      '{"request": {"model": "clef-flash", "state": "s", "questions": {"b": {"type": "noul"}, "2": {"type": "noul"}}}, "labels": {"2": true}}';
    const [example] = parseLabelledExamples(text, options);
    expect(example!.valid.questions.map((q) => q.id)).toEqual(['b', '2']);
    expect(example!.labels.get('2')).toBe(0);
  });

  it('accepts CRLF, a BOM and blank lines', () => {
    const text = `\uFEFF${line({ urgent: true })}\r\n\r\n${line({ grade: 1 })}\r\n`;
    expect(parseLabelledExamples(text, options).map((e) => e.line)).toEqual([1, 3]);
  });

  it('reports every bad line by number', () => {
    const lines = [
      line({ urgent: true }), // 1 ok
      '{"request": ', // 2 not JSON
      '', // 3 blank: skipped
      line({ nope: true }), // 4 unknown question
      line({ urgent: 'yes' }), // 5 noul wants a boolean
      line({ grade: 1.5 }), // 6 score wants an integer
      line({ route: 'beta' }), // 7 not an option
      line({ grade: 3 }), // 8 level out of range
      line({ route: 3 }), // 9 choice wants a string
      JSON.stringify({ request }), // 10 no labels
      line({ urgent: true }, { ...request, questions: { urgent: { type: 'maybe' } } }), // 11 bad request
      line({ grade: '1' }), // 12 a string level
      line({}), // 13 empty labels
      '[1, 2]', // 14 not an object
      line({ grade: 1.0 }), // 15 ok: JSON.stringify writes 1
      '{"request": {}, "labels": {"x": 1}, "extra": 1}', // 16 unknown field and a bad request
    ];
    const error = failure(lines.join('\n'));
    const errors = error.details.errors as LineError[];
    expect(error.details.lines).toEqual([2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16]);
    const at = (n: number) =>
      errors
        .filter((e) => e.line === n)
        .map((e) => e.message)
        .join(' | ');
    expect(at(2)).toMatch(/not JSON/);
    expect(at(4)).toMatch(/labels\.nope: the request has no question "nope"/);
    expect(at(5)).toMatch(/noul wants true or false, got "yes"/);
    expect(at(6)).toMatch(/score wants an integer level index \(0\.\.2\), got 1\.5/);
    expect(at(7)).toMatch(/"beta" is not one of the options \(Alpha, alpha, mid, zeta\)/);
    expect(at(8)).toMatch(/level 3 is out of range \(0\.\.2\)/);
    expect(at(9)).toMatch(/choice wants an option id string, got 3/);
    expect(at(10)).toMatch(/missing "labels"/);
    expect(at(11)).toMatch(/^request: /);
    expect(at(12)).toMatch(/score wants an integer level index/);
    expect(at(13)).toMatch(/"labels" is empty/);
    expect(at(14)).toMatch(/must be an object/);
    expect(at(16)).toMatch(/unknown field "extra"/);
    expect(at(16)).toMatch(/request: /);
    for (const n of [2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16]) {
      expect(error.message).toContain(`line ${n}: `);
    }
    expect(error.message).toMatch(/^Labelled examples: 13 bad lines:/);
    expect(error.message).not.toContain('line 1: ');
  });

  it('wants a score level written as an integer, not 1.0', () => {
    const text = line({ grade: 1 }).replace('"grade":1', '"grade":1.0');
    expect(text).toContain('"grade":1.0');
    expect(failure(text).message).toMatch(
      /line 1: labels\.grade: score wants an integer .* got 1\.0/,
    );
  });

  it('reports several problems on one line', () => {
    const error = failure(line({ urgent: 1, grade: -1, who: 'x' }));
    expect((error.details.errors as LineError[]).map((e) => e.line)).toEqual([1, 1, 1]);
  });

  it('refuses a file with no example', () => {
    expect(failure('\n\n').message).toMatch(/no example/);
  });

  it('refuses logits that do not fit the request', () => {
    const [example] = parseLabelledExamples(line({ urgent: true }), options);
    expect(() => labelledRecords(example!, [[1, 0]])).toThrow(/1 logit rows for 3 questions/);
    expect(() =>
      labelledRecords(example!, [
        [1, 0, 2],
        [1, 2, 3, 4],
        [0, 1, 2],
      ]),
    ).toThrow(/question urgent has 3 logits/);
    expect(() =>
      labelledRecords(example!, [
        [1, NaN],
        [1, 2, 3, 4],
        [0, 1, 2],
      ]),
    ).toThrow(CalibrationError);
  });
});
