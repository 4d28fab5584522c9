/**
 * What a token's content is made of. Byte-level BPE gives "VPN", "vpn" and " vpn" three ids, and
 * a small file's words split into pieces at test time ("pasword" → "pas" + "word"); fitting a free
 * vector per id wastes the few examples a small file has. So a token's content is composed from
 * shared features, as a linear model over words and character n-grams would be:
 *
 *   θ_t = idf(word(t)) · u[word(t)] + Σ_{g ∈ grams(t)} idf(g) · G[g]
 *
 * word(t) is the token's text lower-cased without surrounding spaces; grams(t) its character
 * 3- to 5-grams between word boundaries ("<vpn>" → "<vp", "vpn", "pn>", "<vpn", ...); idf is each
 * feature's inverse document frequency over the training states. The bag pools tokens with equal
 * weights, so the pooled content is the state's tf-idf vector through the weights; projectTheta
 * adds its L2 length. θ is what the release stores (one row per token id), so the features cost
 * nothing at run time.
 */
import type { ClefTokenizer } from '../../clef/tokenizer.js';
import { log } from './portable-math.js';

/** Character n-gram lengths. */
const GRAM_MIN = 3;
const GRAM_MAX = 5;

export interface TokenFeatures {
  /** Word feature id per token (-1: none, for the markers). */
  word: Int32Array;
  /** CSR lists of n-gram feature ids per token. */
  gramStart: Int32Array;
  grams: Int32Array;
  words: number;
  gramCount: number;
  /** Each word feature's text and each n-gram's, by id. */
  wordText: string[];
  gramText: string[];
}

/** The text a token's word feature is keyed by. */
export function wordKey(text: string): string {
  const trimmed = text.trim().toLowerCase();
  return trimmed === '' ? text : trimmed;
}

function gramsOf(word: string): string[] {
  if (!/[\p{L}\p{N}]/u.test(word) || word.length < 2) return [];
  const s = `<${word}>`;
  const out = new Set<string>();
  for (let n = GRAM_MIN; n <= GRAM_MAX; n++)
    for (let i = 0; i + n <= s.length; i++) out.add(s.slice(i, i + n));
  return [...out].sort();
}

/** Features of every token of the vocabulary; `frozen` tokens (the markers) get none. */
export function tokenFeatures(
  tokenizer: Pick<ClefTokenizer, 'decode'>,
  vocab: number,
  frozen: ReadonlySet<number>,
): TokenFeatures {
  const wordIds = new Map<string, number>();
  const gramIds = new Map<string, number>();
  const word = new Int32Array(vocab).fill(-1);
  const gramStart = new Int32Array(vocab + 1);
  const grams: number[] = [];
  for (let t = 0; t < vocab; t++) {
    gramStart[t] = grams.length;
    if (frozen.has(t)) continue;
    const key = wordKey(tokenizer.decode([t]));
    let w = wordIds.get(key);
    if (w === undefined) wordIds.set(key, (w = wordIds.size));
    word[t] = w;
    for (const g of gramsOf(key)) {
      let id = gramIds.get(g);
      if (id === undefined) gramIds.set(g, (id = gramIds.size));
      grams.push(id);
    }
  }
  gramStart[vocab] = grams.length;
  return {
    word,
    gramStart,
    grams: Int32Array.from(grams),
    words: wordIds.size,
    gramCount: gramIds.size,
    wordText: [...wordIds.keys()],
    gramText: [...gramIds.keys()],
  };
}

/** Inverse document frequency of every word and n-gram over the training states. */
export interface FeatureIdf {
  word: Float64Array;
  gram: Float64Array;
}

/** idf = ln((1 + N) / (1 + df)) + 1 (scikit-learn's smooth idf), per feature. */
export function featureIdf(f: TokenFeatures, bags: readonly Int32Array[]): FeatureIdf {
  const dfWord = new Float64Array(f.words);
  const dfGram = new Float64Array(f.gramCount);
  const words = new Set<number>();
  const grams = new Set<number>();
  for (const bag of bags) {
    words.clear();
    grams.clear();
    for (const t of bag) {
      const w = f.word[t] as number;
      if (w < 0) continue;
      words.add(w);
      for (let i = f.gramStart[t] as number; i < (f.gramStart[t + 1] as number); i++)
        grams.add(f.grams[i] as number);
    }
    for (const w of words) dfWord[w] = (dfWord[w] as number) + 1;
    for (const g of grams) dfGram[g] = (dfGram[g] as number) + 1;
  }
  const n = bags.length;
  const idf = (df: number): number => log((1 + n) / (1 + df)) + 1;
  return { word: dfWord.map(idf), gram: dfGram.map(idf) };
}

