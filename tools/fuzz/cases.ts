/**
 * The seeded fuzz generator: `generateCase(seed, i)` gives case i of run `seed`, a malformed or
 * hostile System One request body (or a valid one, so answers are checked too) with the answer
 * system-one.md prescribes for it. Each mutation is one the contract rules on, so the expected
 * status, error type and loc follow from how the case was built.
 */
import { breakText, invalidUtf8 } from './broken.js';
import {
  countIssue,
  issueAt,
  type Expectation,
  type ExpectedIssue,
  type FuzzCase,
} from './expect.js';
import { nested, num, obj, raw, writeJson, type Node, type Obj } from './json-text.js';
import { breakQuestion, firstQuestion, questionsOf, TOP, wrongOf, type Ctx } from './mutations.js';
import { caseRng } from './prng.js';
import {
  dropField,
  field,
  isSmall,
  randomDescription,
  validQuestion,
  validRequest,
  type ExpectedAnswer,
  type ValidRequestSpec,
} from './valid.js';

export interface GenerateOptions {
  /** Served model name (default clef-tiny); requests use it or `alias`. */
  model?: string;
  alias?: string;
  /**
   * 'http' bodies may be bytes (invalid UTF-8); 'text' bodies are always strings, for
   * parseRequestJson, and carry raw lone surrogates instead.
   */
  transport?: 'http' | 'text';
  /**
   * Every this many cases (at index k*n - 1) is a multi-megabyte body, and halfway between a
   * valid body just under 1 MiB; default 2,000.
   */
  hugeEvery?: number;
}

const valid = (spec: ValidRequestSpec, small = isSmall(spec)): Expectation => ({
  status: 200,
  model: spec.model,
  answers: spec.answers,
  small,
});
const invalid = (...issues: ExpectedIssue[]): Expectation => ({ status: 422, issues });
const notJson: Expectation = { status: 400, errorType: 'api_usage_error', reason: 'not-json' };

type Built = { kind: string; body: Node | string | Uint8Array; expect: Expectation };

function wrongTop(c: Ctx): Built {
  const spec = validRequest(c.rng, { model: c.model });
  const what = c.rng.pick(['model', 'state', 'questions', 'body', 'missing-questions']);
  if (what === 'body') {
    // As text: a bare string node would otherwise be taken for raw body text.
    const body = writeJson(wrongOf(c.rng, ['number', 'bool', 'null', 'string', 'array']));
    return {
      kind: 'wrong-type:body',
      body,
      expect: { status: 400, errorType: 'api_usage_error', reason: 'not-object' },
    };
  }
  if (what === 'questions') {
    spec.body.obj[2]![1] = wrongOf(c.rng, ['number', 'bool', 'null', 'string', 'array']);
    return {
      kind: 'wrong-type:questions',
      body: spec.body,
      expect: invalid(issueAt(['body', 'questions'], 'dict_type')),
    };
  }
  if (what === 'missing-questions') {
    dropField(spec.body, 'questions');
    return {
      kind: 'missing:questions',
      body: spec.body,
      expect: invalid(issueAt(['body', 'questions'], 'missing')),
    };
  }
  return { kind: `wrong-type:${what}`, body: spec.body, expect: invalid(TOP[what]!(c, spec.body)) };
}

function multi(c: Ctx): Built {
  const spec = validRequest(c.rng, { model: c.model });
  // Not 'missing': it could drop the field another mutation just broke.
  const names = ['model', 'state', 'extra'].filter(() => c.rng.chance(0.6));
  const issues = names.map((n) => TOP[n]!(c, spec.body));
  if (issues.length < 2 || c.rng.chance(0.5)) issues.push(breakQuestion(c, spec).issue);
  return { kind: 'multi', body: spec.body, expect: invalid(...issues) };
}

function badId(c: Ctx): Built {
  const spec = validRequest(c.rng, { model: c.model });
  const [id, type] = c.rng.pick<[string, string]>([
    ['', 'string_too_short'],
    ['a'.repeat(101), 'string_too_long'],
    ['é'.repeat(101), 'string_too_long'], // 101 characters, pydantic counts code points
    ['é'.repeat(100), 'string_pattern_mismatch'], // right length, outside the alphabet
    ['😀'.repeat(60), 'string_pattern_mismatch'], // 120 UTF-16 units but 60 characters
    ['has space', 'string_pattern_mismatch'],
    ['a/b', 'string_pattern_mismatch'],
    ['tab\t', 'string_pattern_mismatch'],
    ['\ud800', 'string_pattern_mismatch'],
    ['q\u0000', 'string_pattern_mismatch'],
    ['x'.repeat(100), 'ok'],
  ]);
  const entry = firstQuestion(spec.body);
  if (questionsOf(spec.body).obj.some(([k]) => k === id)) return wrongTop(c);
  entry[0] = id;
  spec.answers[0]!.id = id;
  const expect =
    type === 'ok' ? valid(spec, false) : invalid(issueAt(['body', 'questions', id], type));
  return { kind: `question-id:${type}`, body: spec.body, expect };
}

