import { describe, expect, it } from 'vitest';
import {
  encodeRequest,
  PROMPT_PREFIX,
  SCHEMA_HEADER,
  type EncodedRequest,
  type TextTokenizer,
} from '../../../src/clef/prompt.js';
import { SystemOneError } from '../../../src/protocol/errors.js';
import type { JsonValue, ValidQuestion, ValidRequest } from '../../../src/protocol/types.js';

// ---------------------------------------------------------------------------------------------
// Toy tokenizers. Ids below 0x110000 are code points; vocabulary words get ids above that.

/** Greedy longest match over `vocab`, falling back to one token per code point. */
class GreedyTokenizer implements TextTokenizer {
  private readonly words: string[];
  private readonly idOf = new Map<string, number>();
  private readonly textOf = new Map<number, string>();
  calls: string[] = [];

  constructor(vocab: string[]) {
    this.words = [...vocab].sort((a, b) => b.length - a.length);
    vocab.forEach((word, i) => {
      this.idOf.set(word, 0x110000 + i);
      this.textOf.set(0x110000 + i, word);
    });
  }

  encode(text: string): number[] {
    this.calls.push(text);
    const ids: number[] = [];
    let i = 0;
    outer: while (i < text.length) {
      for (const word of this.words) {
        if (text.startsWith(word, i)) {
          ids.push(this.idOf.get(word)!);
          i += word.length;
          continue outer;
        }
      }
      const cp = text.codePointAt(i)!;
      ids.push(cp);
      i += cp > 0xffff ? 2 : 1;
    }
    return ids;
  }

  decode(ids: number[]): string {
    return ids.map((id) => this.textOf.get(id) ?? String.fromCodePoint(id)).join('');
  }
}

/** One token per code point: token counts equal code point counts, so lengths are checkable. */
const charTokenizer = () => new GreedyTokenizer([]);

/** Words inside pieces, so that multi-token pieces occur. */
const PLAIN_VOCAB = ['<|im_start|>', '<|im_end|>', 'OPTION', 'FIELD', 'option_id', 'description'];

/**
 * Words that straddle piece boundaries (prefix|state, state|schema, header|instruction,
 * label|semantics, semantics|newline, newline|END FIELD): tokenizing the joined prompt merges
 * across them, tokenizing piece by piece cannot.
 */
const MERGING_VOCAB = [
  ...PLAIN_VOCAB,
  'STATE:\n{',
  '}\n\nSCHEMA',
  ': q1',
  ': {"',
  '"}\nEND',
  '}\nOPTION',
  '\nEND FIELD\n\nFIELD',
  'one\nALLOWED',
];

// ---------------------------------------------------------------------------------------------
// A hand-written example: the expected prompt is written from clef-recipe.md §2, piece by piece.

function question(
  id: string,
  type: ValidQuestion['type'],
  criteria: Array<[string, JsonValue]>,
  instructions?: JsonValue,
): ValidQuestion {
  return { id, type, instructions, criteria };
}

const example: ValidRequest = {
  model: 'clef-flash',
  state: { b: 1, a: 'x' },
  questions: [
    question('q1', 'noul', [['false', 'Nope.']]),
    question(
      'pick',
      'choice',
      [
        ['zeta', 'last'],
        ['10', null],
        ['alpha', { y: 1, x: [true] }],
      ],
      'Pick one',
    ),
    question(
      'rate',
      'score',
      [
        ['0', 'bad'],
        ['1', null],
        ['2', 'good'],
      ],
      { scale: '0-2' },
    ),
  ],
};

const PREFIX_TEXT =
  "<|im_start|>system\nRead the complete state and schema. Decide every field jointly. Each answer must be exactly one of that field's allowed options.<|im_end|>\n<|im_start|>user\nSTATE:\n";
const SUFFIX_TEXT =
  '\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nJOINT SCHEMA DECISIONS:';
const TRUE_DEFAULT = 'The proposition is true or the answer is yes.';

