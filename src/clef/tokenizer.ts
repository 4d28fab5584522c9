/**
 * Byte-level BPE tokenizer for Qwen-family `tokenizer.json` files (Qwen3.5, Clef, the tiny
 * fixture), in plain TypeScript so it runs the same in the browser, a worker and Node (no fs).
 *
 * Pipeline, as Hugging Face `tokenizers` runs it for these files:
 *   1. cut out added tokens (`<|im_start|>` ...) on the raw text, leftmost-longest;
 *   2. NFC each remaining segment;
 *   3. split it with the pre-tokenizer regex (Perl/Oniguruma semantics: first alternative wins);
 *   4. map each piece's UTF-8 bytes to the GPT-2 byte-level alphabet;
 *   5. apply BPE merges, lowest rank first, leftmost on ties.
 * `encode` inserts no special tokens (like `tokenizer(text, add_special_tokens=False)`).
 */
import { MergeTable, applyMerges } from './tokenizer-bpe.js';
import { CLASS_SPLIT_REGEX, byteLevelAlphabet, compileSplitRegex } from './tokenizer-split.js';

export interface ClefTokenizer {
  /** Token ids of `text`; no special tokens are inserted. */
  encode(text: string): number[];
  /**
   * `encode(text)` unless the text's length alone proves it is more than `limit` tokens: then
   * `{ atLeast }`, a lower bound over `limit`, found without running BPE (see `minTokens`).
   */
  encodeWithin(text: string, limit: number): { ids: number[] } | { atLeast: number };
  /**
   * A lower bound on `encode(text).length` from the text's length alone, in constant time: no
   * token spells more than `longestTokenChars` UTF-16 units of normalized text, and NFC
   * shortens a text at most 4 times (a character's canonical decomposition has at most 4 code
   * points).
   */
  minTokens(text: string): number;
  /** The most UTF-16 units one token stands for (the longest vocabulary or added token). */
  readonly longestTokenChars: number;
  /** Text of the ids (added tokens as written; invalid UTF-8 becomes U+FFFD). */
  decode(ids: number[]): string;
  /** Id of a vocabulary entry (byte-level spelling, e.g. `Ġthe`) or an added token. */
  tokenToId(token: string): number | undefined;
  /** Number of ids: they run 0 .. vocabSize-1. */
  readonly vocabSize: number;
}

export interface LoadTokenizerOptions {
  /**
   * 'transformers' (default): the split regex that transformers' AutoTokenizer uses, chosen by
   * tokenizer_config's `tokenizer_class` when it is a Qwen class, else tokenizer.json's own.
   * 'tokenizer.json': always tokenizer.json's own regex (as the `tokenizers` library loads it).
   */
  splitRegexFrom?: 'transformers' | 'tokenizer.json';
  /**
   * Bytes the cache of tokenized pieces may hold (estimated: keys, ids and entry overhead;
   * default DEFAULT_TOKENIZER_CACHE_BYTES). When full it is emptied.
   */
  cacheBytes?: number;
}

/** 4 MiB: ~17,000 word pieces (measured ~240 B each), so a steady vocabulary of requests hits. */
export const DEFAULT_TOKENIZER_CACHE_BYTES = 4 * 2 ** 20;
/**
 * Longer pieces are tokenized every time, not cached: a long run without spaces (a hash, a
 * base64 blob) rarely repeats, and one would take a large share of the cache.
 */
const LONGEST_CACHED_PIECE = 256;
/**
 * Bytes of one cache entry besides its key and ids: Map slot, string and array headers, the
 * hash table's slack. Measured: ~240 B per entry of a short word on Node 20.
 */
const CACHE_ENTRY_OVERHEAD = 176;

/**
 * A copy of `s` that does not share storage with a longer string: V8 keeps a substring of 13 or
 * more characters as a view of the string it was cut from, so a cached piece would keep a whole
 * request's text alive. JSON round-trips every string (lone surrogates too) into a fresh one.
 */
function ownCopy(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string): never {
  throw new Error(`tokenizer.json: ${message}`);
}

