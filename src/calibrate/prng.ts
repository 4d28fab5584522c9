/**
 * A tiny seeded PRNG and the fit / held-out split built on it. Seeded and self-contained (no
 * Math.random, no crypto) so a calibration is reproducible from its file's `split.seed`, in Node
 * and in the browser alike.
 */

/** mulberry32: 32-bit state, uniform in [0, 1). Plenty for shuffling a few thousand records. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 0 .. n−1 in a seeded random order (Fisher–Yates). */
export function shuffledIndices(n: number, seed: number): number[] {
  const next = mulberry32(seed);
  next(); // the first draw correlates most with the seed
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
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
