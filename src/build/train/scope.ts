/**
 * The scope layer: words in the scope of a negation leave the bag. From a negation cue ("not",
 * "no", "never", "without", "instead", "rather", a "n't") to the end of its clause (punctuation,
 * a dash between clauses, "but", "while", "although", …), the state's words are not pooled:
 * "don't archive the invoices, purge them" is read as "don't …, purge them", and "purge the old
 * backups, don't list them" as "purge the old backups, don't". The cue and the break stay.
 *
 * This is the negation marking text classifiers have used since the early sentiment papers (a
 * word between a negation and the next punctuation is not the word), in its plainest form.
 *
 * It has two readings, and the fit keeps the one (or neither) that cross-fitting says predicts
 * better. `every` opens a scope at every cue. `nominal` opens one only at a cue that negates a
 * thing ("not the database, the wifi", "no vpn trouble", "without the backups"), not at one that
 * negates a verb ("can't connect to the vpn", "never went down"): where a file's question is
 * which thing is at fault, a negated verb's object is the answer, not a word to leave out. It
 * has nothing to learn, so it works on a file of a few dozen lines, where a learned order layer
 * (pairs.ts) fits the lines' word sequences instead; `clef-web train` keeps it where
 * cross-fitting says it predicts better (layer-search.ts). Either reading can also leave the cue itself
 * out (`-bare`): where a file's negated lines lean one way ("can't log in" is urgent), a cue
 * whose scope took every other word ("I don't need it before next month") carries only that
 * lean; the fit tries the better reading bare too.
 *
 * In the Clef release it is a Gated DeltaNet layer with fixed weights (construct-linear.ts),
 * between the flag layer and the pooling layer: one value head whose memory the word after a cue
 * sets and a break clears, read through the three pair-embedding dims that mark cues, breaks and
 * the starts of words, and whose out_proj lowers the flag dim of a word in scope below 0, so that
 * the pooling attention (score 12 cos θ + 140 flag) leaves it out, as it leaves out the prompt
 * before the state. A cue left out is the flag layer's doing (flag-layer.ts, its cue
 * head), at the cue itself. The trainer (scopedBag) drops the same words from the bag; the
 * verify phase checks the two agree.
 */
import type { PairHead, PairParams, PairShape } from './pairs.js';

/** A token's mark: none, a negation cue, or a clause break. */
export const SCOPE_NONE = 0;
export const SCOPE_CUE = 1;
export const SCOPE_STOP = 2;
/**
 * Added to a token's mark in the table (scopeMarks) when its text starts a word (a space before
 * it). A cue opens its scope at the next token only where that token starts a word: the tokenizer
 * can cut "notify" into " not" + "ify" and "north" into " nor" + "th", and the cue those pieces
 * read as is part of a longer word, not a negation.
 */
export const SCOPE_WORD_START = 4;
/**
 * Added to a cue's mark in the table where the reading leaves the cues out of the bag too
 * (`every-bare`, `nominal-bare`): the bag keeps neither the words in a scope nor the word that
 * opened it.
 */
export const SCOPE_LEFT_OUT = 8;

/** A table mark's kind (none, cue or break), without SCOPE_WORD_START or SCOPE_LEFT_OUT. */
export function scopeKind(mark: number): number {
  return mark & ~(SCOPE_WORD_START | SCOPE_LEFT_OUT);
}

const CUES = new Set([
  'not',
  'no',
  'never',
  'without',
  'nothing',
  'none',
  'nobody',
  'nor',
  'neither',
  'cannot',
  'instead',
  'rather',
  "n't",
  "'t",
  '\u2019t',
]);
/** The cues that negate a verb: no scope in the `nominal` reading (as any word ending in n't). */
const VERBAL_CUES = new Set(['never', 'cannot', "n't", "'t", '\u2019t']);
const STOP_WORDS = new Set(['but', 'while', 'whereas', 'though', 'although', 'however']);
const PUNCTUATION = /[,.;:!?()[\]\n]/;
/**
 * A dash between clauses ("not the vpn - the wifi is down", "not staging — production") closes a
 * scope as a comma does. A hyphen is a break only with a space before it (its own token once the
 * tokenizer is given " -": "wi-fi" and "read-only" keep theirs); an en or em dash always is.
 */
const DASH = /^\s+-+$|[\u2013\u2014]/;
/** The dashes the tokenizer must keep whole (as words: each also with a leading space). */
const DASHES = ['-', '\u2013', '\u2014'];

/**
 * The words the tokenizer must keep whole for the marks to find them (data.ts adds them to its
 * corpus when the scope layer may be tried): a cue split into pieces marks nothing.
 */
export const SCOPE_WORDS: readonly string[] = Object.freeze([...CUES, ...STOP_WORDS, ...DASHES]);

/**
 * Which cues open a scope: every one, or only those that negate a thing (not a verb); `-bare`:
 * the cue itself leaves the bag too ("I don't need it before next month" keeps "I", not a
 * "don't" that leans the way most negated lines in the file do).
 */