function counts(c: Ctx): Built {
  const { rng } = c;
  const what = rng.pick(['questions', 'options', 'levels']);
  if (what === 'questions') {
    const n = rng.pick([0, 1, 63, 64, 65, 100]);
    const spec = validRequest(rng, { model: c.model, questions: Math.max(n, 1) });
    if (n === 0) questionsOf(spec.body).obj = [];
    const ok = n >= 1 && n <= 64;
    const expect = ok
      ? valid(spec, n <= 1 && isSmall(spec))
      : invalid(countIssue(['body', 'questions'], 'Dictionary', n === 0 ? 1 : 64, n));
    return { kind: `count:questions-${n}`, body: spec.body, expect };
  }
  const type = what === 'options' ? 'choice' : 'score';
  const n =
    type === 'choice'
      ? rng.pick([0, 1, 2, 3, 254, 255, 256, 300])
      : rng.pick([0, 1, 2, 9, 10, 11, 50]);
  const spec = validRequest(rng, { model: c.model, questions: 1 });
  const entry = firstQuestion(spec.body);
  const built = validQuestion(rng, entry[0], type, n);
  entry[1] = built.node;
  spec.answers[0] = built.answer;
  const [min, max] = type === 'choice' ? [2, 255] : [2, 10];
  const loc = ['body', 'questions', entry[0], 'criteria'];
  const container = type === 'choice' ? 'Dictionary' : 'List';
  const expect =
    n >= min && n <= max
      ? valid(spec, n <= 5 && isSmall(spec))
      : invalid(countIssue(loc, container, n < min ? min : max, n));
  return { kind: `count:${what}-${n}`, body: spec.body, expect };
}

/** Duplicate keys: json.loads keeps the first position and the last value. */
function duplicates(c: Ctx): Built {
  const { rng } = c;
  const spec = validRequest(rng, { model: c.model, questions: 2 });
  const way = rng.int(0, 3);
  if (way === 0) {
    spec.body.obj.unshift(['model', num('1')]); // the later, valid value wins
    return { kind: 'duplicate:model-bad-then-good', body: spec.body, expect: valid(spec) };
  }
  if (way === 1) {
    spec.body.obj.push(['model', num('1')]);
    return {
      kind: 'duplicate:model-good-then-bad',
      body: spec.body,
      expect: invalid(issueAt(['body', 'model'], 'string_type')),
    };
  }
  if (way === 2) {
    const questions = questionsOf(spec.body);
    const [firstId] = questions.obj[0]!;
    const again = validQuestion(rng, firstId, rng.pick(['noul', 'choice', 'score']));
    questions.obj.push([firstId, again.node]);
    spec.answers[0] = again.answer; // first place, last value
    return { kind: 'duplicate:question-id', body: spec.body, expect: valid(spec) };
  }
  const q = validQuestion(rng, 'pick', 'choice', 2);
  const criteria = field(q.node, 'criteria') as Obj;
  const [a] = criteria.obj[0]!;
  const repeats = rng.int(1, 3);
  for (let i = 0; i < repeats; i++) criteria.obj.push([a, randomDescription(rng)]);
  if (rng.chance(0.5)) {
    criteria.obj = criteria.obj.filter(([k]) => k === a); // only one distinct option left
    const onlyOne = invalid(
      countIssue(['body', 'questions', 'pick', 'criteria'], 'Dictionary', 2, 1),
    );
    const body = obj([
      ['model', c.model],
      ['state', 'x'],
      ['questions', obj([['pick', q.node]])],
    ]);
    return { kind: 'duplicate:option-leaves-one', body, expect: onlyOne };
  }
  const body = obj([
    ['model', c.model],
    ['state', 'x'],
    ['questions', obj([['pick', q.node]])],
  ]);
  const answers: ExpectedAnswer[] = [q.answer];
  return {
    kind: 'duplicate:option',
    body,
    expect: { status: 200, model: c.model, answers, small: true },
  };
}

function unknownModel(c: Ctx): Built {
  const name = c.rng.pick([
    `${c.model}2`,
    c.model.toUpperCase(),
    '',
    ` ${c.model}`,
    'clef-flash-9b',
    '\ud800',
    '../models',
    'a'.repeat(300),
  ]);
  const spec = validRequest(c.rng, { model: name });
  return {
    kind: 'unknown-model',
    body: spec.body,
    expect: {
      status: 400,
      errorType: 'api_usage_error',
      reason: 'unknown-model',
      message: `Unknown model: ${name}`,
    },
  };
}

const EDGE_NUMBERS = [
  '0',
  '-0',
  '-0.0',
  '1.0',
  '1E+2',
  '5e-324',
  '1e-400',
  '1e308',
  '1.7976931348623157e308',
  '1e309',
  '-1e400',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.1',
  '1e21',
];

