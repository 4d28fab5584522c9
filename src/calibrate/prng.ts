/**
 * The project's one seeded PRNG and the fit / held-out split built on it. The same stream on every
 * platform (no Math.random, no crypto), so a seed names one set of fixture weights, trained
 * weights, verify requests, fuzz cases or calibration split everywhere, in Node and in the
 * browser alike. Here, under calibration, because both the build tools and the calibration core
 * may import it (test/unit/repo/layout.test.ts).
 */

/** xoshiro128** seeded through splitmix32: small, fast, and the same on every platform. */
export class Rng {
  private s: Uint32Array;
  private spare: number | null = null;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = Uint32Array.of(next(), next(), next(), next());
  }

  /** Next 32 random bits. */
  nextU32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1] as number, 5), 7), 9) >>> 0;
    const t = (s[1] as number) << 9;
    s[2] = (s[2] as number) ^ (s[0] as number);
    s[3] = (s[3] as number) ^ (s[1] as number);
    s[1] = (s[1] as number) ^ (s[2] as number);
    s[0] = (s[0] as number) ^ (s[3] as number);
    s[2] = (s[2] as number) ^ t;
    s[3] = rotl(s[3] as number, 11);
    return result;
  }

  /** Uniform in (0, 1): never 0, so log() is safe. */
  uniform(): number {
    return (this.nextU32() + 0.5) / 4294967296;
  }

  /** Standard normal (Box-Muller, the second value kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return v;
    }
    const r = Math.sqrt(-2 * Math.log(this.uniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A stream of uniforms in (0, 1) from `seed`: for callers that only draw numbers. */
export function uniforms(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.uniform();
}

/** 0 .. n−1 in a seeded random order (Fisher–Yates). */
export function shuffledIndices(n: number, seed: number): number[] {
  const rng = new Rng(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const tmp = order[i] as number;
    order[i] = order[j] as number;
    order[j] = tmp;
  }
  return order;
}

/** How many of n records are held out: round(n · fraction), the same rule fit and refusal use. */
export function heldOutCount(n: number, heldOutFraction: number): number {
  return Math.round(n * heldOutFraction);
}

export interface Split {
  /** Indices (ascending) of the records to fit on. */
  fit: number[];
  /** Indices (ascending) of the records to measure on. */
  heldOut: number[];
}

/**
 * For each key, the index of the first entry with the same key (its own where it is the first,
 * or where its key is undefined): which entries are copies of which.
 */
export function firstOfKeys(keys: ReadonlyArray<string | undefined>): number[] {
  const firstOf = new Map<string, number>();
  return keys.map((key, i) => {
    if (key === undefined) return i;
    const seen = firstOf.get(key);
    if (seen !== undefined) return seen;
    firstOf.set(key, i);
    return i;
  });
}

/**
 * A seeded split of records whose `copies` keys say which are copies of one another (the same
 * key; undefined: none): the first of each key is drawn as splitIndices draws records, and its
 * copies go to its part, so no record is measured against a copy of itself fitted on. Without
 * copies (or with fewer than two keys) it is splitIndices.
 */
export function splitCopies(
  copies: ReadonlyArray<string | undefined>,
  heldOutFraction: number,
  seed: number,
): Split {
  const first = firstOfKeys(copies);
  const firsts = first.flatMap((f, i) => (f === i ? [i] : []));
  if (firsts.length === copies.length || firsts.length < 2)
    return splitIndices(copies.length, heldOutFraction, seed);
  const drawn = splitIndices(firsts.length, heldOutFraction, seed);
  const held = new Set(drawn.heldOut.map((k) => firsts[k] as number));
  const out: Split = { fit: [], heldOut: [] };
  first.forEach((f, i) => (held.has(f) ? out.heldOut : out.fit).push(i));
  return out;
}

/** A seeded split of n records; ascending indices keep each part in input order. */
export function splitIndices(n: number, heldOutFraction: number, seed: number): Split {
  const order = shuffledIndices(n, seed);
  const held = heldOutCount(n, heldOutFraction);
  const ascending = (a: number, b: number) => a - b;
  return {
    heldOut: order.slice(0, held).sort(ascending),
    fit: order.slice(held).sort(ascending),
  };
}
