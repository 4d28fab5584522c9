/**
 * A byte-level BPE tokenizer trained from a corpus, written in the exact Hugging Face file format
 * of Qwen3.5's tokenizer (`tokenizer.json` + `tokenizer_config.json`). Same pipeline as the real
 * one: NFC, the Qwen3.5 split regex, byte-level alphabet, BPE merges by rank, and Qwen's 33 added
 * tokens (ids after the BPE vocabulary, in Qwen's order). Deterministic: the same corpus (as a
 * multiset) gives the same files. `clef-web train` and the test fixture both use it.
 */
import { BinaryHeap } from '../../clef/binary-heap.js';
import {
  QWEN3_5_SPLIT_REGEX,
  byteLevelAlphabet,
  compileSplitRegex,
} from '../../clef/tokenizer-split.js';

export interface TrainedTokenizer {
  tokenizerJson: object;
  tokenizerConfig: object;
  /** Every id: byte tokens + merges + added tokens. */
  vocabSize: number;
}

export interface BpeTrainOptions {
  /** Size of the BPE vocabulary (256 byte tokens + merges), before the added tokens. */
  vocabSize: number;
  /** Training texts (repeat a text to weight it). */
  corpus: readonly string[];
  /**
   * Texts that count as if repeated this many times, without being repeated: a weighted template
   * of a few texts counted millions of times would otherwise be an array of millions.
   */
  counted?: ReadonlyArray<readonly [text: string, times: number]>;
  /**
   * Fewest occurrences a pair needs to be merged (default 2). `clef-web train` uses 1, so that
   * every word of a small file becomes whole tokens while the vocabulary lasts.
   */
  minPairCount?: number;
}

/**
 * Qwen3.5's added tokens in id order (its ids start at 248044): the first 26 are in its
 * tokenizer.json, the last 7 (audio/tts) only in its tokenizer_config.json. 21 are special.
 */
export const QWEN_ADDED_TOKENS: ReadonlyArray<{ content: string; special: boolean }> = [
  ...[
    '<|endoftext|>',
    '<|im_start|>',
    '<|im_end|>',
    '<|object_ref_start|>',
    '<|object_ref_end|>',
    '<|box_start|>',
    '<|box_end|>',
    '<|quad_start|>',
    '<|quad_end|>',
    '<|vision_start|>',
    '<|vision_end|>',
    '<|vision_pad|>',
    '<|image_pad|>',
    '<|video_pad|>',
  ].map((content) => ({ content, special: true })),
  ...[
    '<tool_call>',
    '</tool_call>',
    '<|fim_prefix|>',
    '<|fim_middle|>',
    '<|fim_suffix|>',
    '<|fim_pad|>',
    '<|repo_name|>',
    '<|file_sep|>',
    '<tool_response>',
    '</tool_response>',
    '<think>',
    '</think>',
  ].map((content) => ({ content, special: false })),
  ...[
    '<|audio_start|>',
    '<|audio_end|>',
    '<tts_pad>',
    '<tts_text_bos>',
    '<tts_text_eod>',
    '<tts_text_bos_single>',
    '<|audio_pad|>',
  ].map((content) => ({ content, special: true })),
];

/** Word (byte-level pre-token) -> count, with added tokens cut out of the text first. */
function countWords(
  corpus: readonly string[],
  counted: ReadonlyArray<readonly [string, number]>,
): Map<string, number> {
  const alphabet = byteLevelAlphabet();
  const encoder = new TextEncoder();
  const split = compileSplitRegex(QWEN3_5_SPLIT_REGEX);
  const added = new RegExp(
    QWEN_ADDED_TOKENS.map((t) => t.content.replace(/[|\\/[\]()]/g, '\\$&')).join('|'),
    'g',
  );
  // Repeated texts (the weighted template) are split once.
  const texts = new Map<string, number>();
  for (const text of corpus) texts.set(text, (texts.get(text) ?? 0) + 1);
  for (const [text, times] of counted) texts.set(text, (texts.get(text) ?? 0) + times);
  const pieces = new Map<string, number>();
  for (const [text, times] of texts) {
    for (const segment of text.split(added)) {
      for (const match of segment.normalize('NFC').matchAll(split)) {
        pieces.set(match[0], (pieces.get(match[0]) ?? 0) + times);
      }
    }
  }
  const counts = new Map<string, number>();
  for (const [piece, times] of pieces) {
    let word = '';
    for (const byte of encoder.encode(piece)) word += alphabet[byte];
    counts.set(word, (counts.get(word) ?? 0) + times);
  }
  return counts;
}

interface Word {
  symbols: number[];
  count: number;
}

const PAIR_BASE = 1 << 20;
const pairKey = (a: number, b: number): number => a * PAIR_BASE + b;

