import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../src/calibrate/prng.js';
import {
  loadTokenizer,
  loadTokenizerSync,
  type ClefTokenizer,
} from '../../../src/clef/tokenizer.js';
import { buildTinyTokenizer, type TinyTokenizer } from '../../../tools/fixture/tokenizer.js';
import { byteLevelDecoder } from '../support/byte-level-decode.js';

// ---------------------------------------------------------------------------------------------
// An independent, slow reference encoder: written from the tokenizer.json description, sharing
// no code with src/clef/tokenizer.ts (string-keyed ranks, GPT-2's "merge every occurrence of the
// best pair" loop, its own byte table and its own whitespace class).
// ---------------------------------------------------------------------------------------------

/** Unicode White_Space, which Oniguruma's \s means (JS \s differs: it has U+FEFF, lacks U+0085). */
const WS = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Qwen's split regex; `marks` selects Qwen3.5's tokenizer.json variant (\p{M} joins letters). */
function referenceSplit(marks: boolean): RegExp {
  const letters = marks ? '\\p{L}\\p{M}' : '\\p{L}';
  // (?i:'s|...) as Oniguruma folds it: 'ſ (long s) counts as 's (checked against the Rust library).
  const contraction = "'(?:[sS\\u017f]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
  return new RegExp(
    `${contraction}|[^\\r\\n\\p{L}\\p{N}]?[${letters}]+|\\p{N}| ?[^${WS}${letters}\\p{N}]+[\\r\\n]*` +
      `|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`,
    'gu',
  );
}

function referenceByteTable(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    out.push(String.fromCharCode(keep.includes(b) ? b : 0x100 + extra++));
  }
  return out;
}

interface Reference {
  encode(text: string): number[];
}

