/**
 * The seeded fuzz generator for the OpenAI dialects: `generateOpenAiCase(seed, i, options)` gives
 * case i of run `seed`, an OpenAI Decisions body (`POST /v1/decisions`) or a Chat Completions
 * body (`POST /v1/chat/completions`): valid, not JSON, or valid with one or more mutations, each
 * of which docs/interop.md rules on (a 400 with a stated `code` at a stated `param`). The
 * expectation follows from how the case was built, never from running the code under test.
 */
import { breakText, invalidUtf8 } from './broken.js';
import { caseRng, type Rng } from './prng.js';

export type Dialect = 'decisions' | 'chat';

export type Leaf =
  | { key: string; kind: 'enum'; values: string[] }
  | { key: string; kind: 'boolean' }
  | { key: string; kind: 'integer'; min: number; max: number }
  | { key: string; kind: 'object'; fields: Leaf[] };

export interface DecisionAnswer {
  type: 'predicate' | 'choice' | 'score';
  name: string | null;
  /** choice: the typed values in order; score: the level labels. */
  values?: Array<string | boolean>;
  labels?: string[];
}

export type OpenAiExpectation =
  | { status: 200; dialect: 'decisions'; model: string; answers: DecisionAnswer[] }
  | { status: 200; dialect: 'chat'; model: string; fields: Leaf[] }
  /** An OpenAI error: `problems` found, the first at `param` with `code` (when known). */
  | { status: 400 | 404; openai: { code: string; param?: string | null; problems: number } }
  /** System One's 400 (a /v1/decisions body that is not JSON, or not an object). */
  | { status: 400; systemOne: 'not-json' | 'not-object' };

export interface OpenAiCase {
  kind: string;
  body: string | Uint8Array;
  expect: OpenAiExpectation;
}

export interface OpenAiGenerateOptions {
  dialect: Dialect;
  model?: string;
  /** Share of cases sent valid (default 0.2); the rest are broken. */
  validShare?: number;
  /** 'text' bodies are strings; 'http' ones may be bytes that are not UTF-8. */
  transport?: 'http' | 'text';
}

const TEXTS = [
  'I was charged twice.',
  'Where is my parcel?',
  'Zürich → 東京 ✓',
  'lone \udc80 surrogate',
  '{"not":"parsed"}',
  '<script>alert(1)</script>',
  'a'.repeat(200),
];
const NAMES = ['urgent', 'team', 'tone', 'q0', 'with space', 'ünï', 'x'.repeat(101), ''];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function distinct(n: number, make: () => string): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(make());
  return [...out];
}
const word = (rng: Rng) =>
  rng.pick(['alpha', 'beta', 'gamma', 'delta', 'é', '1', '"q"', 'true']) + rng.int(0, 99);

// ---- Decisions ------------------------------------------------------------------------------

interface Question {
  json: { [k: string]: Json };
  answer: DecisionAnswer;
}

function decisionQuestion(rng: Rng): Question {
  const type = rng.pick(['predicate', 'choice', 'score'] as const);
  const name = rng.chance(0.7) ? rng.pick(NAMES) : undefined;
  const json: { [k: string]: Json } = { type, instructions: rng.pick(TEXTS) };
  if (name !== undefined) json['name'] = name;
  const answer: DecisionAnswer = { type, name: name ?? null };
  if (type === 'choice') {
    const values: Array<string | boolean> = distinct(rng.int(2, 5), () => word(rng));
    if (rng.chance(0.3)) values.push(...(rng.chance(0.5) ? [true] : [true, false]));
    json['choices'] = values.map((value): Json =>
      rng.chance(0.3) ? { value, description: rng.pick(TEXTS) } : { value },
    );
    answer.values = values;
  } else if (type === 'score') {
    const labels = distinct(rng.int(2, 6), () => word(rng));
    json['levels'] = labels.map((label): Json =>
      rng.chance(0.3) ? { label, description: rng.pick(TEXTS) } : { label },
    );
    answer.labels = labels;
  }
  return { json, answer };
}

