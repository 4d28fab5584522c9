/**
 * Chat Completions as a decision (src/http/chat-completions.ts). Expected values are written by
 * hand from the `openai` 7.55.0 SDK's ChatCompletion / ChatCompletionCreateParams types.
 */
import { describe, expect, it } from 'vitest';
import {
  buildChatCompletion,
  DECIDES_NOTE,
  planChatDecision,
  type ChatOptions,
} from '../../../src/http/chat-completions.js';
import { isOpenAiError, OpenAiError } from '../../../src/http/openai-errors.js';
import { parseRequestJson } from '../../../src/protocol/json.js';
import type { SystemOneResponse } from '../../../src/protocol/types.js';
import { validateRequest } from '../../../src/protocol/validate.js';

function ordered(v: unknown): unknown {
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [k, ordered(x)]) };
  if (Array.isArray(v)) return v.map(ordered);
  return v;
}
const m = (entries: Array<[string, unknown]>) => new Map(entries);

function refusal(body: unknown, options?: ChatOptions): OpenAiError {
  try {
    planChatDecision(body, options);
  } catch (e) {
    if (isOpenAiError(e)) return e;
    throw e;
  }
  throw new Error('body was accepted');
}

const SCHEMA = {
  type: 'object',
  properties: {
    label: { type: 'string', enum: ['spam', 'ham'], description: 'Is it spam?' },
    urgent: { type: 'boolean' },
    priority: { type: 'integer', minimum: 1, maximum: 5, title: 'Priority' },
    customer: {
      type: 'object',
      properties: {
        tier: { type: 'string', enum: ['free', 'gold'] },
        vip: { type: 'boolean', description: 'A VIP?' },
      },
      required: ['tier'],
      additionalProperties: false,
    },
  },
  required: ['label', 'urgent', 'priority', 'customer'],
  additionalProperties: false,
};
const MESSAGES = [
  { role: 'system', content: 'Triage the ticket.' },
  { role: 'user', content: [{ type: 'text', text: 'WIN A PRIZE NOW' }], name: 'ann' },
];
const BODY = {
  model: 'clef-nano',
  messages: MESSAGES,
  temperature: 0,
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'triage', strict: true, schema: SCHEMA },
  },
};

function response(answers: Record<string, unknown>): SystemOneResponse {
  // Hand-written answers, some deliberately malformed: typed loosely on purpose.
  return {
    model: 'clef-nano',
    answers,
    usage: { input_tokens: 99, output_tokens: 0 },
  } as SystemOneResponse;
}
const ANSWERS = {
  label: {
    type: 'choice',
    choice: 'spam',
    confidence: 0.7,
    probabilities: { spam: 0.7, ham: 0.3 },
  },
  urgent: { type: 'noul', noul: 0.25 },
  priority: {
    type: 'score',
    score: 2.9,
    confidence: 0.4,
    legend: { 0: '1', 1: '2', 2: '3', 3: '4', 4: '5' },
    probabilities: { 0: 0.05, 1: 0.1, 2: 0.15, 3: 0.4, 4: 0.3 },
  },
  'customer.tier': {
    type: 'choice',
    choice: 'gold',
    confidence: 0.6,
    probabilities: { free: 0.4, gold: 0.6 },
  },
  'customer.vip': { type: 'noul', noul: 0.5 },
};

describe('planChatDecision', () => {
  it('asks one question per leaf, messages as the state', () => {
    const plan = planChatDecision(BODY);
    const expected = m([
      ['model', 'clef-nano'],
      ['state', MESSAGES],
      [
        'questions',
        m([
          [
            'label',
            m([
              ['type', 'choice'],
              ['instructions', 'label: Is it spam?'],
              [
                'criteria',
                m([
                  ['spam', null],
                  ['ham', null],
                ]),
              ],
            ]),
          ],
          [
            'urgent',
            m([
              ['type', 'noul'],
              ['instructions', 'urgent'],
            ]),
          ],
          [
            'priority',
            m([
              ['type', 'score'],
              ['instructions', 'priority: Priority'],
              ['criteria', ['1', '2', '3', '4', '5']],
            ]),
          ],
          [
            'customer.tier',
            m([
              ['type', 'choice'],
              ['instructions', 'customer.tier'],
              [
                'criteria',
                m([
                  ['free', null],
                  ['gold', null],
                ]),
              ],
            ]),
          ],
          [
            'customer.vip',
            m([
              ['type', 'noul'],
              ['instructions', 'customer.vip: A VIP?'],
            ]),
          ],
        ]),
      ],
    ]);
    expect(ordered(plan.request)).toEqual(ordered(expected));
    const valid = validateRequest(plan.request, { models: ['clef-nano'] });
    expect(valid.questions.map((q) => q.id)).toEqual([
      'label',
      'urgent',
      'priority',
      'customer.tier',
      'customer.vip',
    ]);
  });

  it('gives generated ids to names Clef cannot use as ids', () => {
    const plan = planChatDecision({
      ...BODY,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'n',
          schema: {
            type: 'object',
            properties: { 'is spam?': { type: 'boolean' }, field_0: { type: 'boolean' } },
          },
        },
      },
    });
    const ids = [...(plan.request.get('questions') as Map<string, unknown>).keys()];
    expect(ids).toEqual(['field_0_1', 'field_0']);
    const first = (plan.request.get('questions') as Map<string, Map<string, unknown>>).get(
      'field_0_1',
    )!;
    expect(first.get('instructions')).toBe('is spam?');
  });

  it('reads exclusive bounds as the integers inside them', () => {
    const plan = planChatDecision({
      ...BODY,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'n',
          schema: {
            type: 'object',
            properties: { n: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 3.5 } },
          },
        },
      },
    });
    const q = (plan.request.get('questions') as Map<string, Map<string, unknown>>).get('n')!;
    expect(q.get('criteria')).toEqual(['1', '2', '3']);
  });
});