function referenceEncoder(json: any, config: any, marks: boolean): Reference {
  const vocab: Record<string, number> = json.model.vocab;
  const ranks = new Map<string, number>();
  json.model.merges.forEach((m: string[] | string, i: number) =>
    ranks.set(Array.isArray(m) ? m.join(' ') : m, i),
  );
  const added = new Map<string, number>();
  for (const t of json.added_tokens) added.set(t.content, t.id);
  for (const [id, t] of Object.entries<any>(config?.added_tokens_decoder ?? {})) {
    if (!added.has(t.content)) added.set(t.content, Number(id));
  }
  const table = referenceByteTable();
  const split = referenceSplit(marks);

  const bpe = (word: string[]): string[] => {
    for (;;) {
      let best: string | null = null;
      for (let i = 0; i + 1 < word.length; i++) {
        const pair = `${word[i]} ${word[i + 1]}`;
        if (ranks.has(pair) && (best === null || ranks.get(pair)! < ranks.get(best)!)) best = pair;
      }
      if (best === null) return word;
      const [a, b] = best.split(' ');
      const next: string[] = [];
      for (let i = 0; i < word.length; i++) {
        if (word[i] === a && word[i + 1] === b) {
          next.push(a! + b!);
          i++;
        } else next.push(word[i]!);
      }
      word = next;
    }
  };
  const encodePlain = (text: string, out: number[]) => {
    for (const m of text.normalize('NFC').matchAll(split)) {
      const chars = [...new TextEncoder().encode(m[0])].map((b) => table[b]!);
      for (const token of bpe(chars)) out.push(vocab[token]!);
    }
  };
  return {
    encode(text: string): number[] {
      const out: number[] = [];
      let plainStart = 0;
      let i = 0;
      while (i < text.length) {
        let longest = '';
        for (const content of added.keys()) {
          if (content.length > longest.length && text.startsWith(content, i)) longest = content;
        }
        if (longest) {
          encodePlain(text.slice(plainStart, i), out);
          out.push(added.get(longest)!);
          i += longest.length;
          plainStart = i;
        } else i++;
      }
      encodePlain(text.slice(plainStart), out);
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** Integers in [0, n) from the project's seeded PRNG. */
function rng(seed: number): (n: number) => number {
  const r = new Rng(seed);
  return (n: number) => r.int(n);
}

const ATOMS = [
  'the',
  ' the',
  'What',
  ' weather',
  'FIELD',
  ' OPTION',
  "'s",
  "'S",
  "'\u017f",
  "'re",
  "'LL",
  "don't",
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\n\n',
  ' \n ',
  '\u000b',
  '0',
  '42',
  '3.5',
  '\u00bd',
  '\u0663',
  '!',
  '?!',
  '{"a":1}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  'é',
  'e\u0301',
  'q\u0308',
  'हिंदी',
  'ก่',
  '中文',
  '，世界',
  'Привет',
  '😀',
  '👍🏽',
  '𝔘',
  '\u0085',
  '\ufeff',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\u212b',
  '\u212a',
  'ß',
  '\u0300',
  '$',
  '++',
  '_',
  '-',
  '\u0000',
];
const SPECIALS = [
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<|endoftext|>',
  '<|im_',
  '|>',
];

/** A random string of atoms and random code points (BMP without surrogates, and astral). */
function randomText(next: (n: number) => number, withSpecials: boolean): string {
  let s = '';
  const parts = 1 + next(14);
  for (let i = 0; i < parts; i++) {
    const kind = next(10);
    if (kind < 2) {
      let cp = next(3) === 0 ? 0x10000 + next(0x20000) : next(0xd800);
      if (cp >= 0xd800 && cp < 0xe000) cp = 0x61;
      s += String.fromCodePoint(cp);
    } else if (kind === 2 && withSpecials) s += SPECIALS[next(SPECIALS.length)];
    else s += ATOMS[next(ATOMS.length)];
  }
  return s;
}

let fixture: TinyTokenizer;
let json: any;
let config: any;
let tok: ClefTokenizer;

beforeAll(async () => {
  fixture = buildTinyTokenizer();
  json = fixture.tokenizerJson;
  config = fixture.tokenizerConfig;
  tok = await loadTokenizer(json, config);
});

describe('tiny fixture files', () => {
  it('have the fields of Qwen3.5 tokenizer.json', () => {
    expect(json.version).toBe('1.0');
    expect(json.normalizer).toEqual({ type: 'NFC' });
    const [split, byteLevel] = json.pre_tokenizer.pretokenizers;
    expect(json.pre_tokenizer.type).toBe('Sequence');
    expect(split).toEqual({
      type: 'Split',
      pattern: {
        Regex:
          "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      },
      behavior: 'Isolated',
      invert: false,
    });
    expect(byteLevel).toMatchObject({
      type: 'ByteLevel',
      add_prefix_space: false,
      use_regex: false,
    });
    expect(json.decoder.type).toBe('ByteLevel');
    expect(json.model).toMatchObject({ type: 'BPE', unk_token: null, byte_fallback: false });
    // The 256 byte-level characters are ids 0..255, in byte order.
    const table = referenceByteTable();
    table.forEach((ch, b) => expect(json.model.vocab[ch]).toBe(b));
    for (const [a, b] of json.model.merges) expect(json.model.vocab[a + b]).toBeTypeOf('number');
  });

  it("lists Qwen's added tokens after the BPE vocabulary, special flags as Qwen3.5", () => {
    const bpeSize = Object.keys(json.model.vocab).length;
    expect(bpeSize).toBe(2000);
    const added = json.added_tokens;
    expect(added).toHaveLength(33);
    added.forEach((t: any, i: number) => {
      expect(t.id).toBe(bpeSize + i);
      expect(t).toMatchObject({ normalized: false, lstrip: false, rstrip: false });
    });
    const special = (c: string) => added.find((t: any) => t.content === c).special;
    for (const c of [
      '<|endoftext|>',
      '<|im_start|>',
      '<|im_end|>',
      '<|video_pad|>',
      '<|audio_pad|>',
    ]) {
      expect(special(c)).toBe(true);
    }
    for (const c of ['<think>', '</think>', '<tool_call>', '<|fim_pad|>', '</tool_response>']) {
      expect(special(c)).toBe(false);
    }
    expect(added.filter((t: any) => t.special)).toHaveLength(21);
    expect(added[0].content).toBe('<|endoftext|>');
  });

  it('have a Qwen tokenizer_config.json that agrees with tokenizer.json', () => {
    expect(config).toMatchObject({
      tokenizer_class: 'Qwen2Tokenizer',
      eos_token: '<|im_end|>',
      pad_token: '<|endoftext|>',
      bos_token: null,
      model_max_length: 262144,
      add_prefix_space: false,
      clean_up_tokenization_spaces: false,
    });
    const decoder = Object.entries<any>(config.added_tokens_decoder);
    expect(decoder).toHaveLength(33);
    for (const [id, entry] of decoder) {
      const t = json.added_tokens.find((a: any) => a.id === Number(id));
      expect(entry).toEqual({
        content: t.content,
        lstrip: false,
        normalized: false,
        rstrip: false,
        single_word: false,
        special: t.special,
      });
    }
  });

  it('vocabSize counts every id, and every id decodes', () => {
    const ids = [
      ...Object.values<number>(json.model.vocab),
      ...json.added_tokens.map((t: any) => t.id),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    expect(fixture.vocabSize).toBe(ids.length);
    expect(Math.max(...ids)).toBe(ids.length - 1);
    expect(tok.vocabSize).toBe(ids.length);
    // Each id decodes to what the test's own byte-level decoder makes of it.
    const reference = byteLevelDecoder(json);
    for (let id = 0; id < tok.vocabSize; id++)
      expect(tok.decode([id]), `id ${id}`).toBe(reference([id]));
    expect(() => tok.decode([tok.vocabSize])).toThrow(RangeError);
  });

  it('training is deterministic', () => {
    expect(JSON.stringify(buildTinyTokenizer())).toBe(JSON.stringify(fixture));
  });
});

describe('loadTokenizer', () => {
  it('encodes added tokens as single ids and never splits them', () => {
    for (const t of json.added_tokens) {
      expect(tok.encode(t.content)).toEqual([t.id]);
      expect(tok.tokenToId(t.content)).toBe(t.id);
      expect(tok.decode([t.id])).toBe(t.content);
    }
    const start = tok.tokenToId('<|im_start|>')!;
    const end = tok.tokenToId('<|im_end|>')!;
    const ids = tok.encode('x<|im_start|><|im_end|>\n<|im_start|>system');
    expect(ids).toEqual([
      ...tok.encode('x'),
      start,
      end,
      ...tok.encode('\n'),
      start,
      ...tok.encode('system'),
    ]);
    // A fragment of an added token is ordinary text.
    expect(tok.encode('<|im_')).not.toContain(start);
    expect(tok.encode('<|im_').length).toBeGreaterThan(1);
  });

  it('inserts no special tokens', () => {
    expect(tok.encode('')).toEqual([]);
    const added = new Set(json.added_tokens.map((t: any) => t.id));
    expect(tok.encode('hello world').some((id) => added.has(id))).toBe(false);
  });

  it('applies NFC first', () => {
    expect(tok.encode('caf\u0065\u0301')).toEqual(tok.encode('caf\u00e9'));
    expect(tok.encode('\u212b')).toEqual(tok.encode('\u00c5')); // Angstrom sign -> Å
    expect(tok.decode(tok.encode('e\u0301'))).toBe('\u00e9');
  });

  it('applies the merges it was trained with: frequent words are one token', () => {
    for (const word of ['FIELD', 'OPTION', 'SCHEMA', 'INSTRUCTION', ' the', ' what', ' weather']) {
      expect(tok.encode(word)).toHaveLength(1);
    }
    expect(tok.encode(' the')).toEqual([tok.tokenToId('\u0120the')]);
    expect(tok.encode('\n\n')).toEqual([tok.tokenToId('\u010a\u010a')]);
    // A word that is not in the corpus falls apart into smaller pieces.
    expect(tok.encode(' zyzzogeton').length).toBeGreaterThan(2);
  });

  it('decode(encode(x)) is NFC(x) for random Unicode text', () => {
    const next = rng(1);
    for (let k = 0; k < 300; k++) {
      const text = randomText(next, false);
      expect(tok.decode(tok.encode(text))).toBe(text.normalize('NFC'));
    }
    expect(tok.decode([])).toBe('');
  });

  it('decodes broken UTF-8 to U+FFFD', () => {
    const [first] = tok.encode('😀'); // byte-level pieces: the emoji's 4 bytes
    expect(tok.encode('😀').length).toBeGreaterThan(1);
    expect(tok.decode([first!])).toBe('\ufffd');
  });

  it('agrees with the independent reference on random text', () => {
    // tokenizer_class Qwen2Tokenizer: transformers uses the Qwen2 regex (no \p{M}).
    const reference = referenceEncoder(json, config, false);
    const next = rng(2);
    for (let k = 0; k < 400; k++) {
      const text = randomText(next, true);
      expect(tok.encode(text), JSON.stringify(text)).toEqual(reference.encode(text));
    }
    const clinc = JSON.parse(
      readFileSync(new URL('../../../data/clinc150/data_full.json', import.meta.url), 'utf8'),
    ) as { val: Array<[string, string]> };
    for (const [query] of clinc.val.slice(0, 200)) {
      expect(tok.encode(query)).toEqual(reference.encode(query));
    }
    const long = 'ab '.repeat(300) + 'x'.repeat(2000) + ' '.repeat(500) + '\n';
    expect(tok.encode(long)).toEqual(reference.encode(long));
  });

  it("picks the split regex the way transformers does: from tokenizer_class, else the file's", async () => {
    const marked = ['q\u0308x', '\u0939\u093f\u0902\u0926\u0940'];
    const small = buildTinyTokenizer({
      corpus: marked.flatMap((w) => Array(20).fill(w)),
      vocabSize: 300,
    });
    const smallJson: any = small.tokenizerJson;
    const asQwen2 = await loadTokenizer(smallJson, small.tokenizerConfig);
    const asFile = await loadTokenizer(smallJson, small.tokenizerConfig, {
      splitRegexFrom: 'tokenizer.json',
    });
    const asQwen35 = await loadTokenizer(smallJson, { tokenizer_class: 'Qwen3_5Tokenizer' });
    const noConfig = await loadTokenizer(smallJson);
    const withMarks = referenceEncoder(smallJson, {}, true);
    const withoutMarks = referenceEncoder(smallJson, {}, false);
    for (const word of marked) {
      // Trained with marks joining letters, so the whole word is one token only in that mode.
      expect(asFile.encode(word)).toHaveLength(1);
      expect(asFile.encode(word)).toEqual(withMarks.encode(word));
      expect(asQwen35.encode(word)).toEqual(withMarks.encode(word));
      expect(noConfig.encode(word)).toEqual(withMarks.encode(word));
      expect(asQwen2.encode(word).length).toBeGreaterThan(1);
      expect(asQwen2.encode(word)).toEqual(withoutMarks.encode(word));
    }
  });

  it("folds case in (?i:'s|...) as Oniguruma does: 'ſ is a contraction", () => {
    // Teach the merge ſ+a, then check it does not fire across the contraction boundary in 'ſa
    // (the Rust tokenizers library gives ' ſ | a here).
    const small = buildTinyTokenizer({ corpus: Array(20).fill('\u017fa'), vocabSize: 260 });
    const smallTok = loadTokenizerSync(small.tokenizerJson, small.tokenizerConfig);
    expect(smallTok.encode('\u017fa')).toHaveLength(1);
    const text = "'\u017fa";
    expect(smallTok.encode(text)).toEqual([...smallTok.encode("'\u017f"), ...smallTok.encode('a')]);
    expect(smallTok.encode(text)).toEqual(
      referenceEncoder(small.tokenizerJson, small.tokenizerConfig, false).encode(text),
    );
  });

  it('takes added tokens that only tokenizer_config.json lists (as Qwen3.5 ships the audio ones)', () => {
    const trimmed = { ...json, added_tokens: json.added_tokens.slice(0, 26) };
    const audio = json.added_tokens[26];
    expect(audio.content).toBe('<|audio_start|>');
    expect(loadTokenizerSync(trimmed, config).encode(audio.content)).toEqual([audio.id]);
    const withoutConfig = loadTokenizerSync(trimmed, {});
    expect(withoutConfig.encode(audio.content).length).toBeGreaterThan(1);
    expect(withoutConfig.vocabSize).toBe(fixture.vocabSize - 7);
  });

  it('matches added tokens leftmost-longest', () => {
    const id = fixture.vocabSize;
    const longer = { content: '<|im_start|>sys', id, special: true };
    const extended = { ...json, added_tokens: [...json.added_tokens, longer] };
    const ids = loadTokenizerSync(extended, config).encode('<|im_start|>system');
    expect(ids).toEqual([id, ...tok.encode('tem')]);
    expect(ids).toEqual(referenceEncoder(extended, config, false).encode('<|im_start|>system'));
  });

  it('keeps the last rank of a repeated merge, as the tokenizers library does', () => {
    // Merges [b c], [a b], [b c]: with ranks 1 and 2, "abc" becomes "ab" + "c" (checked against
    // tokenizers 0.23); were the first rank kept it would be "a" + "bc".
    const small = buildTinyTokenizer({ corpus: ['x'], vocabSize: 256 });
    const base: any = small.tokenizerJson;
    const vocab = { ...base.model.vocab, bc: 256, ab: 257 };
    const added = base.added_tokens.map((t: any, i: number) => ({ ...t, id: 258 + i }));
    const dup = {
      ...base,
      added_tokens: added,
      model: {
        ...base.model,
        vocab,
        merges: [
          ['b', 'c'],
          ['a', 'b'],
          ['b', 'c'],
        ],
      },
    };
    expect(loadTokenizerSync(dup).encode('abc')).toEqual([257, vocab['c']]);
  });

  it('keeps text the split regex does not match as pieces (Isolated behaviour)', () => {
    const [split, byteLevel] = json.pre_tokenizer.pretokenizers;
    const lettersOnly = {
      ...json,
      pre_tokenizer: {
        type: 'Sequence',
        pretokenizers: [{ ...split, pattern: { Regex: '\\p{L}+' } }, byteLevel],
      },
    };
    const letters = loadTokenizerSync(lettersOnly);
    expect(letters.decode(letters.encode('what 12 is!'))).toBe('what 12 is!');
    // Without the gaps the digits and spaces would vanish.
    expect(letters.decode(letters.encode(' 12 '))).toBe(' 12 ');
  });

  it('accepts merges written as "a b" strings', () => {
    const old = {
      ...json,
      model: { ...json.model, merges: json.model.merges.map((m: string[]) => m.join(' ')) },
    };
    const text = 'What is the weather like in Paris?\n{"option_id":"weather"}';
    expect(loadTokenizerSync(old, config).encode(text)).toEqual(tok.encode(text));
  });

  it('refuses files it cannot tokenize faithfully', () => {
    expect(() =>
      loadTokenizerSync({ ...json, model: { ...json.model, type: 'WordPiece' } }),
    ).toThrow(/BPE/);
    expect(() => loadTokenizerSync({ ...json, normalizer: { type: 'NFKC' } })).toThrow(/NFC/);
    expect(() => loadTokenizerSync({ ...json, pre_tokenizer: { type: 'Whitespace' } })).toThrow(
      /Split/,
    );
    const missingByte = { ...json, model: { ...json.model, vocab: { ...json.model.vocab } } };
    delete missingByte.model.vocab['\u0120'];
    expect(() => loadTokenizerSync(missingByte)).toThrow(/missing/);
  });

  // Speed is the benchmark's business; this checks a 100 KB text round-trips.
  it('encodes and decodes 100 KB of text', () => {
    const clinc = JSON.parse(
      readFileSync(new URL('../../../data/clinc150/data_full.json', import.meta.url), 'utf8'),
    ) as { test: Array<[string, string]> };
    const text = clinc.test
      .map(([q]) => q)
      .join('\n')
      .slice(0, 100_000);
    const fresh = loadTokenizerSync(json, config); // empty piece cache
    const ids = fresh.encode(text);
    expect(ids.length).toBeGreaterThan(10_000);
    expect(fresh.decode(ids)).toBe(text);
  });
});