/** Each piece the recipe tokenizes on its own, in order. */
const examplePieces = [
  PREFIX_TEXT,
  '{"a":"x","b":1}',
  '\n\nSCHEMA FIELDS:\n',
  '\nFIELD 1\nID: q1\nTYPE: noul\nINSTRUCTION: ',
  'q1',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: ',
  `{"description":"${TRUE_DEFAULT}","option_id":"true"}`,
  '\n',
  'OPTION 2: ',
  '{"description":"Nope.","option_id":"false"}',
  '\n',
  'END FIELD\n',
  '\nFIELD 2\nID: pick\nTYPE: choice\nINSTRUCTION: ',
  'Pick one',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: ',
  '{"option_id":"10"}',
  '\n',
  'OPTION 2: ',
  '{"description":{"x":[true],"y":1},"option_id":"alpha"}',
  '\n',
  'OPTION 3: ',
  '{"description":"last","option_id":"zeta"}',
  '\n',
  'END FIELD\n',
  '\nFIELD 3\nID: rate\nTYPE: score\nINSTRUCTION: ',
  '{"scale":"0-2"}',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: ',
  '{"description":"bad","option_id":"0"}',
  '\n',
  'OPTION 2: ',
  '{"option_id":"1"}',
  '\n',
  'OPTION 3: ',
  '{"description":"good","option_id":"2"}',
  '\n',
  'END FIELD\n',
  SUFFIX_TEXT,
];

/** What each question span and option span must cover in the example. */
const exampleSpans = [
  {
    instruction: 'q1',
    options: [
      `{"description":"${TRUE_DEFAULT}","option_id":"true"}`,
      '{"description":"Nope.","option_id":"false"}',
    ],
  },
  {
    instruction: 'Pick one',
    options: [
      '{"option_id":"10"}',
      '{"description":{"x":[true],"y":1},"option_id":"alpha"}',
      '{"description":"last","option_id":"zeta"}',
    ],
  },
  {
    instruction: '{"scale":"0-2"}',
    options: [
      '{"description":"bad","option_id":"0"}',
      '{"option_id":"1"}',
      '{"description":"good","option_id":"2"}',
    ],
  },
];

const codePoints = (s: string) => [...s].length;
const BIG = 1_000_000;

function decodeSpan(tok: GreedyTokenizer, encoded: EncodedRequest, [s, e]: [number, number]) {
  return tok.decode(encoded.inputIds.slice(s, e));
}

describe('encodeRequest: the hand-written example', () => {
  it('produces exactly the recipe text', () => {
    const tok = charTokenizer();
    const encoded = encodeRequest(tok, example, { maxTokens: BIG });
    expect(PROMPT_PREFIX).toBe(PREFIX_TEXT);
    expect(tok.decode(encoded.inputIds)).toBe(examplePieces.join(''));
    expect(encoded.inputIds.length).toBe(codePoints(examplePieces.join('')));
    expect(encoded.prefixTokens).toBe(codePoints(PREFIX_TEXT));
    expect(encoded.stateTokens).toBe(codePoints('{"a":"x","b":1}'));
    expect(encoded.stateEnd).toBe(codePoints(PREFIX_TEXT + '{"a":"x","b":1}'));
    expect(encoded.truncatedStateTokens).toBe(0);
    expect(encoded.questions.map((q) => [q.id, q.type, q.typeId])).toEqual([
      ['q1', 'noul', 0],
      ['pick', 'choice', 1],
      ['rate', 'score', 2],
    ]);
    expect(encoded.questions.map((q) => q.optionIds)).toEqual([
      ['true', 'false'],
      ['10', 'alpha', 'zeta'],
      ['0', '1', '2'],
    ]);
  });

  for (const [name, vocab] of [
    ['plain', PLAIN_VOCAB],
    ['merging', MERGING_VOCAB],
  ] as const) {
    it(`tokenizes every piece on its own (${name} vocabulary)`, () => {
      const tok = new GreedyTokenizer(vocab);
      const encoded = encodeRequest(tok, example, { maxTokens: BIG });
      const piecewise = examplePieces.flatMap((piece) => tok.encode(piece));
      expect(encoded.inputIds).toEqual(piecewise);
      expect(tok.decode(encoded.inputIds)).toBe(examplePieces.join(''));
      if (name === 'merging') {
        // The joint tokenization really differs, so the equality above proves piecewise work.
        expect(tok.encode(examplePieces.join(''))).not.toEqual(piecewise);
      }
    });

    it(`spans decode to the text they cover (${name} vocabulary)`, () => {
      const tok = new GreedyTokenizer(vocab);
      const encoded = encodeRequest(tok, example, { maxTokens: BIG });
      encoded.questions.forEach((q, k) => {
        expect(decodeSpan(tok, encoded, q.span)).toBe(exampleSpans[k]!.instruction);
        expect(q.optionSpans.map((span) => decodeSpan(tok, encoded, span))).toEqual(
          exampleSpans[k]!.options,
        );
      });
    });
  }
});

