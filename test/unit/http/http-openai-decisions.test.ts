/**
 * The OpenAI Decisions translation (src/http/openai-decisions.ts). Expected values are written
 * by hand from the `openai` 7.55.0 SDK's resources/decisions.d.ts: DecisionCreateParams in,
 * Decision out.
 */
import { describe, expect, it } from 'vitest';
import {
  fromSystemOneResponse,
  isOpenAiDecisionsBody,
  toSystemOneRequest,
  type DecisionsOptions,
} from '../../../src/http/openai-decisions.js';
import { isOpenAiError, OpenAiError } from '../../../src/http/openai-errors.js';
import { optionIds, questionIds } from '../../../src/http/openai-questions.js';
import { parseRequestJson } from '../../../src/protocol/json.js';
import { validateRequest } from '../../../src/protocol/validate.js';

/** Maps as ordered entry lists, so that toEqual also checks order. */
function ordered(v: unknown): unknown {
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [k, ordered(x)]) };
  if (Array.isArray(v)) return v.map(ordered);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ordered(x)]));
  }
  return v;
}
const m = (entries: Array<[string, unknown]>) => new Map(entries);

function refusal(body: unknown, options?: DecisionsOptions): OpenAiError {
  try {
    toSystemOneRequest(body, options);
  } catch (e) {
    if (isOpenAiError(e)) return e;
    throw e;
  }
  throw new Error('body was accepted');
}

const THREE = {
  model: 'clef-flash',
  input: 'My card was charged twice for one order.',
  questions: [
    { type: 'predicate', name: 'urgent', instructions: 'Does this need an answer today?' },
    {
      type: 'choice',
      instructions: 'Which team?',
      choices: [{ value: 'billing', description: 'Payments' }, { value: 'shipping' }],
    },
    {
      type: 'score',
      name: 'how angry',
      instructions: 'How upset is the customer?',
      levels: [
        { label: 'calm' },
        { label: 'annoyed', description: 'Irritated' },
        { label: 'furious' },
      ],
    },
  ],
};

describe('isOpenAiDecisionsBody', () => {
  it('recognises the OpenAI shape and never a System One body', () => {
    expect(isOpenAiDecisionsBody(THREE)).toBe(true);
    expect(isOpenAiDecisionsBody(parseRequestJson(JSON.stringify(THREE)))).toBe(true);
    expect(isOpenAiDecisionsBody({ model: 'x', questions: [] })).toBe(true);
    expect(isOpenAiDecisionsBody({ model: 'x', input: 'hi', questions: {} })).toBe(true);
    const systemOne = { model: 'x', state: 's', questions: { q: { type: 'noul' } } };
    expect(isOpenAiDecisionsBody(systemOne)).toBe(false);
    expect(isOpenAiDecisionsBody(parseRequestJson(JSON.stringify(systemOne)))).toBe(false);
    expect(isOpenAiDecisionsBody({ ...systemOne, input: 'stray' })).toBe(false);
    expect(isOpenAiDecisionsBody([THREE])).toBe(false);
    expect(isOpenAiDecisionsBody(null)).toBe(false);
    expect(isOpenAiDecisionsBody('{"questions":[]}')).toBe(false);
  });
});