/** Valid requests that stress the edges: numbers, lone surrogates, aliases, deep and wide states. */
function validEdge(c: Ctx): Built {
  const { rng } = c;
  const way = rng.pick(['plain', 'plain', 'alias', 'numbers', 'surrogates', 'deep', 'wide']);
  let state: Node | undefined;
  if (way === 'numbers')
    state = obj(
      EDGE_NUMBERS.filter(() => rng.chance(0.4)).map((n, i): [string, Node] => [`n${i}`, num(n)]),
    );
  if (way === 'surrogates') {
    // Escaped lone surrogates are JSON (json.loads and JSON.parse keep them); raw ones can only
    // travel in text (over HTTP, UTF-8 cannot carry them).
    state =
      c.transport === 'text' && rng.chance(0.5)
        ? raw('"raw \ud800 and \udfff"')
        : rng.pick(['\ud800', 'a\udc00b', '\udbff\ud800']);
  }
  if (way === 'deep') state = nested(rng.pick([1, 10, 100, 400, 510, 511])); // body depth ≤ 512
  if (way === 'wide')
    state = rng.chance(0.5)
      ? Array.from({ length: rng.int(100, 1000) }, (_, i) => num(String(i)))
      : 'long text '.repeat(rng.int(100, 3000)); // near-cap bodies: nearCap()
  const model = way === 'alias' ? c.alias : c.model;
  const spec = validRequest(rng, { model, ...(state !== undefined ? { state } : {}) });
  if (way === 'surrogates' && rng.chance(0.5)) {
    // A lone surrogate as a choice option: its probability must come back under that same key.
    const entry = firstQuestion(spec.body);
    const built = validQuestion(rng, entry[0], 'choice', 2);
    (field(built.node, 'criteria') as Obj).obj[0]![0] = '\udc80';
    built.answer.options![0] = '\udc80';
    entry[1] = built.node;
    spec.answers[0] = built.answer;
  }
  return {
    kind: `valid:${way}`,
    body: spec.body,
    expect: valid(spec, way === 'deep' || way === 'wide' ? false : isSmall(spec)),
  };
}

function megabytes(c: Ctx): Built {
  const size = c.rng.int(1_500_000, 4_000_000);
  if (c.rng.chance(0.3)) return { kind: 'huge:not-json', body: '['.repeat(size), expect: notJson };
  const spec = validRequest(c.rng, { model: c.model, state: 'x'.repeat(size) });
  return { kind: 'huge:valid', body: spec.body, expect: valid(spec, false) };
}

/** A valid body of 0.9 to 1 MB: just under the server's default 1 MiB cap, so it is decided. */
function nearCap(c: Ctx): Built {
  const spec = validRequest(c.rng, { model: c.model, state: '' });
  const room = c.rng.int(900_000, 1_000_000) - writeJson(spec.body).length;
  spec.body.obj[1]![1] = 'word '.repeat(Math.floor(room / 5));
  return { kind: 'huge:near-cap', body: spec.body, expect: valid(spec, false) };
}

function nonJson(c: Ctx): Built {
  const text = writeJson(validRequest(c.rng, { model: c.model }).body);
  if (c.transport === 'http' && c.rng.chance(0.25))
    return { kind: 'non-json:invalid-utf8', body: invalidUtf8(c.rng, text), expect: notJson };
  const broken = breakText(c.rng, text);
  return { kind: broken.kind, body: broken.text, expect: notJson };
}

const KINDS: Array<[number, (c: Ctx) => Built]> = [
  [12, validEdge],
  [14, wrongTop],
  [
    18,
    (c) => {
      const spec = validRequest(c.rng, { model: c.model });
      const { kind, issue } = breakQuestion(c, spec);
      return { kind, body: spec.body, expect: invalid(issue) };
    },
  ],
  [
    6,
    (c) => {
      const spec = validRequest(c.rng, { model: c.model });
      const name = c.rng.pick(['extra', 'missing']);
      return {
        kind: name === 'extra' ? 'unknown-field:top' : 'missing:top',
        body: spec.body,
        expect: invalid(TOP[name]!(c, spec.body)),
      };
    },
  ],
  [7, badId],
  [8, counts],
  [7, duplicates],
  [4, unknownModel],
  [16, nonJson],
  [8, multi],
];
const TOTAL_WEIGHT = KINDS.reduce((a, [w]) => a + w, 0);

/** Case `index` of run `seed`: the same pair always gives the same case. */
export function generateCase(seed: number, index: number, options: GenerateOptions = {}): FuzzCase {
  const rng = caseRng(seed, index);
  const c: Ctx = {
    rng,
    model: options.model ?? 'clef-tiny',
    alias: options.alias ?? 'clef-tiny-alias',
    transport: options.transport ?? 'http',
  };
  const hugeEvery = options.hugeEvery ?? 2000;
  let built: Built;
  if (index % hugeEvery === hugeEvery - 1) built = megabytes(c);
  else if (index % hugeEvery === Math.floor(hugeEvery / 2) - 1) built = nearCap(c);
  else {
    let roll = rng.next() * TOTAL_WEIGHT;
    const pick = KINDS.find(([w]) => (roll -= w) < 0) ?? KINDS[0]!;
    built = pick[1](c);
  }
  const body =
    typeof built.body === 'string' || built.body instanceof Uint8Array
      ? built.body
      : writeJson(built.body);
  return { kind: built.kind, body, expect: built.expect };
}