export type ScopeCues = 'every' | 'nominal' | 'every-bare' | 'nominal-bare';
/** The readings the fit tries first, in order (then the better one bare: layer-search.ts). */
export const SCOPE_READINGS: readonly ScopeCues[] = Object.freeze(['every', 'nominal']);

/** Whether a reading leaves its cues out of the bag. */
export function leavesCuesOut(cues: ScopeCues): boolean {
  return cues.endsWith('-bare');
}

/** The reading that leaves its cues out of the bag too. */
export function bareReading(cues: ScopeCues): ScopeCues {
  return cues.startsWith('nominal') ? 'nominal-bare' : 'every-bare';
}

/** A token's mark from its decoded text. */
export function scopeMark(text: string, cues: ScopeCues = 'every'): number {
  const word = text.trim().toLowerCase();
  const verbal = VERBAL_CUES.has(word) || word.endsWith("n't") || word.endsWith('n\u2019t');
  if (verbal) return cues.startsWith('every') ? SCOPE_CUE : SCOPE_NONE;
  if (CUES.has(word)) return SCOPE_CUE;
  if (STOP_WORDS.has(word) || PUNCTUATION.test(text) || DASH.test(text)) return SCOPE_STOP;
  return SCOPE_NONE;
}

/** Whether a token's text starts a word: a space (or a line break) before it. */
function startsWord(text: string): boolean {
  return /^\s/.test(text);
}

/**
 * Every token's mark, with SCOPE_WORD_START added where its text starts a word, and
 * SCOPE_LEFT_OUT on a cue where the reading leaves cues out; the prompt template's tokens
 * (`unmarked`) get none.
 */
export function scopeMarks(
  decode: (ids: number[]) => string,
  vocab: number,
  unmarked: ReadonlySet<number>,
  cues: ScopeCues = 'every',
): Uint8Array {
  const marks = new Uint8Array(vocab);
  for (let t = 0; t < vocab; t++) {
    if (unmarked.has(t)) continue;
    const text = decode([t]);
    const mark = scopeMark(text, cues);
    marks[t] =
      mark +
      (startsWord(text) ? SCOPE_WORD_START : 0) +
      (mark === SCOPE_CUE && leavesCuesOut(cues) ? SCOPE_LEFT_OUT : 0);
  }
  return marks;
}

/**
 * The bag without the words in a negation's scope (the breaks stay; the cues too, unless their
 * mark has SCOPE_LEFT_OUT). A cue opens its scope at the token after it where that token starts a
 * word (a piece that goes on the cue's own word, as "ify" after " not" in "notify", opens
 * nothing); a break closes it. A cue left out is left out whatever follows: the release decides
 * at the cue (flag-layer.ts, the flag layer's cue head), before the next token is seen.
 */
export function scopedBag(marks: Uint8Array, bag: Int32Array): Int32Array {
  let open = false;
  let afterCue = false;
  let kept = 0;
  const out = new Int32Array(bag.length);
  for (const t of bag) {
    const mark = marks[t] as number;
    const kind = scopeKind(mark);
    if (kind === SCOPE_STOP) {
      open = afterCue = false;
      out[kept++] = t;
      continue;
    }
    if (afterCue && (mark & SCOPE_WORD_START) !== 0) open = true;
    afterCue = kind === SCOPE_CUE;
    if (kind !== SCOPE_CUE && open) continue;
    if ((mark & SCOPE_LEFT_OUT) !== 0) continue;
    out[kept++] = t;
  }
  return kept === bag.length ? bag : out.slice(0, kept);
}

/**
 * 1 at each token of the bag after the state's first break, but not at a break itself; 0
 * elsewhere: the tokens the clause weight raises in the pooling (model.ts ModelShape.clauseWeight).
 * The flag layer's clause head computes the same (flag-layer.ts): its memory is set at a
 * break, and its gate is shut at every break. Written into `later` where given (the fit's arena,
 * so its passes allocate nothing).
 */
export function laterClauses<T extends Uint8Array | Float64Array = Uint8Array>(
  marks: Uint8Array,
  bag: Int32Array,
  later: T = new Uint8Array(bag.length) as T,
): T {
  let seen = false;
  bag.forEach((t, i) => {
    const isBreak = scopeKind(marks[t] as number) === SCOPE_STOP;
    seen ||= isBreak;
    later[i] = seen && !isBreak ? 1 : 0;
  });
  return later;
}

/**
 * The value a mark carries in its pair-embedding dim (dim 0: cue, dim 1: break, dim 2: the start
 * of a word).
 */
export const SCOPE_MARK = 4;
/** The pair-embedding dims of the scope layer. */
export const SCOPE_DIMS = 3;