describe('toSystemOneRequest', () => {
  it('maps a 3-question body onto the System One request, order kept', () => {
    const { request, mapping } = toSystemOneRequest(THREE);
    const expected = m([
      ['model', 'clef-flash'],
      ['state', 'My card was charged twice for one order.'],
      [
        'questions',
        m([
          [
            'urgent',
            m([
              ['type', 'noul'],
              ['instructions', 'Does this need an answer today?'],
            ]),
          ],
          [
            'q1',
            m([
              ['type', 'choice'],
              ['instructions', 'Which team?'],
              [
                'criteria',
                m([
                  ['billing', 'Payments'],
                  ['shipping', null],
                ]),
              ],
            ]),
          ],
          [
            'q2',
            m([
              ['type', 'score'],
              ['instructions', 'How upset is the customer?'],
              [
                'criteria',
                [
                  'calm',
                  m([
                    ['label', 'annoyed'],
                    ['description', 'Irritated'],
                  ]),
                  'furious',
                ],
              ],
            ]),
          ],
        ]),
      ],
    ]);
    expect(ordered(request)).toEqual(ordered(expected));
    expect(mapping).toEqual({
      model: 'clef-flash',
      questions: [
        { type: 'predicate', id: 'urgent', name: 'urgent' },
        {
          type: 'choice',
          id: 'q1',
          name: null,
          options: [
            { id: 'billing', value: 'billing' },
            { id: 'shipping', value: 'shipping' },
          ],
        },
        { type: 'score', id: 'q2', name: 'how angry', labels: ['calm', 'annoyed', 'furious'] },
      ],
    });
    const valid = validateRequest(request, { models: ['clef-flash'] });
    expect(valid.questions.map((q) => [q.id, q.type])).toEqual([
      ['urgent', 'noul'],
      ['q1', 'choice'],
      ['q2', 'score'],
    ]);
    expect(valid.questions[2]!.criteria.map(([id]) => id)).toEqual(['0', '1', '2']);
  });

  it('takes the lossless parser output as it takes plain objects', () => {
    const fromText = toSystemOneRequest(parseRequestJson(JSON.stringify(THREE)));
    expect(ordered(fromText.request)).toEqual(ordered(toSystemOneRequest(THREE).request));
  });

  it('keeps integer-like names in question order', () => {
    const body = {
      model: 'm',
      input: 'x',
      questions: [
        { type: 'predicate', name: 'b', instructions: 'B?' },
        { type: 'predicate', name: '2', instructions: 'Two?' },
      ],
    };
    const valid = validateRequest(toSystemOneRequest(body).request);
    expect(valid.questions.map((q) => q.id)).toEqual(['b', '2']);
  });

  it('gives stable ids to unnamed, unusable and repeated names', () => {
    expect(questionIds([undefined, 'q0', 'ok', 'ok', 'has space', 'q1', undefined])).toEqual([
      'q0_1',
      'q0',
      'ok',
      'q3',
      'q4',
      'q1',
      'q6',
    ]);
    expect(questionIds(['q1', 'q1'])).toEqual(['q1', 'q1_1']);
    expect(questionIds(['x'.repeat(101)])).toEqual(['q0']);
  });

  it('keeps "true" and true distinct both ways', () => {
    expect(optionIds(['true', true, 'no'])).toEqual(['"true"', 'true', '"no"']);
    expect(optionIds([true, false])).toEqual(['true', 'false']);
    expect(optionIds(['yes', false, 'False'])).toEqual(['yes', 'false', 'False']);
    const body = {
      model: 'm',
      input: 'x',
      questions: [
        {
          type: 'choice',
          name: 'c',
          instructions: 'Which?',
          choices: [{ value: 'true' }, { value: true }, { value: false, description: 'No' }],
        },
      ],
    };
    const { request, mapping } = toSystemOneRequest(body);
    const criteria = validateRequest(request).questions[0]!.criteria;
    expect(criteria).toEqual([
      ['"true"', null],
      ['true', null],
      ['false', 'No'],
    ]);
    const response = (choice: string) => ({
      model: 'm',
      answers: {
        c: {
          type: 'choice',
          choice,
          confidence: 0.5,
          probabilities: { '"true"': 0.5, true: 0.3, false: 0.2 },
        },
      },
      usage: { input_tokens: 7, output_tokens: 0 },
    });
    const asString = fromSystemOneResponse(mapping, response('"true"')).answers[0]!;
    const asBoolean = fromSystemOneResponse(mapping, response('true')).answers[0]!;
    expect(asString).toMatchObject({ choice: 'true' });
    expect(asBoolean).toMatchObject({ choice: true });
    expect(asString.type === 'choice' && asString.probabilities).toEqual([
      { value: 'true', probability: 0.5 },
      { value: true, probability: 0.3 },
      { value: false, probability: 0.2 },
    ]);
  });

  it('passes messages as the JSON array they are, without cache breakpoints', () => {
    const input = [
      { role: 'system', content: 'Route tickets.' },
      {
        type: 'message',
        role: 'user',
        content: [
          {
            type: 'input_text',
            text: 'Charged twice',
            prompt_cache_breakpoint: { mode: 'explicit' },
          },
          { type: 'input_json', data: { order: 42 } },
        ],
      },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }], phase: 'final_answer' },
    ];
    const { request } = toSystemOneRequest({ ...THREE, input });
    const expected = [
      m([
        ['role', 'system'],
        ['content', 'Route tickets.'],
      ]),
      m([
        ['type', 'message'],
        ['role', 'user'],
        [
          'content',
          [
            m([
              ['type', 'input_text'],
              ['text', 'Charged twice'],
            ]),
            m([
              ['type', 'input_json'],
              ['data', { order: 42 }],
            ]),
          ],
        ],
      ]),
      m([
        ['role', 'assistant'],
        [
          'content',
          [
            m([
              ['type', 'refusal'],
              ['refusal', 'No.'],
            ]),
          ],
        ],
        ['phase', 'final_answer'],
      ]),
    ];
    expect(ordered(request.get('state'))).toEqual(ordered(expected));
    // And System One takes it: the state keeps every message, the three questions go through.
    const valid = validateRequest(request);
    expect(Array.isArray(valid.state) && valid.state.length).toBe(input.length);
    expect(valid.questions.map((q) => q.type)).toEqual(['noul', 'choice', 'score']);
  });

  it('reads a lone text part of instructions as its text, other parts as JSON', () => {
    const q = (instructions: unknown) => ({
      ...THREE,
      questions: [{ type: 'predicate', name: 'p', instructions }],
    });
    const one = toSystemOneRequest(q([{ type: 'input_text', text: 'Spam?' }])).request;
    expect(validateRequest(one).questions[0]!.instructions).toBe('Spam?');
    const two = toSystemOneRequest(
      q([
        { type: 'input_text', text: 'Spam?' },
        { type: 'input_json', data: [{ a: 1 }] },
      ]),
    );
    expect(ordered(validateRequest(two.request).questions[0]!.instructions)).toEqual(
      ordered([
        m([
          ['type', 'input_text'],
          ['text', 'Spam?'],
        ]),
        m([
          ['type', 'input_json'],
          ['data', [{ a: 1 }]],
        ]),
      ]),
    );
  });

  it('accepts and ignores the caching and safety members', () => {
    const { request } = toSystemOneRequest({
      ...THREE,
      prompt_cache_key: 'k',
      safety_identifier: null,
      prompt_cache_options: { mode: 'explicit', ttl: '30m' },
    });
    expect([...request.keys()]).toEqual(['model', 'state', 'questions']);
  });
});

