import { describe, expect, it, vi } from 'vitest';
import { encodeRequest, type TextTokenizer } from '../../../src/clef/prompt.js';
import { buildResponse, serializeResponse, softmaxF32 } from '../../../src/protocol/answers.js';
import { SystemOneError } from '../../../src/protocol/errors.js';
import { pythonRound } from '../../../src/protocol/round.js';
import type {
  ChoiceAnswer,
  JsonValue,
  NoulAnswer,
  ScoreAnswer,
  ValidQuestion,
  ValidRequest,
} from '../../../src/protocol/types.js';

// Count the calls into pythonRound while keeping its behaviour.
vi.mock('../../../src/protocol/round.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/protocol/round.js')>();
  return { ...original, pythonRound: vi.fn(original.pythonRound) };
});

/** One token per code point. */
const tokenizer: TextTokenizer = { encode: (text) => [...text].map((c) => c.codePointAt(0)!) };

function question(
  id: string,
  type: ValidQuestion['type'],
  criteria: Array<[string, JsonValue]>,
): ValidQuestion {
  return { id, type, instructions: undefined, criteria };
}

function request(...questions: ValidQuestion[]): ValidRequest {
  return { model: 'clef-flash', state: 'the state', questions };
}

function encode(req: ValidRequest) {
  return encodeRequest(tokenizer, req, { maxTokens: 1_000_000 });
}

/** Logits whose softmax is (close to) the given probabilities. */
const logitsFor = (ps: number[]) => ps.map(Math.log);