function decisionInput(rng: Rng): Json {
  if (rng.chance(0.5)) return rng.pick(TEXTS);
  return Array.from({ length: rng.int(1, 3) }, () =>
    rng.pick<() => Json>([
      () => ({ role: 'user', content: rng.pick(TEXTS) }),
      () => ({ role: 'system', content: [{ type: 'input_text', text: rng.pick(TEXTS) }] }),
      () => ({ role: 'user', content: [{ type: 'input_json', data: { order: 7, ok: false } }] }),
      () => ({ role: 'assistant', content: 'Noted.', type: 'message' }),
    ])(),
  );
}

interface Mutation {
  kind: string;
  /** Applies one problem to the body; returns its param and code (param undefined: not fixed). */
  apply(body: { [k: string]: Json }, questions: Question[]): { param?: string; code: string };
}

/** Each makes exactly one problem (so several make that many), at a param it can name. */
const DECISION_MUTATIONS: Mutation[] = [
  {
    kind: 'unknown-member',
    apply: (b) => ((b['temperature'] = 0), { param: 'temperature', code: 'unknown_parameter' }),
  },
  {
    kind: 'image-input',
    apply: (b) => {
      const input = Array.isArray(b['input']) ? b['input'] : [];
      input.push({
        role: 'user',
        content: [{ type: 'input_image', image_url: 'https://x/y.png' }],
      });
      b['input'] = input;
      return { param: `input[${input.length - 1}].content[0]`, code: 'unsupported_value' };
    },
  },
  {
    kind: 'tool-call',
    apply: (b) => {
      const input = Array.isArray(b['input']) ? b['input'] : [];
      input.push({ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' });
      b['input'] = input;
      return { param: `input[${input.length - 1}]`, code: 'unsupported_value' };
    },
  },
  {
    kind: 'duplicate-value',
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'choice', instructions: 'dup', choices: [{ value: 'a' }, { value: 'a' }] },
        answer: { type: 'choice', name: null },
      });
      return { param: `questions[${i}].choices[1].value`, code: 'invalid_value' };
    },
  },
  {
    kind: 'number-value',
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'choice', instructions: 'n', choices: [{ value: 'a' }, { value: 1 }] },
        answer: { type: 'choice', name: null },
      });
      return { param: `questions[${i}].choices[1].value`, code: 'invalid_type' };
    },
  },
  {
    kind: 'one-level',
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'score', instructions: 's', levels: [{ label: 'only' }] },
        answer: { type: 'score', name: null },
      });
      return { param: `questions[${i}].levels`, code: 'array_below_min_length' };
    },
  },
  {
    kind: 'bad-type',
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'ranking', instructions: 'r' },
        answer: { type: 'predicate', name: null },
      });
      return { param: `questions[${i}].type`, code: 'invalid_value' };
    },
  },
  {
    kind: 'empty-instructions',
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'predicate', instructions: '' },
        answer: { type: 'predicate', name: null },
      });
      return { param: `questions[${i}].instructions`, code: 'invalid_value' };
    },
  },
  {
    kind: 'refusal-answer',
    // A question Clef could refuse does not exist in the request shape: asking for one is unknown.
    apply: (_b, qs) => {
      const i = qs.length;
      qs.push({
        json: { type: 'predicate', instructions: 'p', allow_refusal: true },
        answer: { type: 'predicate', name: null },
      });
      return { param: `questions[${i}].allow_refusal`, code: 'unknown_parameter' };
    },
  },
];