describe('refusals', () => {
  const one = (q: Record<string, unknown>) => ({ model: 'm', input: 'x', questions: [q] });
  const cases: Array<[string, unknown, string | null, string]> = [
    ['not an object', [1], null, 'invalid_type'],
    ['no model', { input: 'x', questions: THREE.questions }, 'model', 'missing_required_parameter'],
    ['unknown member', { ...THREE, temperature: 0 }, 'temperature', 'unknown_parameter'],
    ['input a number', { ...THREE, input: 3 }, 'input', 'invalid_type'],
    ['no questions', { ...THREE, questions: [] }, 'questions', 'array_below_min_length'],
    [
      'a number as value',
      one({ type: 'choice', instructions: 'i', choices: [{ value: 'a' }, { value: 1 }] }),
      'questions[0].choices[1].value',
      'invalid_type',
    ],
    [
      'a repeated value',
      one({
        type: 'choice',
        instructions: 'i',
        choices: [{ value: 'a' }, { value: 'b' }, { value: 'a' }],
      }),
      'questions[0].choices[2].value',
      'invalid_value',
    ],
    [
      'one choice',
      one({ type: 'choice', instructions: 'i', choices: [{ value: 'a' }] }),
      'questions[0].choices',
      'array_below_min_length',
    ],
    [
      '11 levels',
      one({
        type: 'score',
        instructions: 'i',
        levels: Array.from({ length: 11 }, (_, i) => ({ label: `l${i}` })),
      }),
      'questions[0].levels',
      'array_above_max_length',
    ],
    [
      'a level without label',
      one({ type: 'score', instructions: 'i', levels: [{ label: 'a' }, { description: 'b' }] }),
      'questions[0].levels[1].label',
      'missing_required_parameter',
    ],
    [
      'an unknown type',
      one({ type: 'rank', instructions: 'i' }),
      'questions[0].type',
      'invalid_value',
    ],
    [
      'choices on a predicate',
      one({ type: 'predicate', instructions: 'i', choices: [] }),
      'questions[0].choices',
      'unknown_parameter',
    ],
    [
      'no instructions',
      one({ type: 'predicate' }),
      'questions[0].instructions',
      'missing_required_parameter',
    ],
    [
      'empty instructions',
      one({ type: 'predicate', instructions: '' }),
      'questions[0].instructions',
      'invalid_value',
    ],
    [
      'an empty lone text part',
      one({ type: 'predicate', instructions: [{ type: 'input_text', text: '' }] }),
      'questions[0].instructions',
      'invalid_value',
    ],
    [
      'an image in instructions',
      one({
        type: 'predicate',
        instructions: [{ type: 'input_image', image_url: 'https://x/y.png' }],
      }),
      'questions[0].instructions[0]',
      'unsupported_value',
    ],
    [
      'an image in input',
      {
        ...THREE,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a' },
              { type: 'input_image', image_url: 'data:image/png;base64,AA' },
            ],
          },
        ],
      },
      'input[0].content[1]',
      'unsupported_value',
    ],
    [
      'a file in input',
      { ...THREE, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
      'input[0].content[0]',
      'unsupported_value',
    ],
    [
      'a function call',
      {
        ...THREE,
        input: [
          { role: 'user', content: 'a' },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        ],
      },
      'input[1]',
      'unsupported_value',
    ],
    [
      'a tool output',
      { ...THREE, input: [{ type: 'custom_tool_call_output', call_id: 'c', output: 'x' }] },
      'input[0]',
      'unsupported_value',
    ],
    [
      'JSON in a system message',
      { ...THREE, input: [{ role: 'system', content: [{ type: 'input_json', data: {} }] }] },
      'input[0].content[0].type',
      'invalid_value',
    ],
    [
      'an unknown role',
      { ...THREE, input: [{ role: 'tool', content: 'x' }] },
      'input[0].role',
      'invalid_value',
    ],
    [
      'a bad cache option',
      { ...THREE, prompt_cache_options: { ttl: '1h' } },
      'prompt_cache_options.ttl',
      'invalid_value',
    ],
  ];
  it.each(cases)('%s: 400 at its param', (_, body, param, code) => {
    const e = refusal(body);
    expect(e.status).toBe(400);
    expect(e.code).toBe(code);
    expect(e.body.error).toMatchObject({ type: 'invalid_request_error', param, code });
    expect(Object.keys(e.body.error)).toEqual(['message', 'type', 'param', 'code']);
  });

  it('refuses more questions than the model answers, saying how many', () => {
    const questions = Array.from({ length: 65 }, (_, i) => ({
      type: 'predicate',
      instructions: `Q${i}?`,
    }));
    const e = refusal({ model: 'm', input: 'x', questions });
    expect(e.body.error).toMatchObject({ param: 'questions', code: 'array_above_max_length' });
    expect(e.message).toContain('at most 64');
    expect(e.message).toContain('65');
    const { mapping } = toSystemOneRequest({
      model: 'm',
      input: 'x',
      questions: questions.slice(0, 64),
    });
    expect(mapping.questions.map((q) => [q.type, q.id])).toEqual(
      Array.from({ length: 64 }, (_, i) => ['predicate', `q${i}`]),
    );
    expect(
      refusal(
        { model: 'm', input: 'x', questions: questions.slice(0, 9) },
        { limits: { maxQuestions: 8 } },
      ).code,
    ).toBe('array_above_max_length');
  });

  it('lists every problem in one 400', () => {
    const e = refusal({
      input: 5,
      questions: [
        { type: 'choice', instructions: 'i', choices: [{ value: 1 }, { value: 'a', extra: 1 }] },
      ],
      stream: true,
    });
    expect(e.problems.map((p) => p.param)).toEqual([
      'stream',
      'model',
      'input',
      'questions[0].choices[0].value',
      'questions[0].choices[1].extra',
    ]);
    expect(e.message).toMatch(/^The request has 5 problems: \(1\) Unknown parameter: 'stream'\./);
    expect(e.body.error.param).toBe('stream');
  });

  it('reports a message missing both role and content twice', () => {
    const e = refusal({ ...THREE, input: [{ type: 'message' }] });
    expect(e.problems.map((p) => [p.param, p.code])).toEqual([
      ['input[0].role', 'missing_required_parameter'],
      ['input[0].content', 'missing_required_parameter'],
    ]);
  });

  it('answers an unserved model with 404 model_not_found', () => {
    const e = refusal(THREE, { models: ['clef-nano'] });
    expect(e.status).toBe(404);
    expect(e.body.error).toMatchObject({ param: 'model', code: 'model_not_found' });
    // The served model passes, under its own name.
    expect(toSystemOneRequest(THREE, { models: ['clef-flash'] }).mapping.model).toBe('clef-flash');
  });
});