/** Encodes a one-question request and returns its question's option semantics texts. */
function optionTexts(q: ValidQuestion): { ids: string[]; texts: string[]; instruction: string } {
  const tok = charTokenizer();
  const encoded = encodeRequest(
    tok,
    { model: 'm', state: 's', questions: [q] },
    { maxTokens: BIG },
  );
  const eq = encoded.questions[0]!;
  return {
    ids: eq.optionIds,
    texts: eq.optionSpans.map((span) => decodeSpan(tok, encoded, span)),
    instruction: decodeSpan(tok, encoded, eq.span),
  };
}

describe('options', () => {
  it('noul: defaults, true then false', () => {
    expect(optionTexts(question('n', 'noul', []))).toMatchObject({
      ids: ['true', 'false'],
      texts: [
        '{"description":"The proposition is true or the answer is yes.","option_id":"true"}',
        '{"description":"The proposition is false or the answer is no.","option_id":"false"}',
      ],
    });
  });

  it('noul: overrides in either order, objects sorted, null drops the description', () => {
    const overridden = question('n', 'noul', [
      ['false', null],
      [
        'true',
        new Map<string, JsonValue>([
          ['z', 1],
          ['a', 'b'],
        ]),
      ],
    ]);
    expect(optionTexts(overridden)).toMatchObject({
      ids: ['true', 'false'],
      texts: ['{"description":{"a":"b","z":1},"option_id":"true"}', '{"option_id":"false"}'],
    });
  });

  it('choice: sorted by code point, astral after high BMP', () => {
    const names = ['\u{1F600}', '\uFF21', 'b', 'a', 'B'];
    const q = question(
      'c',
      'choice',
      names.map((n) => [n, null]),
    );
    // Python: sorted(['\U0001F600', '\uFF21', 'b', 'a', 'B']) == ['B', 'a', 'b', 'Ａ', '😀']
    const expected = ['B', 'a', 'b', '\uFF21', '\u{1F600}'];
    expect([...names].sort()).not.toEqual(expected); // UTF-16 order differs here
    const { ids, texts } = optionTexts(q);
    expect(ids).toEqual(expected);
    expect(texts).toEqual(expected.map((n) => `{"option_id":"${n}"}`));
  });

  it('score: "0".."n-1" with each level, descriptions of any JSON kind', () => {
    const q = question('s', 'score', [
      ['0', ['a', 1]],
      ['1', null],
      ['2', { k: 'v' }],
      ['3', 'top'],
    ]);
    expect(optionTexts(q)).toMatchObject({
      ids: ['0', '1', '2', '3'],
      texts: [
        '{"description":["a",1],"option_id":"0"}',
        '{"option_id":"1"}',
        '{"description":{"k":"v"},"option_id":"2"}',
        '{"description":"top","option_id":"3"}',
      ],
    });
  });
});

describe('instructions', () => {
  const cases: Array<[JsonValue | undefined, string]> = [
    [undefined, 'qid'],
    [null, 'qid'],
    ['', 'qid'],
    ['[1, 2]', '[1, 2]'], // a string passes as it is
    [0, '0'],
    [false, 'false'],
    [{ b: [1], a: null }, '{"a":null,"b":[1]}'],
  ];
  for (const [instructions, expected] of cases) {
    it(`${JSON.stringify(instructions)} → ${expected}`, () => {
      const q = question('qid', 'noul', [], instructions);
      expect(optionTexts(q).instruction).toBe(expected);
    });
  }
});

