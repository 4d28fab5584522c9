/**
 * Typos as people make them, for judging a model on text typed in a hurry
 * (`train-small.ts --typos`): in each word of four letters or more, at `rate`, one of a dropped
 * letter, a doubled letter, two neighbouring letters swapped, or a letter replaced by a
 * neighbour on a QWERTY keyboard. Never the first letter (people seldom get it wrong).
 */
import type { Rng } from '../../src/calibrate/prng.js';

const ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

/** The letters beside `c` on a QWERTY keyboard, in its row and the rows above and below. */
function neighbours(c: string): string {
  const r = ROWS.findIndex((row) => row.includes(c));
  if (r < 0) return '';
  const i = (ROWS[r] as string).indexOf(c);
  return [r - 1, r, r + 1]
    .flatMap((k) => [...(ROWS[k]?.slice(Math.max(0, i - 1), i + 2) ?? '')])
    .filter((n) => n !== c)
    .join('');
}

function typo(word: string, rng: Rng): string {
  const at = 1 + rng.int(word.length - 1);
  const c = word[at] as string;
  switch (rng.int(4)) {
    case 0:
      return word.slice(0, at) + word.slice(at + 1);
    case 1:
      return word.slice(0, at) + c + word.slice(at);
    case 2:
      return at + 1 < word.length
        ? word.slice(0, at) + (word[at + 1] as string) + c + word.slice(at + 2)
        : word.slice(0, at - 1) + c + (word[at - 1] as string);
    default: {
      const near = neighbours(c.toLowerCase());
      return near === ''
        ? word
        : word.slice(0, at) + (near[rng.int(near.length)] as string) + word.slice(at + 1);
    }
  }
}

/** `text` with a typo in each word of four letters or more, at `rate`. */
export function withTypos(text: string, rate: number, rng: Rng): string {
  return text.replace(/\p{L}{4,}/gu, (word) => (rng.uniform() < rate ? typo(word, rng) : word));
}