/** Checks the file is a byte-level BPE of the Qwen shape and returns its Split regex. */
function readSplitRegex(json: JsonObject): string {
  const pre = json['pre_tokenizer'];
  const steps = isObject(pre) && pre['type'] === 'Sequence' ? pre['pretokenizers'] : undefined;
  if (!Array.isArray(steps) || steps.length !== 2) {
    fail('pre_tokenizer must be Sequence[Split(Regex), ByteLevel]');
  }
  const [split, byteLevel] = steps as unknown[];
  const pattern = isObject(split) && isObject(split['pattern']) ? split['pattern']['Regex'] : null;
  if (!isObject(split) || split['type'] !== 'Split' || typeof pattern !== 'string') {
    fail('the first pre-tokenizer must be a Split with a Regex pattern');
  }
  if ((split['behavior'] ?? 'Isolated') !== 'Isolated' || split['invert'] === true) {
    fail('only an Isolated, non-inverted Split is supported');
  }
  if (
    !isObject(byteLevel) ||
    byteLevel['type'] !== 'ByteLevel' ||
    byteLevel['use_regex'] === true ||
    byteLevel['add_prefix_space'] === true
  ) {
    fail('the second pre-tokenizer must be ByteLevel without regex or prefix space');
  }
  const normalizer = json['normalizer'];
  if (normalizer !== null && !(isObject(normalizer) && normalizer['type'] === 'NFC')) {
    fail('only an NFC normalizer (or none) is supported');
  }
  const decoder = json['decoder'];
  if (decoder !== null && !(isObject(decoder) && decoder['type'] === 'ByteLevel')) {
    fail('only a ByteLevel decoder is supported');
  }
  return pattern;
}

interface AddedToken {
  content: string;
  id: number;
}