describe('length limit', () => {
  const longState = '0123456789'.repeat(10); // 100 tokens with the char tokenizer
  const request: ValidRequest = { ...example, state: longState };
  const fullText = [examplePieces[0]!, longState, ...examplePieces.slice(2)].join('');
  const full = codePoints(fullText);

  function refusal(maxTokens: number, truncateState?: boolean): SystemOneError {
    try {
      encodeRequest(charTokenizer(), request, { maxTokens, truncateState });
    } catch (e) {
      expect(e).toBeInstanceOf(SystemOneError);
      return e as SystemOneError;
    }
    throw new Error('expected a refusal');
  }

  it('accepts an input of exactly maxTokens', () => {
    const encoded = encodeRequest(charTokenizer(), request, { maxTokens: full });
    expect(encoded.inputIds.length).toBe(full);
    expect(encoded.truncatedStateTokens).toBe(0);
  });

  it('refuses one token more with the exact 400 body', () => {
    const error = refusal(full - 1);
    expect(error.status).toBe(400);
    expect(JSON.stringify(error.body)).toBe(
      `{"detail":{"error_type":"max_tokens_exceeded","message":"input is ${full} tokens; the model reads at most ${full - 1}"}}`,
    );
  });

  it('truncates the end of the state when asked, and reports it', () => {
    const tok = charTokenizer();
    const encoded = encodeRequest(tok, request, { maxTokens: full - 7, truncateState: true });
    expect(encoded.inputIds.length).toBe(full - 7);
    expect(encoded.truncatedStateTokens).toBe(7);
    expect(encoded.stateTokens).toBe(93);
    expect(encoded.stateEnd).toBe(codePoints(PREFIX_TEXT) + 93);
    const keptText = [examplePieces[0]!, longState.slice(0, 93), ...examplePieces.slice(2)];
    expect(tok.decode(encoded.inputIds)).toBe(keptText.join(''));
    encoded.questions.forEach((q, k) => {
      expect(decodeSpan(tok, encoded, q.span)).toBe(exampleSpans[k]!.instruction);
      expect(q.optionSpans.map((span) => decodeSpan(tok, encoded, span))).toEqual(
        exampleSpans[k]!.options,
      );
    });
  });

  it('truncates to an empty state, but refuses when even that does not fit', () => {
    const empty = encodeRequest(charTokenizer(), request, {
      maxTokens: full - 100,
      truncateState: true,
    });
    expect(empty.stateTokens).toBe(0);
    expect(empty.truncatedStateTokens).toBe(100);
    const error = refusal(full - 101, true);
    expect(error.body).toEqual({
      detail: {
        error_type: 'max_tokens_exceeded',
        message: `input is ${full} tokens; the model reads at most ${full - 101}`,
      },
    });
  });
});

describe('fixed-piece cache', () => {
  it('tokenizes template pieces once per tokenizer', () => {
    const first = charTokenizer();
    const second = new GreedyTokenizer(PLAIN_VOCAB);
    for (const tok of [first, first, second, second]) {
      encodeRequest(tok, example, { maxTokens: BIG });
    }
    for (const tok of [first, second]) {
      expect(tok.calls.filter((t) => t === PROMPT_PREFIX)).toHaveLength(1);
      expect(tok.calls.filter((t) => t === SCHEMA_HEADER)).toHaveLength(1);
      expect(tok.calls.filter((t) => t === 'OPTION 1: ')).toHaveLength(1);
      // Request content is tokenized on every call.
      expect(tok.calls.filter((t) => t === 'Pick one')).toHaveLength(2);
    }
    // Each tokenizer got its own tokens for the prefix (the cache is per tokenizer).
    const a = encodeRequest(first, example, { maxTokens: BIG }).inputIds.slice(0, 20);
    const b = encodeRequest(second, example, { maxTokens: BIG }).inputIds.slice(0, 20);
    expect(a).not.toEqual(b);
  });
});