describe('fromSystemOneResponse', () => {
  const { mapping } = toSystemOneRequest(THREE);
  const responseText =
    '{"model":"clef-flash","answers":{' +
    '"urgent":{"type":"noul","noul":0.8125},' +
    '"q1":{"type":"choice","choice":"billing","confidence":0.9,"probabilities":{"billing":0.9,"shipping":0.1}},' +
    '"q2":{"type":"score","score":1.1,"confidence":0.6,"legend":{"0":"calm","1":{"label":"annoyed","description":"Irritated"},"2":"furious"},' +
    '"probabilities":{"0":0.15,"1":0.6,"2":0.25}}},' +
    '"usage":{"input_tokens":321,"output_tokens":0}}';
  const expected = {
    answers: [
      { type: 'predicate', name: 'urgent', probability: 0.8125 },
      {
        type: 'choice',
        name: null,
        choice: 'billing',
        confidence: 0.9,
        probabilities: [
          { value: 'billing', probability: 0.9 },
          { value: 'shipping', probability: 0.1 },
        ],
      },
      {
        type: 'score',
        name: 'how angry',
        score: 1.1,
        confidence: 0.6,
        probabilities: [
          { label: 'calm', value: 0, probability: 0.15 },
          { label: 'annoyed', value: 1, probability: 0.6 },
          { label: 'furious', value: 2, probability: 0.25 },
        ],
      },
    ],
    model: 'clef-flash',
    usage: {
      input_tokens: 321,
      input_tokens_details: { cache_write_tokens: 0, cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 321,
    },
  };

  it('builds the SDK Decision from JSON.parse or lossless output alike', () => {
    expect(fromSystemOneResponse(mapping, JSON.parse(responseText))).toEqual(expected);
    expect(fromSystemOneResponse(mapping, parseRequestJson(responseText))).toEqual(expected);
    const cached = fromSystemOneResponse(mapping, JSON.parse(responseText), { cachedTokens: 300 });
    expect(cached.usage.input_tokens_details).toEqual({
      cache_write_tokens: 0,
      cached_tokens: 300,
    });
  });

  it('is a 500 when the response does not fit the mapping', () => {
    const broken = (edit: (r: Record<string, any>) => void) => {
      const r = JSON.parse(responseText);
      edit(r);
      try {
        fromSystemOneResponse(mapping, r);
      } catch (e) {
        if (isOpenAiError(e)) return e;
      }
      throw new Error('accepted');
    };
    for (const e of [
      broken((r) => delete r.answers.q1),
      broken((r) => (r.answers.q1.choice = 'returns')),
      broken((r) => (r.answers.urgent.type = 'choice')),
      broken((r) => delete r.answers.q2.probabilities['2']),
      broken((r) => (r.usage.truncated_state_tokens = 10)),
    ]) {
      expect(e.status).toBe(500);
      expect(e.body.error.type).toBe('server_error');
    }
  });
});
