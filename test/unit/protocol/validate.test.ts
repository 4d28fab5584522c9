/**
 * validateRequest against docs/system-one.md. The expected `msg` strings for the
 * pydantic-style issues were printed by pydantic 2.13.4 (pydantic-core 2.46.4) on an equivalent
 * model (extra='forbid', Literal type, min/max_length constraints) and are written here by hand.
 */
import { describe, expect, it } from 'vitest';
import { SystemOneError, isSystemOneError } from '../../../src/protocol/errors.js';
import type { PyNumber, ValidationIssue } from '../../../src/protocol/types.js';
import { validateRequest, type ValidateOptions } from '../../../src/protocol/validate.js';

const py = (lexeme: string): PyNumber => ({
  kind: 'py-number',
  lexeme,
  isInt: !/[.eE]/.test(lexeme),
});

function rejection(body: unknown, options?: ValidateOptions): SystemOneError {
  try {
    validateRequest(body, options);
  } catch (e) {
    if (isSystemOneError(e)) return e;
    throw e;
  }
  throw new Error('request was accepted');
}

/** The 422's issue list (asserting it is a 422 with code validation_error). */
function issues(body: unknown, options?: ValidateOptions): ValidationIssue[] {
  const err = rejection(body, options);
  expect(err.status).toBe(422);
  expect(err.code).toBe('validation_error');
  return (err.body as { detail: ValidationIssue[] }).detail;
}

const I = (loc: Array<string | number>, msg: string, type: string): ValidationIssue => ({
  loc,
  msg,
  type,
});
const MISSING = 'Field required';
const EXTRA = 'Extra inputs are not permitted';
const DESC_TYPE = 'Input should be a valid string, dictionary, list or null';

/** A valid request with one question `q` replaced. */
function withQuestion(q: unknown): Record<string, unknown> {
  return { model: 'clef-flash', state: 's', questions: { q } };
}
function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

describe('body that is not an object: 400 api_usage_error', () => {
  const cases: Array<[unknown, string]> = [
    [[], 'an array'],
    ['{"model":"x"}', 'a string'],
    [null, 'null'],
    [42, 'a number'],
    [py('42'), 'a number'],
    [true, 'a boolean'],
    [undefined, 'nothing'],
    [new Date(0), 'a Date object'],
  ];
  it.each(cases)('%j', (body, what) => {
    const err = rejection(body);
    expect(err.status).toBe(400);
    expect(err.code).toBe('api_usage_error');
    expect(err.body).toEqual({
      detail: {
        error_type: 'api_usage_error',
        message: `The request body must be a JSON object, not ${what}`,
      },
    });
  });
});

describe('top-level fields', () => {
  it('reports all three missing fields in declared order', () => {
    expect(issues({})).toEqual([
      I(['body', 'model'], MISSING, 'missing'),
      I(['body', 'state'], MISSING, 'missing'),
      I(['body', 'questions'], MISSING, 'missing'),
    ]);
  });

  it.each([[1], [py('1')], [null], [['clef-flash']]])('model %j is not a string', (model) => {
    expect(issues({ model, state: 's', questions: { q: { type: 'noul' } } })).toEqual([
      I(['body', 'model'], 'Input should be a valid string', 'string_type'),
    ]);
  });

  it.each([[5], [py('5.0')], [true], [false], [null]])('state %j is refused', (state) => {
    expect(issues({ model: 'm', state, questions: { q: { type: 'noul' } } })).toEqual([
      I(['body', 'state'], 'Input should be a valid string, dictionary or list', 'state_type'),
    ]);
  });

  it.each([[''], ['text'], [[]], [{}], [new Map()], [[1, py('2.0'), { a: [null] }]]])(
    'state %j is accepted and returned as sent',
    (state) => {
      const valid = validateRequest({ model: 'm', state, questions: { q: { type: 'noul' } } });
      expect(valid.state).toBe(state);
    },
  );

  it('refuses unknown top-level fields, after the declared ones, in body order', () => {
    expect(
      issues({ stream: true, model: 'm', temperature: 0, questions: { q: { type: 'noul' } } }),
    ).toEqual([
      I(['body', 'state'], MISSING, 'missing'),
      I(['body', 'stream'], EXTRA, 'extra_forbidden'),
      I(['body', 'temperature'], EXTRA, 'extra_forbidden'),
    ]);
  });
});

