/**
 * The browser soak's requests (tools/soak/browser-soak.ts), made inside the page: the soak
 * imports this module in the page (the dev server serves it) and sends only (seed, index)
 * ranges. Requests passed as `page.evaluate` arguments would be measured instead of the engine:
 * Chromium keeps about 0.5 KB per distinct argument object it received over DevTools, unattributed
 * to any context (measured in docs/reliability.md), which was the soak's "per-call growth".
 */
import { uniforms } from '../fuzz/prng.js';

const rng = uniforms;

const WORDS = (
  'order card charged twice refund parcel late billing account password email reset invoice ' +
  'shipping damaged box priority customer angry happy thanks urgent support subscription'
).split(' ');

/**
 * Request i of a run: the same index always gives the same request. `sweep` (warm-up) makes the
 * first requests the largest of each state size (4 choice questions of 5 options), so the engine's high-water marks
 * (wasm heap, buffer pools) are reached before the measurement starts.
 */
export function request(
  seed: number,
  i: number,
  sizes: number[],
  sweep = false,
  mode: 'varied' | 'invalid' | 'distinct' = 'varied',
): object {
  if (mode === 'invalid') {
    return { model: 'clef-tiny', state: i, questions: { q: { type: 'noul' } } };
  }
  const r = rng(seed * 1_000_003 + i);
  const big = sweep && i < 2 * sizes.length;
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]);
  // 30% of states come from a pool of 20, so the prefix cache hits now and then.
  const pooled = r() < 0.3;
  const sr = pooled ? rng(seed + Math.floor(r() * 20)) : r;
  const size = big ? sizes[i % sizes.length]! : sizes[Math.floor(sr() * sizes.length)]!;
  const stateWords = Array.from({ length: size }, () => WORDS[Math.floor(sr() * WORDS.length)]);
  // 'distinct': every state also starts with 3 made-up words the tokenizer has never seen, so
  // its piece cache keeps meeting new entries (it is bounded by bytes).
  if (mode === 'distinct' && !big) {
    const made = () =>
      Array.from({ length: 4 + Math.floor(r() * 9) }, () =>
        String.fromCharCode(97 + Math.floor(r() * 26)),
      ).join('');
    stateWords.unshift(made(), made(), made());
  }
  // The sweep's requests are the largest of their size: the object form, 4 choices of 5 options.
  const kind = big ? 1 : Math.floor(sr() * 3);
  const state =
    kind === 0
      ? stateWords.join(' ')
      : kind === 1
        ? { ticket: stateWords.join(' '), amount: 12.5 }
        : [stateWords.join(' ')];
  const questions: Record<string, object> = {};
  const n = big ? 4 : 1 + Math.floor(r() * 4);
  for (let q = 0; q < n; q++) {
    const type = big ? 'choice' : ['noul', 'choice', 'score'][Math.floor(r() * 3)]!;
    const id = `q${q}_${type}`;
    if (type === 'noul') questions[id] = { type, instructions: `${words(4).join(' ')}?` };
    if (type === 'choice') {
      const options = Object.fromEntries(
        Array.from({ length: big ? 5 : 2 + Math.floor(r() * 4) }, (_, k) => [
          `opt${k}`,
          words(2).join(' '),
        ]),
      );
      questions[id] = { type, instructions: words(5).join(' '), criteria: options };
    }
    if (type === 'score') {
      questions[id] = {
        type,
        criteria: Array.from({ length: 2 + Math.floor(r() * 4) }, () => words(2).join(' ')),
      };
    }
  }
  return { model: 'clef-tiny', state, questions };
}

/** Requests `start` to `start + n - 1` of run `seed`. */
export function requests(
  seed: number,
  start: number,
  n: number,
  sizes: number[],
  mode: 'varied' | 'invalid' | 'distinct',
  sweep = false,
): object[] {
  return Array.from({ length: n }, (_, k) => request(seed, start + k, sizes, sweep, mode));
}