/*
 * The layer's fixed weights, for every token's RMSNorm scale r in [0.3, 1] (r = √D / |x|, |x|
 * about 16-20, D from 48 up): a mark's embedding reads r · SCOPE_MARK. The head's memory has two
 * slots, keys e_A and e_B; the query reads slot A, which holds the scope.
 * - Write: β = σ(r (WRITE_BIAS + WRITE_GAIN · SCOPE_MARK · start − BREAK_WRITE · SCOPE_MARK ·
 *   break)) is σ(100 r) on a token that starts a word and is no break, and σ(−100 r) ≤ 1e-13
 *   on a piece that goes on a word and on a break (which the decay clears instead: SCOPE_CLEAR).
 * - Key, from the token before (the causal conv's lag-1 tap): e_A after a cue, e_B after anything
 *   else (SCOPE_KEY), so only the word after a cue writes slot A.
 * - Value, from the token before too: after a cue silu(VALUE_GAIN · SCOPE_MARK · r) ≥ 36 (the
 *   scope opens), else silu(0) = 0.
 * - Gate: silu(r (GATE_BIAS + GATE_CUE · SCOPE_MARK · cue)) is silu(20 r) ≥ 6 on a word and
 *   silu(−100 r) on a cue (a cue does not leave itself out); SCOPE_GAINS.flag shuts it outside the
 *   state.
 * - Out: with the memory set, the normalised value is √2 (√dv where the release's heads have more
 *   channels, as beside the pointer: lower still; the constant channel is small beside
 *   it), so the flag becomes 1 − FLAG_DROP · √2 · silu(20 r) ≤ −0.69; the pooling score then falls
 *   by more than 30 against the words outside a scope, e^−30 of their weight.
 */
const WRITE_BIAS = -100;
const WRITE_GAIN = 50;
const BREAK_WRITE = 100;
const VALUE_GAIN = 30;
const GATE_BIAS = 20;
const GATE_CUE = -30;
/**
 * The layer's own gains in construct.ts: the flag shuts its writes and gate outside the state
 * with 300 · (flag − 1) (the learned order layer's 60 would let a cue before or after the state
 * write), and its query is 1000 times the constant dim (its keys: SCOPE_KEY, as large), so that
 * their l2-normalisation's eps (1e-6) leaves no trace of a cleared scope (with gain 1 about 5e-8
 * of the old memory stays).
 */
export const SCOPE_GAINS = Object.freeze({ flag: 300, key: 1000 });
/**
 * The scope head's decay: exp(−softplus(gain · ê_break + bias)). On a word that is not a break
 * softplus(−120) is below float32's range, so the decay is exactly 1; on a break (ê_break = r ·
 * SCOPE_MARK ≥ 1.2) it is exp(−softplus(≥ 120)), exactly 0. With the write alone (β = 1 at a
 * break) a float32 package kept a trace of the closed scope's memory, which lowered the flag of
 * the next clause's words: measured, up to 1.1e-3 in probability against the fitted model on
 * two-clause lines ("…customers can't check out, any plans…"), 9.5e-6 with the decay.
 */
export const SCOPE_CLEAR = Object.freeze({ gain: 200, bias: -120 });
/** How much a word in scope lowers the flag dim, per unit of the gated value. */
export const FLAG_DROP = 0.2;

/**
 * The key channels' weights on the token before: slot A's key is silu(r (cue · SCOPE_MARK ·
 * gain − offset · CONST_VALUE)), slot B's the same with both signs turned. With gain 1000 and
 * offset 40 the one that is off reads silu(≤ −192), which is 0 in float32, and the one that is on
 * silu(≥ 192): after the l2-normalisation each key is one slot exactly.
 */
export const SCOPE_KEY = Object.freeze({ gain: 1000, offset: 40 });

const SCOPE_HEADS: readonly PairHead[] = Object.freeze([{ kind: 'memory' }]);

/**
 * The scope layer as an order layer's weights (pairs.ts layout): one head, two channels, the
 * pair embedding [cue, break, start]. construct-linear.ts then gives its key and value the
 * token before (the lag-1 tap) and its keys two slots (SCOPE_KEY).
 */
export function scopeLayerParams(): PairParams {
  const shape: PairShape = { heads: SCOPE_HEADS, dv: 2, m: SCOPE_DIMS };
  // u, z: [channels, m]; channel 0 is the constant one.
  return {
    shape,
    outDims: 0,
    u: Float64Array.from([0, 0, 0, VALUE_GAIN, 0, 0]),
    z: Float64Array.from([0, 0, 0, GATE_CUE, 0, 0]),
    zBias: Float64Array.from([0, GATE_BIAS]),
    b: Float64Array.from([0, -BREAK_WRITE, WRITE_GAIN]),
    bBias: Float64Array.from([WRITE_BIAS]),
    wo: new Float64Array(0),
  };
}

/** A token's pair embedding under the scope layer: [cue, break, start of a word] · SCOPE_MARK. */
export function scopeEmbedding(mark: number): [number, number, number] {
  const kind = scopeKind(mark);
  return [
    kind === SCOPE_CUE ? SCOPE_MARK : 0,
    kind === SCOPE_STOP ? SCOPE_MARK : 0,
    (mark & SCOPE_WORD_START) !== 0 ? SCOPE_MARK : 0,
  ];
}