describe('questions', () => {
  it.each([[[{ type: 'noul' }]], ['q'], [null], [3]])('%j is not a dictionary', (questions) => {
    expect(issues({ model: 'm', state: 's', questions })).toEqual([
      I(['body', 'questions'], 'Input should be a valid dictionary', 'dict_type'),
    ]);
  });

  const many = (n: number) => Object.fromEntries(range(n).map((i) => [`q${i}`, { type: 'noul' }]));
  it('accepts 1 and 64 questions', () => {
    expect(validateRequest({ model: 'm', state: 's', questions: many(1) }).questions).toHaveLength(
      1,
    );
    expect(validateRequest({ model: 'm', state: 's', questions: many(64) }).questions).toHaveLength(
      64,
    );
  });
  it('refuses 0 questions', () => {
    expect(issues({ model: 'm', state: 's', questions: {} })).toEqual([
      I(
        ['body', 'questions'],
        'Dictionary should have at least 1 item after validation, not 0',
        'too_short',
      ),
    ]);
  });
  it('refuses 65 questions', () => {
    expect(issues({ model: 'm', state: 's', questions: many(65) })).toEqual([
      I(
        ['body', 'questions'],
        'Dictionary should have at most 64 items after validation, not 65',
        'too_long',
      ),
    ]);
  });

  it('accepts ids of 1 and 100 characters from A-Z a-z 0-9 _ . -', () => {
    const ids = ['x', 'a'.repeat(100), 'Az09_.-', '7', '...', '__proto__'];
    const questions = new Map(ids.map((id) => [id, { type: 'noul' }]));
    const valid = validateRequest({ model: 'm', state: 's', questions });
    expect(valid.questions.map((q) => q.id)).toEqual(ids);
  });

  it('refuses ids that are empty, longer than 100 characters, or use other characters', () => {
    const long = 'a'.repeat(101);
    const questions = new Map<string, unknown>([
      ['', { type: 'noul' }],
      [long, { type: 'noul' }],
      ['a b', { type: 'noul' }],
      ['é', { type: 'noul' }],
      ['q/1', { type: 'noul' }],
    ]);
    const pattern = "String should match pattern '^[A-Za-z0-9_.-]+$'";
    expect(issues({ model: 'm', state: 's', questions })).toEqual([
      I(['body', 'questions', ''], 'String should have at least 1 character', 'string_too_short'),
      I(
        ['body', 'questions', long],
        'String should have at most 100 characters',
        'string_too_long',
      ),
      I(['body', 'questions', 'a b'], pattern, 'string_pattern_mismatch'),
      I(['body', 'questions', 'é'], pattern, 'string_pattern_mismatch'),
      I(['body', 'questions', 'q/1'], pattern, 'string_pattern_mismatch'),
    ]);
  });

  it('counts id length in code points, as Python does (51 emoji: pattern, not length)', () => {
    const id = '😀'.repeat(51); // 102 UTF-16 units, 51 code points
    expect(issues({ model: 'm', state: 's', questions: { [id]: { type: 'noul' } } })).toEqual([
      I(
        ['body', 'questions', id],
        "String should match pattern '^[A-Za-z0-9_.-]+$'",
        'string_pattern_mismatch',
      ),
    ]);
  });
});