/**
 * Classic BPE training: repeatedly merge the most frequent adjacent pair (ties: the smaller
 * pair key, i.e. lower ids first) until the vocabulary is full or no pair occurs `minCount` times.
 */
function trainBpe(counts: Map<string, number>, targetVocab: number, minCount: number) {
  const alphabet = byteLevelAlphabet();
  const tokens: string[] = [...alphabet];
  const idOf = new Map<string, number>(tokens.map((t, i) => [t, i]));
  // Sorted words make pair bookkeeping order-independent of Map insertion.
  const words: Word[] = [...counts.entries()]
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
    .map(([w, count]) => ({ symbols: Array.from(w, (ch) => idOf.get(ch)!), count }));
  const pairCount = new Map<number, number>();
  // Lazy max-heap of (count, key): entries whose count is no longer current are skipped.
  // [count, pair key]: the highest count first, then the smaller key (deterministic).
  const candidates = new BinaryHeap<[number, number]>(
    (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] < b[1]),
  );
  const touched = new Set<number>();
  const requeueTouched = () => {
    for (const key of touched) {
      const count = pairCount.get(key) ?? 0;
      if (count >= minCount) candidates.push([count, key]);
    }
    touched.clear();
  };
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (wi: number, sign: 1 | -1) => {
    const { symbols, count } = words[wi]!;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const key = pairKey(symbols[i]!, symbols[i + 1]!);
      const total = (pairCount.get(key) ?? 0) + sign * count;
      if (total > 0) pairCount.set(key, total);
      else pairCount.delete(key);
      touched.add(key);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) pairWords.set(key, (set = new Set()));
        set.add(wi);
      }
    }
  };
  words.forEach((_, wi) => addPairs(wi, 1));
  requeueTouched();

  const merges: Array<[string, string]> = [];
  while (tokens.length < targetVocab) {
    let bestKey = -1;
    for (let top = candidates.pop(); top; top = candidates.pop()) {
      if (pairCount.get(top[1]) === top[0]) {
        bestKey = top[1];
        break;
      }
    }
    if (bestKey < 0) break;
    const a = Math.floor(bestKey / PAIR_BASE);
    const b = bestKey % PAIR_BASE;
    const merged = tokens[a]! + tokens[b]!;
    let id = idOf.get(merged);
    if (id === undefined) {
      id = tokens.length;
      tokens.push(merged);
      idOf.set(merged, id);
    }
    merges.push([tokens[a]!, tokens[b]!]);
    for (const wi of pairWords.get(bestKey) ?? []) {
      addPairs(wi, -1);
      const old = words[wi]!.symbols;
      const next: number[] = [];
      for (let i = 0; i < old.length; i++) {
        if (i + 1 < old.length && old[i] === a && old[i + 1] === b) {
          next.push(id);
          i++;
        } else next.push(old[i]!);
      }
      words[wi]!.symbols = next;
      addPairs(wi, 1);
    }
    pairWords.delete(bestKey);
    requeueTouched();
  }
  return { tokens, merges };
}

function addedTokenEntry(id: number, content: string, special: boolean) {
  return {
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special,
  };
}

/** Trains the tokenizer and lays it out the way Qwen3.5's files are laid out. */
export function trainBpeTokenizer(options: BpeTrainOptions): TrainedTokenizer {
  const targetVocab = options.vocabSize;
  if (!Number.isInteger(targetVocab) || targetVocab < 256) {
    throw new Error(`vocabSize must be an integer >= 256, got ${targetVocab}`);
  }
  const { tokens, merges } = trainBpe(
    countWords(options.corpus, options.counted ?? []),
    targetVocab,
    options.minPairCount ?? 2,
  );
  const vocab: Record<string, number> = {};
  tokens.forEach((token, id) => (vocab[token] = id));
  const added = QWEN_ADDED_TOKENS.map((t, i) =>
    addedTokenEntry(tokens.length + i, t.content, t.special),
  );
  const byteLevel = {
    type: 'ByteLevel',
    add_prefix_space: false,
    trim_offsets: false,
    use_regex: false,
  };

  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: QWEN3_5_SPLIT_REGEX },
          behavior: 'Isolated',
          invert: false,
        },
        byteLevel,
      ],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };

  const addedTokensDecoder: Record<string, object> = {};
  for (const { id, content, special } of added) {
    addedTokensDecoder[String(id)] = {
      content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special,
    };
  }
  const tokenizerConfig = {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder,
    additional_special_tokens: added
      .filter((t) => t.special && t.content !== '<|endoftext|>')
      .map((t) => t.content),
    bos_token: null,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: 262144,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
  return { tokenizerJson, tokenizerConfig, vocabSize: tokens.length + added.length };
}