function decisionsCase(rng: Rng, o: Required<Omit<OpenAiGenerateOptions, 'dialect'>>): OpenAiCase {
  const questions = Array.from({ length: rng.int(1, 4) }, () => decisionQuestion(rng));
  const body: { [k: string]: Json } = { model: o.model, input: decisionInput(rng) };
  const text = () => JSON.stringify({ ...body, questions: questions.map((q) => q.json) });
  const roll = rng.next();
  if (roll < o.validShare) {
    if (rng.chance(0.2)) body['prompt_cache_key'] = 'k';
    return {
      kind: 'valid',
      body: text(),
      expect: {
        status: 200,
        dialect: 'decisions',
        model: o.model,
        answers: questions.map((q) => q.answer),
      },
    };
  }
  if (roll < o.validShare + 0.1) {
    if (o.transport === 'http' && rng.chance(0.3)) {
      return {
        kind: 'non-json:utf8',
        body: invalidUtf8(rng, text()),
        expect: { status: 400, systemOne: 'not-json' },
      };
    }
    const broken = breakText(rng, text());
    return { kind: broken.kind, body: broken.text, expect: { status: 400, systemOne: 'not-json' } };
  }
  if (roll < o.validShare + 0.13) {
    return {
      kind: 'not-object',
      body: rng.pick(['[]', '1', '"x"', 'null', 'true']),
      expect: { status: 400, systemOne: 'not-object' },
    };
  }
  if (roll < o.validShare + 0.18) {
    body['model'] = rng.pick(['gpt-6-luna', 'clef-nope', '']);
    const code = body['model'] === '' ? 'invalid_value' : 'model_not_found';
    return {
      kind: 'model',
      body: text(),
      expect: {
        status: code === 'model_not_found' ? 404 : 400,
        openai: { code, param: 'model', problems: 1 },
      },
    };
  }
  if (roll < o.validShare + 0.23) {
    const many = Array.from({ length: 65 }, () => ({ type: 'predicate', instructions: 'p' }));
    return {
      kind: 'too-many-questions',
      body: JSON.stringify({ ...body, questions: many }),
      expect: {
        status: 400,
        openai: { code: 'array_above_max_length', param: 'questions', problems: 1 },
      },
    };
  }
  const count = rng.chance(0.25) ? rng.int(2, 4) : 1;
  const picked = distinct(count, () => rng.pick(DECISION_MUTATIONS).kind).map((k) =>
    DECISION_MUTATIONS.find((m) => m.kind === k)!,
  );
  // Input mutations first (the input is checked before the questions), in the order applied.
  picked.sort(
    (a, b) =>
      Number(!a.kind.match(/input|tool|member/)) - Number(!b.kind.match(/input|tool|member/)),
  );
  if (
    picked.some((m) => m.kind === 'image-input' || m.kind === 'tool-call') &&
    !Array.isArray(body['input'])
  ) {
    body['input'] = [];
  }
  const first = picked.map((m) => m.apply(body, questions))[0]!;
  // An unknown top-level member is reported before the input, so it comes first when there.
  const member = picked.find((m) => m.kind === 'unknown-member');
  const lead = member ? { param: 'temperature', code: 'unknown_parameter' } : first;
  return {
    kind: `mutation:${picked.map((m) => m.kind).join('+')}`,
    body: text(),
    expect: { status: 400, openai: { ...lead, problems: picked.length } },
  };
}

// ---- Chat Completions -------------------------------------------------------------------------

function leaf(rng: Rng, key: string, depth: number): { schema: Json; leaf: Leaf } {
  const kind =
    depth < 1 && rng.chance(0.15) ? 'object' : rng.pick(['enum', 'boolean', 'integer'] as const);
  if (kind === 'enum') {
    const values = distinct(rng.int(2, 5), () => word(rng));
    return { schema: { type: 'string', enum: values }, leaf: { key, kind, values } };
  }
  if (kind === 'boolean')
    return { schema: { type: 'boolean', description: 'Is it?' }, leaf: { key, kind } };
  if (kind === 'integer') {
    const min = rng.int(-3, 5);
    const max = min + rng.int(1, 9);
    return {
      schema: { type: 'integer', minimum: min, maximum: max },
      leaf: { key, kind, min, max },
    };
  }
  const inner = object(rng, depth + 1);
  return { schema: inner.schema, leaf: { key, kind: 'object', fields: inner.fields } };
}

function object(rng: Rng, depth: number): { schema: { [k: string]: Json }; fields: Leaf[] } {
  const keys = distinct(
    rng.int(1, 4),
    () => rng.pick(['label', 'urgent', 'tier', 'x', 'ünï', '1', 'b']) + rng.int(0, 9),
  );
  const built = keys.map((k) => leaf(rng, k, depth));
  const properties: { [k: string]: Json } = {};
  keys.forEach((k, i) => (properties[k] = built[i]!.schema));
  // The body is sent as JSON.stringify writes it: integer-like keys first. That is the order.
  const order = Object.keys(properties);
  return {
    schema: { type: 'object', properties, required: keys, additionalProperties: false },
    fields: order.map((k) => built[keys.indexOf(k)]!.leaf),
  };
}

const CHAT_REFUSALS: Array<
  [string, (b: { [k: string]: Json }) => { param: string; code: string }]