describe('a question', () => {
  it.each([[5], ['noul'], [null], [[{ type: 'noul' }]]])('%j is not a dictionary', (q) => {
    expect(issues(withQuestion(q))).toEqual([
      I(['body', 'questions', 'q'], 'Input should be a valid dictionary', 'dict_type'),
    ]);
  });

  it('needs a type', () => {
    expect(issues(withQuestion({ instructions: 'x' }))).toEqual([
      I(['body', 'questions', 'q', 'type'], MISSING, 'missing'),
    ]);
  });

  it.each([['yesno'], ['NOUL'], [''], [1], [null]])('type %j is not one of the three', (type) => {
    expect(issues(withQuestion({ type }))).toEqual([
      I(
        ['body', 'questions', 'q', 'type'],
        "Input should be 'noul', 'choice' or 'score'",
        'literal_error',
      ),
    ]);
  });

  it('refuses unknown fields (still checking them when the type is wrong)', () => {
    expect(issues(withQuestion({ type: 'noul', name: 'x', options: [] }))).toEqual([
      I(['body', 'questions', 'q', 'name'], EXTRA, 'extra_forbidden'),
      I(['body', 'questions', 'q', 'options'], EXTRA, 'extra_forbidden'),
    ]);
    expect(issues(withQuestion({ type: 'x', name: 'x' }))).toEqual([
      I(
        ['body', 'questions', 'q', 'type'],
        "Input should be 'noul', 'choice' or 'score'",
        'literal_error',
      ),
      I(['body', 'questions', 'q', 'name'], EXTRA, 'extra_forbidden'),
    ]);
  });

  it.each([['Is it?'], [''], [null], [{ role: 'x' }], [['a', 1]]])(
    'instructions %j are accepted and returned as sent',
    (instructions) => {
      const valid = validateRequest(withQuestion({ type: 'noul', instructions }));
      expect(valid.questions[0]!.instructions).toBe(instructions);
    },
  );
  it('missing instructions come back undefined', () => {
    expect(
      validateRequest(withQuestion({ type: 'noul' })).questions[0]!.instructions,
    ).toBeUndefined();
  });
  it.each([[1], [py('1.5')], [true]])('instructions %j are refused', (instructions) => {
    expect(issues(withQuestion({ type: 'noul', instructions }))).toEqual([
      I(['body', 'questions', 'q', 'instructions'], DESC_TYPE, 'description_type'),
    ]);
  });
});

describe('noul criteria', () => {
  it.each([
    [undefined, []],
    [null, []],
    [{}, []],
    [{ true: 'yes' }, [['true', 'yes']]],
    [
      { false: null, true: { a: 1 } },
      [
        ['false', null],
        ['true', { a: 1 }],
      ],
    ],
  ])('criteria %j → %j', (criteria, expected) => {
    const q = criteria === undefined ? { type: 'noul' } : { type: 'noul', criteria };
    expect(validateRequest(withQuestion(q)).questions[0]!.criteria).toEqual(expected);
  });

  it('refuses keys other than "true" and "false"', () => {
    expect(
      issues(withQuestion({ type: 'noul', criteria: { yes: 'a', true: 'b', maybe: 'c' } })),
    ).toEqual([
      I(['body', 'questions', 'q', 'criteria', 'yes'], EXTRA, 'extra_forbidden'),
      I(['body', 'questions', 'q', 'criteria', 'maybe'], EXTRA, 'extra_forbidden'),
    ]);
  });
  it.each([['x'], [[]], [[['true', 'y']]], [1]])('criteria %j is not a dictionary', (criteria) => {
    expect(issues(withQuestion({ type: 'noul', criteria }))).toEqual([
      I(['body', 'questions', 'q', 'criteria'], 'Input should be a valid dictionary', 'dict_type'),
    ]);
  });
  it('refuses a number or boolean description', () => {
    expect(issues(withQuestion({ type: 'noul', criteria: { true: 1, false: false } }))).toEqual([
      I(['body', 'questions', 'q', 'criteria', 'true'], DESC_TYPE, 'description_type'),
      I(['body', 'questions', 'q', 'criteria', 'false'], DESC_TYPE, 'description_type'),
    ]);
  });
});