/** Float64 softmax of the float32-rounded logits: the independent reference. */
function softmax64(logits: number[]): number[] {
  const x = logits.map(Math.fround);
  const max = Math.max(...x);
  const e = x.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** Deterministic pseudo-random numbers (LCG), so failures reproduce. */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('softmaxF32', () => {
  it('is within 1e-6 of a float64 softmax (random rows, 2 to 255 options)', () => {
    const rand = lcg(7);
    let worst = 0;
    for (let row = 0; row < 200; row++) {
      const n = 2 + Math.floor(rand() * 254);
      const logits = Array.from({ length: n }, () => (rand() - 0.5) * 40);
      const p = softmaxF32(logits);
      const ref = softmax64(logits);
      expect(p).toBeInstanceOf(Float32Array);
      worst = Math.max(worst, ...ref.map((r, i) => Math.abs((p[i] as number) - r)));
    }
    expect(worst).toBeLessThanOrEqual(1e-6);
  });

  it('is stable for large logits (subtracts the max)', () => {
    const logits = [1000, 999, -1000, 1000];
    const p = softmaxF32(logits);
    const ref = softmax64(logits);
    ref.forEach((r, i) => expect(Math.abs((p[i] as number) - r)).toBeLessThanOrEqual(1e-6));
    expect(p[0]).toBe(p[3]);
  });

  it('gives exact halves for equal logits', () => {
    expect([...softmaxF32([3.25, 3.25])]).toEqual([0.5, 0.5]);
  });
});

describe('buildResponse and serializeResponse', () => {
  // Integer-like ids and option names in an order a JS object would not keep.
  const orderRequest = request(
    question('b', 'choice', [
      ['b', 'bee'],
      ['10', null],
      ['a', 'ay'],
      ['2', 'two'],
    ]),
    question('2', 'noul', []),
    question('1', 'score', [
      ['0', 'low'],
      ['1', null],
      [
        '2',
        new Map<string, JsonValue>([
          ['z', 1],
          ['a', [true, null, { kind: 'py-number', lexeme: '1.0', isInt: false }]],
        ]),
      ],
    ]),
  );

  function orderResponse() {
    const encoded = encode(orderRequest);
    // Encoded option order: choice sorted ("10","2","a","b"), noul true/false, score levels.
    expect(encoded.questions.map((q) => q.optionIds)).toEqual([
      ['10', '2', 'a', 'b'],
      ['true', 'false'],
      ['0', '1', '2'],
    ]);
    const logits = [logitsFor([0.1, 0.2, 0.3, 0.4]), [Math.log(3), 0], logitsFor([0.2, 0.3, 0.5])];
    return { encoded, response: buildResponse(orderRequest, encoded, logits, 'clef-flash') };
  }

  it('writes the exact body: question order, criteria order, Python floats, legend echo', () => {
    const { encoded, response } = orderResponse();
    const n = encoded.inputIds.length;
    expect(serializeResponse(orderRequest, response)).toBe(
      '{"model":"clef-flash","answers":{' +
        '"b":{"type":"choice","choice":"b","confidence":0.4,' +
        '"probabilities":{"b":0.4,"10":0.1,"a":0.3,"2":0.2}},' +
        '"2":{"type":"noul","noul":0.75},' +
        '"1":{"type":"score","score":1.3,"confidence":0.5,' +
        '"legend":{"0":"low","1":null,"2":{"z":1,"a":[true,null,1.0]}},' +
        '"probabilities":{"0":0.2,"1":0.3,"2":0.5}}},' +
        `"usage":{"input_tokens":${n},"output_tokens":0}}`,
    );
  });

  it('builds the answers as objects with the same values', () => {
    const { encoded, response } = orderResponse();
    expect(response.model).toBe('clef-flash');
    expect(response.usage).toEqual({ input_tokens: encoded.inputIds.length, output_tokens: 0 });
    expect('truncated_state_tokens' in response.usage).toBe(false);
    const choice = response.answers['b'] as ChoiceAnswer;
    expect(Object.keys(choice)).toEqual(['type', 'choice', 'confidence', 'probabilities']);
    expect(choice).toEqual({
      type: 'choice',
      choice: 'b',
      confidence: 0.4,
      probabilities: { b: 0.4, '10': 0.1, a: 0.3, '2': 0.2 },
    });
    expect(response.answers['2']).toEqual({ type: 'noul', noul: 0.75 });
    const score = response.answers['1'] as ScoreAnswer;
    expect(Object.keys(score)).toEqual(['type', 'score', 'confidence', 'legend', 'probabilities']);
    expect(score.score).toBe(1.3);
    expect(score.confidence).toBe(0.5);
    // The legend holds the descriptions as given (same objects, not copies or renderings).
    expect(score.legend['2']).toBe(orderRequest.questions[2]!.criteria[2]![1]);
    expect(score.legend['1']).toBeNull();
  });

  it('rounds every number with pythonRound(x, 4)', () => {
    const spy = vi.mocked(pythonRound);
    spy.mockClear();
    orderResponse();
    // choice: confidence + 4 probabilities; noul: 1; score: score + confidence + 3 = 11.
    expect(spy).toHaveBeenCalledTimes(11);
    for (const call of spy.mock.calls) expect(call[1]).toBe(4);
  });

  it('rounds to 4 decimals, and writes 1.0 and 0.0 as Python does', () => {
    const req = request(
      question('n', 'noul', []),
      question('c', 'choice', [
        ['x', null],
        ['y', null],
      ]),
    );
    // p_true = 1/(1+e^-2) = 0.8807970779778823 → 0.8808
    const response = buildResponse(
      req,
      encode(req),
      [
        [2, 0],
        [0, -100],
      ],
      'm',
    );
    expect((response.answers['n'] as NoulAnswer).noul).toBe(0.8808);
    expect(serializeResponse(req, response)).toContain(
      '"c":{"type":"choice","choice":"x","confidence":1.0,"probabilities":{"x":1.0,"y":0.0}}',
    );
  });

  it('score: expectation and confidence over the levels', () => {
    const req = request(
      question('s', 'score', [
        ['0', 'a'],
        ['1', 'b'],
        ['2', 'c'],
        ['3', 'd'],
      ]),
    );
    // p = [0.1, 0.2, 0.3, 0.4] → score 0*0.1 + 1*0.2 + 2*0.3 + 3*0.4 = 2.0, confidence 0.4
    const response = buildResponse(req, encode(req), [logitsFor([0.1, 0.2, 0.3, 0.4])], 'm');
    expect(serializeResponse(req, response)).toContain('"score":2.0,"confidence":0.4,');
  });
});

describe('ties', () => {
  it('picks the first option in request order, not sorted order', () => {
    const req = request(
      question('c', 'choice', [
        ['z', null],
        ['m', null],
        ['a', null],
      ]),
    );
    const encoded = encode(req);
    expect(encoded.questions[0]!.optionIds).toEqual(['a', 'm', 'z']);
    const allEqual = buildResponse(req, encoded, [[0, 0, 0]], 'm');
    expect((allEqual.answers['c'] as ChoiceAnswer).choice).toBe('z');
    // "a" and "m" tie on top; "m" comes first in the request.
    const twoTop = buildResponse(req, encoded, [[1, 1, 0]], 'm');
    const answer = twoTop.answers['c'] as ChoiceAnswer;
    expect(answer.choice).toBe('m');
    // e/(2e+1) = 0.42231879825... → 0.4223
    expect(answer.confidence).toBe(0.4223);
  });

  it('compares unrounded probabilities', () => {
    const req = request(
      question('c', 'choice', [
        ['first', null],
        ['second', null],
      ]),
    );
    // Both round to 0.5 but "second" is larger before rounding.
    const response = buildResponse(req, encode(req), [[0, 1e-5]], 'm');
    const answer = response.answers['c'] as ChoiceAnswer;
    expect(answer.choice).toBe('second');
    expect(answer.probabilities).toEqual({ first: 0.5, second: 0.5 });
  });
});

describe('usage and odd ids', () => {
  it('reports truncated state tokens only when the state was cut', () => {
    const req = { ...request(question('n', 'noul', [])), state: 'x'.repeat(50) };
    const full = encode(req).inputIds.length;
    const encoded = encodeRequest(tokenizer, req, { maxTokens: full - 5, truncateState: true });
    const response = buildResponse(req, encoded, [[0, 0]], 'm');
    expect(response.usage).toEqual({
      input_tokens: full - 5,
      output_tokens: 0,
      truncated_state_tokens: 5,
    });
    expect(serializeResponse(req, response)).toContain(
      `"usage":{"input_tokens":${full - 5},"output_tokens":0,"truncated_state_tokens":5}}`,
    );
  });

  it('keeps an id such as __proto__ as plain data', () => {
    const req = request(question('__proto__', 'noul', []));
    const response = buildResponse(req, encode(req), [[0, 0]], 'm');
    expect(Object.prototype.hasOwnProperty.call(response.answers, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(response.answers)).toBe(Object.prototype);
    expect(serializeResponse(req, response)).toContain(
      '"answers":{"__proto__":{"type":"noul","noul":0.5}}',
    );
  });

  it('refuses logits that do not match the options, or are not finite (internal_error)', () => {
    const req = request(question('n', 'noul', []));
    const encoded = encode(req);
    for (const logits of [[[0, 0, 0]], [[NaN, 0]], []]) {
      let error: unknown;
      try {
        buildResponse(req, encoded, logits, 'm');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SystemOneError);
      expect((error as SystemOneError).status).toBe(500);
      expect((error as SystemOneError).code).toBe('internal_error');
    }
  });
});