> = [
  ['stream', (b) => ((b['stream'] = true), { param: 'stream', code: 'unsupported_value' })],
  ['n', (b) => ((b['n'] = 2), { param: 'n', code: 'unsupported_value' })],
  [
    'tools',
    (b) => (
      (b['tools'] = [{ type: 'function', function: { name: 'f' } }]),
      { param: 'tools', code: 'unsupported_value' }
    ),
  ],
  [
    'temperature',
    (b) => ((b['temperature'] = 1), { param: 'temperature', code: 'unsupported_value' }),
  ],
  [
    'no-format',
    (b) => (delete b['response_format'], { param: 'response_format', code: 'unsupported_value' }),
  ],
  [
    'text-format',
    (b) => (
      (b['response_format'] = { type: 'text' }),
      { param: 'response_format.type', code: 'unsupported_value' }
    ),
  ],
  [
    'free-string',
    (b) => {
      type Format = { json_schema: { schema: { properties: { [k: string]: Json } } } };
      const schema = (b['response_format'] as unknown as Format).json_schema.schema;
      schema.properties = { ...schema.properties, note: { type: 'string' } };
      return {
        param: 'response_format.json_schema.schema.properties.note',
        code: 'decision_schema_required',
      };
    },
  ],
  [
    'image',
    (b) => {
      (b['messages'] as Json[]).unshift({
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }],
      });
      return { param: 'messages[0].content[0]', code: 'unsupported_value' };
    },
  ],
  [
    'tool-message',
    (b) => {
      (b['messages'] as Json[]).unshift({ role: 'tool', content: 'r', tool_call_id: 'c' });
      return { param: 'messages[0]', code: 'unsupported_value' };
    },
  ],
  ['unknown-member', (b) => ((b['best_of'] = 2), { param: 'best_of', code: 'unknown_parameter' })],
];

function chatCase(rng: Rng, o: Required<Omit<OpenAiGenerateOptions, 'dialect'>>): OpenAiCase {
  const { schema, fields } = object(rng, 0);
  const messages: Json[] = [{ role: 'user', content: rng.pick(TEXTS) }];
  if (rng.chance(0.3))
    messages.unshift({ role: 'system', content: [{ type: 'text', text: 'Triage.' }] });
  const body: { [k: string]: Json } = {
    model: o.model,
    messages,
    temperature: 0,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'decision', strict: true, schema },
    },
  };
  const roll = rng.next();
  if (roll < o.validShare) {
    if (rng.chance(0.3)) Object.assign(body, { seed: 7, max_tokens: 10, user: 'u' });
    return {
      kind: 'valid',
      body: JSON.stringify(body),
      expect: { status: 200, dialect: 'chat', model: o.model, fields },
    };
  }
  const invalidJson = {
    status: 400 as const,
    openai: { code: 'invalid_json', param: null, problems: 1 },
  };
  if (roll < o.validShare + 0.1) {
    if (o.transport === 'http' && rng.chance(0.3)) {
      return {
        kind: 'non-json:utf8',
        body: invalidUtf8(rng, JSON.stringify(body)),
        expect: invalidJson,
      };
    }
    const broken = breakText(rng, JSON.stringify(body));
    return { kind: broken.kind, body: broken.text, expect: invalidJson };
  }
  if (roll < o.validShare + 0.13) {
    return {
      kind: 'not-object',
      body: rng.pick(['[]', '1', '"x"', 'null', 'true']),
      expect: { status: 400, openai: { code: 'invalid_type', param: null, problems: 1 } },
    };
  }
  if (roll < o.validShare + 0.18) {
    body['model'] = 'gpt-6-luna';
    return {
      kind: 'model',
      body: JSON.stringify(body),
      expect: { status: 404, openai: { code: 'model_not_found', param: 'model', problems: 1 } },
    };
  }
  const [name, apply] = rng.pick(CHAT_REFUSALS);
  const problem = apply(body);
  return {
    kind: `refusal:${name}`,
    body: JSON.stringify(body),
    expect: { status: 400, openai: { ...problem, problems: 1 } },
  };
}

export function generateOpenAiCase(
  seed: number,
  index: number,
  options: OpenAiGenerateOptions,
): OpenAiCase {
  const rng = caseRng(seed, index);
  const o = {
    model: options.model ?? 'clef-tiny',
    validShare: options.validShare ?? 0.2,
    transport: options.transport ?? 'text',
  };
  return options.dialect === 'decisions' ? decisionsCase(rng, o) : chatCase(rng, o);
}