describe('choice criteria', () => {
  const options = (n: number) => Object.fromEntries(range(n).map((i) => [`o${i}`, `d${i}`]));
  it('is required', () => {
    expect(issues(withQuestion({ type: 'choice' }))).toEqual([
      I(['body', 'questions', 'q', 'criteria'], MISSING, 'missing'),
    ]);
  });
  it.each([[null], [['a', 'b']], ['a']])('criteria %j is not a dictionary', (criteria) => {
    expect(issues(withQuestion({ type: 'choice', criteria }))).toEqual([
      I(['body', 'questions', 'q', 'criteria'], 'Input should be a valid dictionary', 'dict_type'),
    ]);
  });
  it('accepts 2 and 255 options', () => {
    expect(
      validateRequest(withQuestion({ type: 'choice', criteria: options(2) })).questions[0]!
        .criteria,
    ).toEqual([
      ['o0', 'd0'],
      ['o1', 'd1'],
    ]);
    const valid = validateRequest(withQuestion({ type: 'choice', criteria: options(255) }));
    expect(valid.questions[0]!.criteria).toHaveLength(255);
  });
  it('refuses 1 and 256 options', () => {
    expect(issues(withQuestion({ type: 'choice', criteria: options(1) }))).toEqual([
      I(
        ['body', 'questions', 'q', 'criteria'],
        'Dictionary should have at least 2 items after validation, not 1',
        'too_short',
      ),
    ]);
    expect(issues(withQuestion({ type: 'choice', criteria: options(256) }))).toEqual([
      I(
        ['body', 'questions', 'q', 'criteria'],
        'Dictionary should have at most 255 items after validation, not 256',
        'too_long',
      ),
    ]);
  });
  it('keeps option order as written (Map) and accepts any option name, "" included', () => {
    const criteria = new Map<string, unknown>([
      ['9', 'nine'],
      ['b', null],
      ['1', { x: [1] }],
      ['', ['empty']],
      ['with space!', 'ok'],
    ]);
    expect(
      validateRequest(withQuestion({ type: 'choice', criteria })).questions[0]!.criteria,
    ).toEqual([
      ['9', 'nine'],
      ['b', null],
      ['1', { x: [1] }],
      ['', ['empty']],
      ['with space!', 'ok'],
    ]);
  });
  it('refuses number and boolean descriptions, one issue each', () => {
    expect(issues(withQuestion({ type: 'choice', criteria: { a: 1, b: 'ok', c: true } }))).toEqual([
      I(['body', 'questions', 'q', 'criteria', 'a'], DESC_TYPE, 'description_type'),
      I(['body', 'questions', 'q', 'criteria', 'c'], DESC_TYPE, 'description_type'),
    ]);
  });
});

