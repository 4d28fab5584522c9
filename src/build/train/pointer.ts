/**
 * The pointer: a word carries, with a sign it learns, the evidence of the last thing named before
 * it in its clause. "the vpn is fine, email is down": "fine" takes the vpn's evidence away,
 * "down" adds the email's; a bag of words sees the same words in "email is fine, the vpn is down".
 *
 * It is an order layer (pairs.ts) of two `pointer` heads after the scope layer. A pointer head's
 * memory holds the class content (the evidence the bag pools) of the last content word before the
 * current token: at each token it stores the token before, where that token is a content word (a
 * word of its own, not a function word, a cue or a break), and empties itself where the token
 * before is a break, so a clause starts with nothing to point at. Its gates (learned per token from
 * a small pair embedding) say how much of that memory the token carries; one head adds it to the
 * token's content, the other takes it away (silu is not odd). The scope layer before it lowers the
 * flag of the words in a negation's scope, and a word in scope is never stored: the pointer reads
 * the bag the scope layer leaves, which is what the trainer runs it on.
 *
 * In the release (construct-linear.ts) the heads' keys and values read the token before through
 * the causal conv's lag-1 tap, as the scope layer's do: the key is slot A's after a content word
 * or a break (and the flag not lowered), slot B's after anything else, and the query reads slot A;
 * a break's value is cleared to zero. This is the word-level trial's pointer
 * (tools/bench/pointer-trial.ts, docs/benchmarks.md) built into the trainer's model.
 */
import {
  POINTER_BREAK,
  POINTER_CONTENT,
  POINTER_NONE,
  type PairHead,
  type PairParams,
  type PairShape,
} from './pairs.js';
import { SCOPE_STOP, scopeKind, scopeMark } from './scope.js';

export { POINTER_BREAK, POINTER_CONTENT, POINTER_NONE, POINTER_WRITE } from './pairs.js';

/** Words that name no thing: never what a later word points at. */
const FUNCTION_WORDS = new Set(
  (
    'the a an is are was were be been being am it its this that these those to of in on for at ' +
    "by with from my our your their his her i we me us you they he she and or so just it's"
  ).split(' '),
);

/** A token's pointer mark from its decoded text. */
export function pointerMark(text: string): number {
  if (scopeKind(scopeMark(text, 'every')) === SCOPE_STOP) return POINTER_BREAK;
  if (scopeMark(text, 'every') !== 0) return POINTER_NONE; // a cue
  const word = text
    .trim()
    .toLowerCase()
    .replace(/\u2019/g, "'");
  if (!/[\p{L}\p{N}]/u.test(word) || FUNCTION_WORDS.has(word)) return POINTER_NONE;
  return POINTER_CONTENT;
}

/** Every token's pointer mark; the prompt template's tokens (`unmarked`) get none. */
export function pointerMarks(
  decode: (ids: number[]) => string,
  vocab: number,
  unmarked: ReadonlySet<number>,
): Uint8Array {
  const marks = new Uint8Array(vocab);
  for (let t = 0; t < vocab; t++) if (!unmarked.has(t)) marks[t] = pointerMark(decode([t]));
  return marks;
}

/** The value a content word's mark carries in its residual dim (after the scope marks). */
export const POINTER_MARK = 4;
/**
 * Slot A's key, in units of the token before's RMSNorm scale r: gain · (content mark + break
 * mark) − offset · CONST_VALUE + flag · (f − 1). After a content word or a break outside a scope
 * (f = 1) it is r (4 · 1000 − 640) ≥ 1008; after any other token −640 r ≤ −192; after a word in
 * scope (f ≤ −0.69) or outside the state (f ≤ 0) below −1000 r. silu then gives 0 or ≥ 1008,
 * and after the l2-normalisation each key is one slot exactly. Slot B's is the negation.
 */
export const POINTER_KEY = Object.freeze({ gain: 1000, offset: 40, flag: 4000 });
/** A break's value channels are silu(… − POINTER_CLEAR · r · SCOPE_MARK) = 0: the memory empties. */
export const POINTER_CLEAR = 400;
/** The pointer's pair-embedding dims: what its gates read of a token. */
export const POINTER_DIMS = 4;

/**
 * The pointer's shape: two heads whose values are the class content (U is [heads · dv,
 * classWidth]) with a channel per class and the constant one.
 */
export function pointerShape(classWidth: number): PairShape {
  return Object.freeze({
    heads: Object.freeze([{ kind: 'pointer' }, { kind: 'pointer' }]) as readonly PairHead[],
    dv: 1 + classWidth,
    m: POINTER_DIMS,
  });
}

/** Its fixed weights: value channel 1 + j reads class dim j; out_proj + and − the identity. */
export function pointerWeights(p: PairParams): void {
  const { heads, dv } = p.shape;
  const C = heads.length * dv;
  const out = p.outDims;
  p.u.fill(0);
  p.wo.fill(0);
  for (let h = 0; h < heads.length; h++)
    for (let j = 0; j < out; j++) {
      const k = h * dv + 1 + j;
      p.u[k * out + j] = 1;
      p.wo[j * C + k] = h === 0 ? 1 : -1;
    }
}