/** The feature weights: one vector per word and per n-gram, `width` (the class dims) each. */
export interface FeatureWeights {
  width: number;
  u: Float64Array;
  g: Float64Array;
}

export function zeroFeatureWeights(f: TokenFeatures, width: number): FeatureWeights {
  return {
    width,
    u: new Float64Array(f.words * width),
    g: new Float64Array(f.gramCount * width),
  };
}

/**
 * θ's class dims for every token: Σ over its features of idf · weight, into columns
 * [0, w.width) of `theta` ([vocab, stride]).
 */
export function composeTheta(
  f: TokenFeatures,
  w: FeatureWeights,
  idf: FeatureIdf,
  theta: Float64Array,
  stride: number,
): void {
  const width = w.width;
  const vocab = f.word.length;
  for (let t = 0; t < vocab; t++) {
    const row = t * stride;
    for (let j = 0; j < width; j++) theta[row + j] = 0;
    const word = f.word[t] as number;
    if (word < 0) continue;
    const kw = idf.word[word] as number;
    for (let j = 0; j < width; j++) theta[row + j] = kw * (w.u[word * width + j] as number);
    for (let i = f.gramStart[t] as number; i < (f.gramStart[t + 1] as number); i++) {
      const gram = f.grams[i] as number;
      const kg = idf.gram[gram] as number;
      const g = gram * width;
      for (let j = 0; j < width; j++)
        theta[row + j] = (theta[row + j] as number) + kg * (w.g[g + j] as number);
    }
  }
}

/** dθ (class dims) back to the feature weights, added into `out`. */
export function backTheta(
  f: TokenFeatures,
  idf: FeatureIdf,
  dTheta: Float64Array,
  stride: number,
  out: FeatureWeights,
): void {
  const width = out.width;
  const vocab = f.word.length;
  for (let t = 0; t < vocab; t++) {
    const word = f.word[t] as number;
    if (word < 0) continue;
    const row = t * stride;
    let any = false;
    for (let j = 0; j < width && !any; j++) any = dTheta[row + j] !== 0;
    if (!any) continue;
    const kw = idf.word[word] as number;
    for (let j = 0; j < width; j++)
      out.u[word * width + j] =
        (out.u[word * width + j] as number) + kw * (dTheta[row + j] as number);
    for (let i = f.gramStart[t] as number; i < (f.gramStart[t + 1] as number); i++) {
      const gram = f.grams[i] as number;
      const kg = idf.gram[gram] as number;
      const g = gram * width;
      for (let j = 0; j < width; j++)
        out.g[g + j] = (out.g[g + j] as number) + kg * (dTheta[row + j] as number);
    }
  }
}

/**
 * The norm dims: a fixed random projection (±1/√m per feature, seeded by the feature's text) of
 * each token's idf-weighted features, times `scale`, into columns [from, from + m) of `theta`.
 * Pooled, they give the state's feature vector projected, whose length (Johnson–Lindenstrauss:
 * within a few percent for m = 32) the head's LayerNorm then divides by: the model's evidence is
 * normalised by the state's L2 length, as tf-idf vectors are, not by its token count.
 */
export function projectTheta(
  f: TokenFeatures,
  idf: FeatureIdf,
  theta: Float64Array,
  stride: number,
  from: number,
  m: number,
  scale: number,
): void {
  const wordCode = f.wordText.map((text) => signs(`w\u0000${text}`, m));
  const gramCode = f.gramText.map((text) => signs(`g\u0000${text}`, m));
  const vocab = f.word.length;
  const k = scale / Math.sqrt(m);
  for (let t = 0; t < vocab; t++) {
    const row = t * stride + from;
    for (let j = 0; j < m; j++) theta[row + j] = 0;
    const word = f.word[t] as number;
    if (word < 0) continue;
    const add = (code: Int8Array, weight: number): void => {
      for (let j = 0; j < m; j++)
        theta[row + j] = (theta[row + j] as number) + k * weight * (code[j] as number);
    };
    add(wordCode[word] as Int8Array, idf.word[word] as number);
    for (let i = f.gramStart[t] as number; i < (f.gramStart[t + 1] as number); i++) {
      const gram = f.grams[i] as number;
      add(gramCode[gram] as Int8Array, idf.gram[gram] as number);
    }
  }
}

/** m signs from a string (FNV-1a, then xorshift): the same on every platform. */
function signs(text: string, m: number): Int8Array {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const out = new Int8Array(m);
  for (let j = 0; j < m; j++) {
    h = (h ^ (h << 13)) >>> 0;
    h = (h ^ (h >>> 17)) >>> 0;
    h = (h ^ (h << 5)) >>> 0;
    out[j] = h & 1 ? 1 : -1;
  }
  return out;
}