describe('score criteria', () => {
  it('is required', () => {
    expect(issues(withQuestion({ type: 'score' }))).toEqual([
      I(['body', 'questions', 'q', 'criteria'], MISSING, 'missing'),
    ]);
  });
  it.each([[{ 0: 'a', 1: 'b' }], [null], ['ab']])('criteria %j is not a list', (criteria) => {
    expect(issues(withQuestion({ type: 'score', criteria }))).toEqual([
      I(['body', 'questions', 'q', 'criteria'], 'Input should be a valid list', 'list_type'),
    ]);
  });
  it('accepts 2 and 10 levels, keyed "0", "1", ...', () => {
    expect(
      validateRequest(withQuestion({ type: 'score', criteria: ['low', null] })).questions[0]!
        .criteria,
    ).toEqual([
      ['0', 'low'],
      ['1', null],
    ]);
    const ten = range(10).map((i) => `level ${i}`);
    const valid = validateRequest(withQuestion({ type: 'score', criteria: ten }));
    expect(valid.questions[0]!.criteria.map(([k]) => k)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
    expect(valid.questions[0]!.criteria[9]).toEqual(['9', 'level 9']);
  });
  it('refuses 1 and 11 levels', () => {
    expect(issues(withQuestion({ type: 'score', criteria: ['x'] }))).toEqual([
      I(
        ['body', 'questions', 'q', 'criteria'],
        'List should have at least 2 items after validation, not 1',
        'too_short',
      ),
    ]);
    expect(issues(withQuestion({ type: 'score', criteria: range(11).map(String) }))).toEqual([
      I(
        ['body', 'questions', 'q', 'criteria'],
        'List should have at most 10 items after validation, not 11',
        'too_long',
      ),
    ]);
  });
  it('refuses number and boolean levels at their index', () => {
    expect(issues(withQuestion({ type: 'score', criteria: ['a', 2, py('3'), false] }))).toEqual([
      I(['body', 'questions', 'q', 'criteria', 1], DESC_TYPE, 'description_type'),
      I(['body', 'questions', 'q', 'criteria', 2], DESC_TYPE, 'description_type'),
      I(['body', 'questions', 'q', 'criteria', 3], DESC_TYPE, 'description_type'),
    ]);
  });
});

describe('JS values that are not JSON: 422 json_invalid at their path', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular['self'] = circular;
  const holey: unknown[] = [1];
  holey[2] = 3; // index 1 is a hole
  const cases: Array<[string, Record<string, unknown>, Array<string | number>, string]> = [
    [
      'NaN deep in state',
      { model: 'm', state: { a: [1, { b: NaN }] }, questions: { q: { type: 'noul' } } },
      ['body', 'state', 'a', 1, 'b'],
      'NaN',
    ],
    [
      'state itself NaN',
      { model: 'm', state: NaN, questions: { q: { type: 'noul' } } },
      ['body', 'state'],
      'NaN',
    ],
    [
      'Infinity in state',
      { model: 'm', state: [Infinity], questions: { q: { type: 'noul' } } },
      ['body', 'state', 0],
      'Infinity',
    ],
    [
      '-Infinity in instructions',
      withQuestion({ type: 'noul', instructions: { t: -Infinity } }),
      ['body', 'questions', 'q', 'instructions', 't'],
      '-Infinity',
    ],
    [
      'undefined in an array',
      { model: 'm', state: ['a', undefined], questions: { q: { type: 'noul' } } },
      ['body', 'state', 1],
      'undefined',
    ],
    [
      'a hole in an array',
      { model: 'm', state: holey, questions: { q: { type: 'noul' } } },
      ['body', 'state', 1],
      'undefined',
    ],
    [
      'instructions: undefined',
      withQuestion({ type: 'noul', instructions: undefined }),
      ['body', 'questions', 'q', 'instructions'],
      'undefined',
    ],
    [
      'criteria: undefined',
      withQuestion({ type: 'noul', criteria: undefined }),
      ['body', 'questions', 'q', 'criteria'],
      'undefined',
    ],
    [
      'model: undefined',
      { model: undefined, state: 's', questions: { q: { type: 'noul' } } },
      ['body', 'model'],
      'undefined',
    ],
    [
      'a function description',
      withQuestion({ type: 'choice', criteria: { a: 'x', b: () => 1 } }),
      ['body', 'questions', 'q', 'criteria', 'b'],
      'a function',
    ],
    [
      'a bigint in a level',
      withQuestion({ type: 'score', criteria: ['a', { n: 10n }] }),
      ['body', 'questions', 'q', 'criteria', 1, 'n'],
      'a bigint',
    ],
    [
      'a symbol in state',
      { model: 'm', state: { s: Symbol('x') }, questions: { q: { type: 'noul' } } },
      ['body', 'state', 's'],
      'a symbol',
    ],
    [
      'a Date in state',
      { model: 'm', state: { when: new Date(0) }, questions: { q: { type: 'noul' } } },
      ['body', 'state', 'when'],
      'a Date object',
    ],
    [
      'a cycle in state',
      { model: 'm', state: circular, questions: { q: { type: 'noul' } } },
      ['body', 'state', 'self'],
      'a circular reference',
    ],
    [
      'a malformed PyNumber',
      {
        model: 'm',
        state: [{ kind: 'py-number', lexeme: '01', isInt: true }],
        questions: { q: { type: 'noul' } },
      },
      ['body', 'state', 0],
      'a malformed number',
    ],
    [
      'a toJSON method',
      { model: 'm', state: { toJSON: () => 'x' }, questions: { q: { type: 'noul' } } },
      ['body', 'state', 'toJSON'],
      'a function',
    ],
  ];
  it.each(cases)('%s', (_name, body, loc, what) => {
    expect(issues(body)).toEqual([I(loc, `Value is not JSON: ${what}`, 'json_invalid')]);
  });

  it('accepts the same value shared twice (not a cycle)', () => {
    const shared = { x: 1 };
    const request = validateRequest({
      model: 'm',
      state: [shared, shared],
      questions: { q: { type: 'noul' } },
    });
    expect(request.state).toEqual([{ x: 1 }, { x: 1 }]);
  });

  it('refuses a Map key that is not a string', () => {
    const state = new Map<unknown, unknown>([[1, 'one']]);
    expect(issues({ model: 'm', state, questions: { q: { type: 'noul' } } })).toEqual([
      I(['body', 'state', '1'], 'Value is not JSON: a non-string object key', 'json_invalid'),
    ]);
  });
});

