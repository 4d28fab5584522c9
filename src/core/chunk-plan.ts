/**
 * Where the backbone splits a run of tokens into chunks. A chunk of `t` tokens whose last
 * position is `e` makes every full-attention layer materialise `t × e` scores per head, so with
 * a fixed chunk the transient grows with the state: on Clef-flash (16 heads, fp32) a 256-token
 * chunk against 16,384 keys holds 256 MiB of scores per layer. Bounding `t × e` by a budget keeps
 * it flat: the default (256 × 4,096) changes nothing up to 4,096 keys and runs 64-token chunks
 * at 16,384 (64 MiB of scores). Pure arithmetic; the runner follows the plan.
 */

/** Tokens × keys one chunk may attend over: 256 tokens against 4,096 keys. */
export const DEFAULT_SCORE_BUDGET = 256 * 4096;

/** No chunk shrinks below this (per-run overhead would dominate); the budget yields first. */
export const MIN_CHUNK_TOKENS = 16;

/** The largest chunk starting at `start` whose tokens × keys stay within `budget`. */
function boundedChunk(start: number, chunkTokens: number, budget: number): number {
  // t × (start + t) ≤ budget  ⇔  t ≤ (√(start² + 4·budget) − start) / 2
  const fit = Math.floor((Math.sqrt(start * start + 4 * budget) - start) / 2);
  return Math.max(Math.min(chunkTokens, fit), Math.min(chunkTokens, MIN_CHUNK_TOKENS));
}

/** Chunk ends for positions [start, end): each chunk as big as the budget allows. */
export function chunkEnds(
  start: number,
  end: number,
  chunkTokens: number,
  budget: number = DEFAULT_SCORE_BUDGET,
): number[] {
  const ends: number[] = [];
  for (let s = start; s < end;) {
    s = Math.min(end, s + boundedChunk(s, chunkTokens, budget));
    ends.push(s);
  }
  return ends;
}

/**
 * Chunk ends for a request's tail (schema and suffix). A tail up to twice the chunk runs whole
 * (joining chunks reads hidden states back from the GPU) while it attends over at most twice the
 * budget: one such run per decision; an 8-question tail over a 2,048-token state stays whole.
 * Longer tails, or tails over long states, follow the prefix's bound.
 */
export function tailChunkEnds(
  start: number,
  end: number,
  chunkTokens: number,
  budget: number = DEFAULT_SCORE_BUDGET,
): number[] {
  const tail = end - start;
  if (tail <= 2 * chunkTokens && tail * end <= 2 * budget) {
    return tail > 0 ? [end] : [];
  }
  return chunkEnds(start, end, chunkTokens, budget);
}