/** Added tokens from tokenizer.json plus any only tokenizer_config.json lists (Qwen3.5 has 7). */
function readAddedTokens(json: JsonObject, config: JsonObject): AddedToken[] {
  const byContent = new Map<string, number>();
  const list = json['added_tokens'];
  if (Array.isArray(list)) {
    for (const entry of list as unknown[]) {
      if (!isObject(entry) || typeof entry['content'] !== 'string') fail('bad added token');
      if (!Number.isInteger(entry['id'])) fail(`added token ${entry['content']} has no id`);
      byContent.set(entry['content'], entry['id'] as number);
    }
  }
  const decoder = config['added_tokens_decoder'];
  if (isObject(decoder)) {
    for (const [key, entry] of Object.entries(decoder)) {
      const content = typeof entry === 'string' ? entry : isObject(entry) ? entry['content'] : null;
      const id = Number(key);
      if (typeof content === 'string' && Number.isInteger(id) && !byContent.has(content)) {
        byContent.set(content, id);
      }
    }
  }
  return [...byContent].map(([content, id]) => ({ content, id }));
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

class ByteLevelBpe implements ClefTokenizer {
  readonly vocabSize: number;
  /** Added tokens, longest first, so the alternation finds leftmost-longest matches. */
  private readonly addedSplitter: RegExp | null;
  private readonly addedIds = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();
  private cacheBytes = 0;
  readonly longestTokenChars: number;
  private readonly utf8 = new TextEncoder();
  private readonly utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  /** Byte-level character code -> byte, -1 for characters outside the alphabet. */
  private readonly charToByte = new Int16Array(0x200).fill(-1);

  constructor(
    /** The BPE model's own vocabulary (added tokens live apart, as in `tokenizers`). */
    private readonly vocab: Map<string, number>,
    added: AddedToken[],
    private readonly merges: MergeTable,
    private readonly idToToken: Array<string | undefined>,
    private readonly isAdded: Uint8Array,
    private readonly split: RegExp,
    private readonly byteIds: number[],
    private readonly cacheBudget: number,
  ) {
    this.vocabSize = idToToken.length;
    // A byte-level token's characters are its bytes, each at least one UTF-16 unit of text.
    let longest = 1;
    for (const token of vocab.keys()) longest = Math.max(longest, token.length);
    for (const t of added) longest = Math.max(longest, t.content.length);
    this.longestTokenChars = longest;
    byteLevelAlphabet().forEach((ch, b) => (this.charToByte[ch.charCodeAt(0)] = b));
    for (const t of added) this.addedIds.set(t.content, t.id);
    const longestFirst = added.map((t) => t.content).sort((x, y) => y.length - x.length);
    this.addedSplitter =
      added.length === 0 ? null : new RegExp(longestFirst.map(escapeRegExp).join('|'), 'gu');
  }

  tokenToId(token: string): number | undefined {
    return this.addedIds.get(token) ?? this.vocab.get(token);
  }

  encode(text: string): number[] {
    return (this.encodeWithin(text, Infinity) as { ids: number[] }).ids;
  }

  minTokens(text: string): number {
    return Math.ceil(text.length / (4 * this.longestTokenChars));
  }

  encodeWithin(text: string, limit: number): { ids: number[] } | { atLeast: number } {
    const bound = this.minTokens(text);
    if (bound > limit) return { atLeast: bound };
    const ids: number[] = [];
    let start = 0;
    if (this.addedSplitter) {
      for (const match of text.matchAll(this.addedSplitter)) {
        const over = this.encodeSegment(text.slice(start, match.index), ids, limit);
        if (over !== undefined) return { atLeast: over };
        ids.push(this.addedIds.get(match[0])!);
        start = match.index + match[0].length;
      }
    }
    const over = this.encodeSegment(text.slice(start), ids, limit);
    return over !== undefined ? { atLeast: over } : { ids };
  }

  decode(ids: number[]): string {
    const bytes: number[] = [];
    for (const id of ids) {
      const token = this.idToToken[id];
      if (token === undefined) throw new RangeError(`token id ${id} is not in the vocabulary`);
      if (this.isAdded[id] === 0 && this.appendByteLevel(token, bytes)) continue;
      for (const b of this.utf8.encode(token)) bytes.push(b);
    }
    return this.utf8Decoder.decode(Uint8Array.from(bytes));
  }

  /** Appends a byte-level token's bytes; false (nothing appended) if it is not byte-level. */
  private appendByteLevel(token: string, bytes: number[]): boolean {
    const start = bytes.length;
    for (let i = 0; i < token.length; i++) {
      const code = token.charCodeAt(i);
      const b = code < this.charToByte.length ? this.charToByte[code]! : -1;
      if (b < 0) {
        bytes.length = start;
        return false;
      }
      bytes.push(b);
    }
    return true;
  }

  /**
   * Appends the segment's ids; or, when its normalized length proves the total would pass
   * `limit`, appends nothing and returns that lower bound (before any BPE work).
   */
  private encodeSegment(segment: string, ids: number[], limit: number): number | undefined {
    if (segment.length === 0) return undefined;
    const normalized = segment.normalize('NFC');
    const bound = ids.length + Math.ceil(normalized.length / this.longestTokenChars);
    if (bound > limit) return bound;
    let end = 0;
    for (const match of normalized.matchAll(this.split)) {
      // Text no alternative matched is a piece too (Isolated split); Qwen's regex leaves none.
      if (match.index > end) this.encodePiece(normalized.slice(end, match.index), ids);
      if (match[0].length > 0) this.encodePiece(match[0], ids);
      end = match.index + match[0].length;
    }
    if (end < normalized.length) this.encodePiece(normalized.slice(end), ids);
    return undefined;
  }

  private encodePiece(piece: string, ids: number[]): void {
    let pieceIds = this.cache.get(piece);
    if (pieceIds === undefined) {
      const byteTokens = Array.from(this.utf8.encode(piece), (b) => this.byteIds[b]!);
      pieceIds = applyMerges(byteTokens, this.merges);
      if (piece.length <= LONGEST_CACHED_PIECE) {
        const bytes = 2 * piece.length + 8 * pieceIds.length + CACHE_ENTRY_OVERHEAD;
        if (this.cacheBytes + bytes > this.cacheBudget) {
          this.cache.clear();
          this.cacheBytes = 0;
        }
        if (bytes <= this.cacheBudget) {
          this.cache.set(ownCopy(piece), pieceIds);
          this.cacheBytes += bytes;
        }
      }
    }
    for (const id of pieceIds) ids.push(id);
  }
}

/**
 * Builds a tokenizer from parsed `tokenizer.json` (and `tokenizer_config.json`, whose
 * `added_tokens_decoder` and `tokenizer_class` transformers honours). Throws on files that are
 * not a byte-level BPE of the Qwen shape. The work is synchronous; see loadTokenizerSync.
 */
export async function loadTokenizer(
  tokenizerJson: object,
  tokenizerConfig?: object,
  options: LoadTokenizerOptions = {},
): Promise<ClefTokenizer> {
  return loadTokenizerSync(tokenizerJson, tokenizerConfig, options);
}

export function loadTokenizerSync(
  tokenizerJson: object,
  tokenizerConfig?: object,
  options: LoadTokenizerOptions = {},
): ClefTokenizer {
  const json = tokenizerJson as JsonObject;
  const config = (tokenizerConfig ?? {}) as JsonObject;
  const model = json['model'];
  if (!isObject(model) || model['type'] !== 'BPE') fail('model.type must be BPE');
  if (model['byte_fallback'] === true) fail('byte_fallback is not supported');
  if (model['continuing_subword_prefix'] || model['end_of_word_suffix']) {
    fail('continuing_subword_prefix / end_of_word_suffix are not supported');
  }
  if (model['ignore_merges'] === true) fail('ignore_merges is not supported');
  let splitRegex = readSplitRegex(json);
  const tokenizerClass = config['tokenizer_class'];
  const fromClass = typeof tokenizerClass === 'string' ? CLASS_SPLIT_REGEX[tokenizerClass] : null;
  if ((options.splitRegexFrom ?? 'transformers') === 'transformers' && fromClass) {
    splitRegex = fromClass;
  }

  const rawVocab = model['vocab'];
  if (!isObject(rawVocab)) fail('model.vocab must be an object');
  const vocab = new Map<string, number>();
  let maxId = -1;
  for (const token in rawVocab) {
    const id = rawVocab[token];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) fail(`bad id for ${token}`);
    vocab.set(token, id);
    if (id > maxId) maxId = id;
  }
  const added = readAddedTokens(json, config);
  for (const t of added) maxId = Math.max(maxId, t.id);
  const idToToken = new Array<string | undefined>(maxId + 1);
  for (const [token, id] of vocab) idToToken[id] = token;
  const isAdded = new Uint8Array(maxId + 1);
  for (const t of added) {
    idToToken[t.id] = t.content;
    isAdded[t.id] = 1;
  }
  const byteIds = byteLevelAlphabet().map(
    (ch) => vocab.get(ch) ?? fail(`byte token ${ch} is missing`),
  );

  const rawMerges = model['merges'];
  if (!Array.isArray(rawMerges)) fail('model.merges must be an array');
  const merges = new MergeTable(rawMerges.length);
  rawMerges.forEach((m: unknown, rank) => {
    let left: unknown;
    let right: unknown;
    if (typeof m === 'string') {
      const space = m.indexOf(' ');
      [left, right] = [m.slice(0, space), m.slice(space + 1)];
      if (space <= 0) fail(`merge ${rank} has no space`);
    } else if (Array.isArray(m) && m.length === 2) [left, right] = m as unknown[];
    if (typeof left !== 'string' || typeof right !== 'string') {
      fail(`merge ${rank} is neither "a b" nor ["a", "b"]`);
    }
    const a = vocab.get(left);
    const b = vocab.get(right);
    const merged = vocab.get(left + right);
    if (a === undefined || b === undefined || merged === undefined) {
      fail(`merge ${rank} (${left} ${right}) uses a token missing from the vocab`);
    }
    merges.set(a, b, rank, merged);
  });
  const split = compileSplitRegex(splitRegex);
  const cacheBudget = options.cacheBytes ?? DEFAULT_TOKENIZER_CACHE_BYTES;
  return new ByteLevelBpe(vocab, added, merges, idToToken, isAdded, split, byteIds, cacheBudget);
}