describe('Map-form bodies (the lossless parser)', () => {
  it('keeps integer-like question ids in written order', () => {
    const questions = new Map<string, unknown>([
      ['2', new Map([['type', 'noul']])],
      ['b', new Map([['type', 'noul']])],
      ['1', new Map([['type', 'noul']])],
      ['10', new Map([['type', 'noul']])],
    ]);
    const body = new Map<string, unknown>([
      ['model', 'clef-flash'],
      ['state', new Map([['n', py('1.0')]])],
      ['questions', questions],
    ]);
    const valid = validateRequest(body);
    expect(valid.questions.map((q) => q.id)).toEqual(['2', 'b', '1', '10']);
    expect(valid.model).toBe('clef-flash');
    expect(valid.state).toBe(body.get('state'));
  });

  it('a plain object, by contrast, lists integer-like ids first (JS key order)', () => {
    const body = {
      model: 'm',
      state: 's',
      questions: { '2': { type: 'noul' }, b: { type: 'noul' }, '1': { type: 'noul' } },
    };
    expect(validateRequest(body).questions.map((q) => q.id)).toEqual(['1', '2', 'b']);
  });

  it('reports Map-form violations like plain ones', () => {
    const body = new Map<string, unknown>([
      ['model', py('3')],
      ['state', py('3')],
      [
        'questions',
        new Map([
          [
            'q',
            new Map<string, unknown>([
              ['type', 'choice'],
              ['criteria', new Map([['a', py('1')]])],
              ['x', null],
            ]),
          ],
        ]),
      ],
      ['extra', null],
    ]);
    expect(issues(body)).toEqual([
      I(['body', 'model'], 'Input should be a valid string', 'string_type'),
      I(['body', 'state'], 'Input should be a valid string, dictionary or list', 'state_type'),
      I(
        ['body', 'questions', 'q', 'criteria'],
        'Dictionary should have at least 2 items after validation, not 1',
        'too_short',
      ),
      I(['body', 'questions', 'q', 'criteria', 'a'], DESC_TYPE, 'description_type'),
      I(['body', 'questions', 'q', 'x'], EXTRA, 'extra_forbidden'),
      I(['body', 'extra'], EXTRA, 'extra_forbidden'),
    ]);
  });
});

describe('many violations in one 422', () => {
  it('lists every violation found, in body order', () => {
    const body = {
      model: 7,
      state: null,
      questions: {
        'bad id': { type: 'noul', criteria: { maybe: 'x' } },
        c: { type: 'choice', criteria: { only: 'one' } },
        s: { type: 'score', criteria: ['a', 1], instructions: false },
        t: { type: 'poll' },
      },
      top_p: 1,
    };
    const err = rejection(body);
    expect(err.status).toBe(422);
    expect(JSON.stringify(err.body)).toBe(
      JSON.stringify({
        detail: [
          I(['body', 'model'], 'Input should be a valid string', 'string_type'),
          I(['body', 'state'], 'Input should be a valid string, dictionary or list', 'state_type'),
          I(
            ['body', 'questions', 'bad id'],
            "String should match pattern '^[A-Za-z0-9_.-]+$'",
            'string_pattern_mismatch',
          ),
          I(['body', 'questions', 'bad id', 'criteria', 'maybe'], EXTRA, 'extra_forbidden'),
          I(
            ['body', 'questions', 'c', 'criteria'],
            'Dictionary should have at least 2 items after validation, not 1',
            'too_short',
          ),
          I(['body', 'questions', 's', 'instructions'], DESC_TYPE, 'description_type'),
          I(['body', 'questions', 's', 'criteria', 1], DESC_TYPE, 'description_type'),
          I(
            ['body', 'questions', 't', 'type'],
            "Input should be 'noul', 'choice' or 'score'",
            'literal_error',
          ),
          I(['body', 'top_p'], EXTRA, 'extra_forbidden'),
        ],
      }),
    );
  });
});