describe('buildChatCompletion', () => {
  it('writes the chosen values as JSON in schema order, with usage', () => {
    const plan = planChatDecision(BODY);
    const completion = buildChatCompletion(plan, response(ANSWERS), {
      id: 'chatcmpl-1',
      created: 1700000000,
    });
    expect(completion).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'clef-nano',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content:
              '{"label":"spam","urgent":false,"priority":4,"customer":{"tier":"gold","vip":true}}',
            refusal: null,
            annotations: [],
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 99,
        completion_tokens: 0,
        total_tokens: 99,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    });
  });

  it('keeps integer-like property names where the schema puts them', () => {
    const schemaText =
      '{"type":"object","properties":{"b":{"type":"boolean"},"1":{"type":"boolean"}}}';
    const body = parseRequestJson(
      `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":0,` +
        `"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":${schemaText}}}}`,
    );
    const plan = planChatDecision(body);
    const out = buildChatCompletion(
      plan,
      response({ b: { type: 'noul', noul: 0.9 }, 1: { type: 'noul', noul: 0.1 } }),
    );
    expect(out.choices[0]!.message.content).toBe('{"b":true,"1":false}');
    expect(out.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(Math.abs(out.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('picks the most probable level, the lowest on a tie', () => {
    const plan = planChatDecision({
      ...BODY,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'n',
          schema: {
            type: 'object',
            properties: { n: { type: 'integer', minimum: -1, maximum: 1 } },
          },
        },
      },
    });
    const level = (probabilities: Record<string, number>) =>
      buildChatCompletion(
        plan,
        response({ n: { type: 'score', score: 1, confidence: 0.4, legend: {}, probabilities } }),
      ).choices[0]!.message.content;
    expect(level({ 0: 0.2, 1: 0.4, 2: 0.4 })).toBe('{"n":0}');
    expect(level({ 0: 0.5, 1: 0.2, 2: 0.3 })).toBe('{"n":-1}');
  });

  it('is a 500 when the response does not fit the plan', () => {
    const plan = planChatDecision(BODY);
    for (const answers of [
      { ...ANSWERS, label: { ...ANSWERS.label, choice: 'eggs' } },
      { ...ANSWERS, urgent: { type: 'choice', choice: 'x' } },
      { label: ANSWERS.label },
    ]) {
      try {
        buildChatCompletion(plan, response(answers));
        throw new Error('accepted');
      } catch (e) {
        expect(isOpenAiError(e) && e.status).toBe(500);
      }
    }
  });
});

describe('refusals', () => {
  const withSchema = (schema: unknown) => ({
    ...BODY,
    response_format: { type: 'json_schema', json_schema: { name: 'n', schema } },
  });
  const props = (p: Record<string, unknown>) => withSchema({ type: 'object', properties: p });
  const S = 'response_format.json_schema.schema';
  const cases: Array<[string, unknown, string | null, string, boolean]> = [
    [
      'no response_format',
      { ...BODY, response_format: undefined },
      'response_format',
      'unsupported_value',
      true,
    ],
    [
      'json_object',
      { ...BODY, response_format: { type: 'json_object' } },
      'response_format.type',
      'unsupported_value',
      true,
    ],
    [
      'no schema',
      { ...BODY, response_format: { type: 'json_schema', json_schema: { name: 'n' } } },
      S,
      'unsupported_value',
      true,
    ],
    [
      'a free string',
      props({ summary: { type: 'string' } }),
      `${S}.properties.summary`,
      'decision_schema_required',
      true,
    ],
    [
      'a number',
      props({ p: { type: 'number', minimum: 0, maximum: 1 } }),
      `${S}.properties.p`,
      'decision_schema_required',
      true,
    ],
    [
      'an unbounded integer',
      props({ p: { type: 'integer', minimum: 0 } }),
      `${S}.properties.p`,
      'decision_schema_required',
      true,
    ],
    [
      'a wide integer range',
      props({ p: { type: 'integer', minimum: 0, maximum: 10 } }),
      `${S}.properties.p`,
      'decision_schema_required',
      true,
    ],
    [
      'an array',
      props({ tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } }),
      `${S}.properties.tags`,
      'decision_schema_required',
      true,
    ],
    [
      'a nullable enum',
      props({ e: { type: ['string', 'null'], enum: ['a', 'b', null] } }),
      `${S}.properties.e`,
      'decision_schema_required',
      true,
    ],
    [
      'a pattern',
      props({ e: { type: 'string', enum: ['a', 'b'], pattern: '^a$' } }),
      `${S}.properties.e`,
      'decision_schema_required',
      true,
    ],
    [
      'a one-value enum',
      props({ e: { type: 'string', enum: ['a'] } }),
      `${S}.properties.e.enum`,
      'decision_schema_required',
      true,
    ],
    [
      'a $ref',
      withSchema({ type: 'object', properties: { a: { $ref: '#/$defs/x' } } }),
      `${S}.properties.a`,
      'decision_schema_required',
      true,
    ],
    [
      'a root that is not an object',
      withSchema({ type: 'string', enum: ['a', 'b'] }),
      S,
      'decision_schema_required',
      true,
    ],
    [
      'an empty object',
      withSchema({ type: 'object', properties: {} }),
      S,
      'decision_schema_required',
      true,
    ],
    [
      'a required property that does not exist',
      withSchema({ type: 'object', properties: { a: { type: 'boolean' } }, required: ['a', 'b'] }),
      `${S}.required`,
      'decision_schema_required',
      true,
    ],
    [
      'no temperature',
      { ...BODY, temperature: undefined },
      'temperature',
      'unsupported_value',
      true,
    ],
    ['temperature 1', { ...BODY, temperature: 1 }, 'temperature', 'unsupported_value', true],
    ['n 2', { ...BODY, n: 2 }, 'n', 'unsupported_value', true],
    ['streaming', { ...BODY, stream: true }, 'stream', 'unsupported_value', true],
    [
      'tools',
      { ...BODY, tools: [{ type: 'function', function: { name: 'f' } }] },
      'tools',
      'unsupported_value',
      true,
    ],
    ['logprobs', { ...BODY, logprobs: true }, 'logprobs', 'unsupported_value', true],
    ['a stop sequence', { ...BODY, stop: ['\n'] }, 'stop', 'unsupported_value', true],
    [
      'an image',
      {
        ...BODY,
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] },
        ],
      },
      'messages[0].content[0]',
      'unsupported_value',
      true,
    ],
    [
      'a tool message',
      { ...BODY, messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }] },
      'messages[0]',
      'unsupported_value',
      true,
    ],
    [
      'assistant tool calls',
      { ...BODY, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c' }] }] },
      'messages[0].tool_calls',
      'unsupported_value',
      true,
    ],
    ['no messages', { ...BODY, messages: [] }, 'messages', 'array_below_min_length', false],
    ['an unknown member', { ...BODY, foo: 1 }, 'foo', 'unknown_parameter', false],
    [
      'a bad role',
      { ...BODY, messages: [{ role: 'robot', content: 'x' }] },
      'messages[0].role',
      'invalid_value',
      false,
    ],
  ];
  it.each(cases)('%s: 400 at its param', (_, body, param, code, decides) => {
    const e = refusal(body);
    expect(e.status).toBe(400);
    expect(e.body.error).toEqual({
      message: e.message,
      type: 'invalid_request_error',
      param,
      code,
    });
    expect(e.message.endsWith(DECIDES_NOTE)).toBe(decides);
  });

  it('lists every leaf that is not a decision', () => {
    const e = refusal(
      props({
        a: { type: 'string' },
        b: { type: 'boolean' },
        c: { type: 'object', properties: { d: { type: 'number' } } },
      }),
    );
    expect(e.problems.map((p) => p.param)).toEqual([
      `${S}.properties.a`,
      `${S}.properties.c.properties.d`,
    ]);
    expect(e.message).toContain('The request has 2 problems');
    expect(e.message).toContain('does not write text');
  });

  it('refuses more leaves than the model answers', () => {
    const many = Object.fromEntries(
      Array.from({ length: 65 }, (_, i) => [`f${i}`, { type: 'boolean' }]),
    );
    expect(refusal(props(many)).message).toContain('at most 64 decisions');
    const plan = planChatDecision(props(Object.fromEntries(Object.entries(many).slice(0, 64))));
    const questions = plan.request.get('questions') as Map<string, Map<string, unknown>>;
    expect([...questions.keys()]).toEqual(Array.from({ length: 64 }, (_, i) => `f${i}`));
    for (const [id, q] of questions) expect(q.get('type'), id).toBe('noul');
  });

  it('accepts members that change no decision, and answers an unserved model with 404', () => {
    // The same plan as the bare body's (which the first test checks member by member).
    expect(
      planChatDecision({
        ...BODY,
        seed: 1,
        top_p: 1,
        max_tokens: 5,
        user: 'u',
        store: false,
        n: 1,
        stream: false,
        tool_choice: 'none',
      }),
    ).toEqual(planChatDecision(BODY));
    const e = refusal(BODY, { models: ['clef-flash'] });
    expect([e.status, e.code]).toEqual([404, 'model_not_found']);
  });
});