describe('model names', () => {
  const body = { model: 'gpt-4o', state: 's', questions: { q: { type: 'noul' } } };
  it('refuses a model outside options.models with 400 Unknown model', () => {
    const err = rejection(body, { models: ['clef-flash', 'clef'] });
    expect(err.status).toBe(400);
    expect(err.body).toEqual({
      detail: { error_type: 'api_usage_error', message: 'Unknown model: gpt-4o' },
    });
  });
  it('checks the model only after the schema passed', () => {
    const err = rejection({ ...body, questions: {} }, { models: ['clef-flash'] });
    expect(err.status).toBe(422);
  });
  it('accepts a listed model or alias, and any model when no list is given', () => {
    expect(
      validateRequest({ ...body, model: 'clef' }, { models: ['clef-flash', 'clef'] }).model,
    ).toBe('clef');
    expect(validateRequest(body).model).toBe('gpt-4o');
    expect(() => validateRequest({ ...body, model: 'Clef' }, { models: ['clef'] })).toThrow(
      'Unknown model: Clef',
    );
  });
});

describe('custom limits', () => {
  it('applies overridden limits and keeps the defaults for the rest', () => {
    const limits = { maxQuestions: 1, minChoiceOptions: 3, maxScoreLevels: 3 };
    const body = {
      model: 'm',
      state: 's',
      questions: {
        c: { type: 'choice', criteria: { a: 'x', b: 'y' } },
        s: { type: 'score', criteria: ['0', '1', '2', '3'] },
      },
    };
    expect(issues(body, { limits })).toEqual([
      I(
        ['body', 'questions'],
        'Dictionary should have at most 1 item after validation, not 2',
        'too_long',
      ),
      I(
        ['body', 'questions', 'c', 'criteria'],
        'Dictionary should have at least 3 items after validation, not 2',
        'too_short',
      ),
      I(
        ['body', 'questions', 's', 'criteria'],
        'List should have at most 3 items after validation, not 4',
        'too_long',
      ),
    ]);
    // Defaults still hold where nothing was overridden (a score with 1 level), and an
    // explicit undefined override does not erase a default.
    expect(
      issues(withQuestion({ type: 'score', criteria: ['x'] }), {
        limits: { maxQuestions: undefined },
      }),
    ).toEqual([
      I(
        ['body', 'questions', 'q', 'criteria'],
        'List should have at least 2 items after validation, not 1',
        'too_short',
      ),
    ]);
  });
});

describe('the returned request', () => {
  it('lists questions in order with type, instructions as sent and normalised criteria', () => {
    const state = { user: 'x' };
    const valid = validateRequest({
      model: 'clef-flash',
      state,
      questions: {
        spam: { type: 'noul', instructions: '' },
        topic: {
          type: 'choice',
          instructions: { lang: 'en' },
          criteria: { billing: 'money', tech: null },
        },
        mood: { type: 'score', criteria: ['bad', 'ok', ['good']] },
      },
    });
    expect(valid).toEqual({
      model: 'clef-flash',
      state,
      questions: [
        { id: 'spam', type: 'noul', instructions: '', criteria: [] },
        {
          id: 'topic',
          type: 'choice',
          instructions: { lang: 'en' },
          criteria: [
            ['billing', 'money'],
            ['tech', null],
          ],
        },
        {
          id: 'mood',
          type: 'score',
          instructions: undefined,
          criteria: [
            ['0', 'bad'],
            ['1', 'ok'],
            ['2', ['good']],
          ],
        },
      ],
    });
    expect(valid.state).toBe(state);
  });
});

it('every issue object has its keys in the order loc, msg, type', () => {
  for (const i of issues({ x: 1, questions: { 'a b': { type: 'x' } } })) {
    expect(Object.keys(i)).toEqual(['loc', 'msg', 'type']);
  }
});
