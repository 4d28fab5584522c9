// Key-bounded chunks for long states: each chunk's tokens × keys stays within the
// budget, chunks cover the run exactly, short states keep the fixed chunk, and the tail stays
// whole where it did before.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SCORE_BUDGET,
  MIN_CHUNK_TOKENS,
  chunkEnds,
  tailChunkEnds,
} from '../../../src/core/chunk-plan.js';

/** Chunk sizes from a list of ends. */
const sizes = (start: number, ends: number[]) => ends.map((e, i) => e - (i ? ends[i - 1]! : start));

describe('chunkEnds', () => {
  it('keeps the fixed chunk while tokens × keys fit the default budget', () => {
    const ends = chunkEnds(0, 4096, 256);
    expect(ends).toEqual(Array.from({ length: 16 }, (_, i) => (i + 1) * 256));
  });
  it('shrinks chunks as the state grows, never past the budget, covering every position', () => {
    const ends = chunkEnds(0, 16_384, 256);
    expect(ends.at(-1)).toBe(16_384);
    let start = 0;
    for (const end of ends) {
      expect(end).toBeGreaterThan(start);
      expect((end - start) * end).toBeLessThanOrEqual(DEFAULT_SCORE_BUDGET);
      start = end;
    }
    // Near 16,384 keys a chunk is 64 tokens: 4× fewer scores than a 256-token chunk (the very
    // last chunk is whatever remains).
    const last = sizes(0, ends).at(-2)!;
    expect(last).toBeGreaterThanOrEqual(63);
    expect(last).toBeLessThanOrEqual(64);
  });
  it('stops shrinking at the floor, and never exceeds the requested chunk', () => {
    const ends = chunkEnds(200_000, 200_100, 256);
    expect(sizes(200_000, ends).slice(0, -1)).toEqual(
      Array(ends.length - 1).fill(MIN_CHUNK_TOKENS),
    );
    expect(sizes(0, chunkEnds(0, 100, 7)).every((t) => t <= 7)).toBe(true);
  });
});

describe('tailChunkEnds', () => {
  it('runs an 8-question tail over a 2,048-token state whole, as before', () => {
    expect(tailChunkEnds(2048, 2048 + 500, 256)).toEqual([2548]);
  });
  it('splits a tail over a 16,384-token state within the budget', () => {
    const ends = tailChunkEnds(16_384, 16_384 + 350, 256);
    expect(ends.length).toBeGreaterThan(1);
    expect(ends.at(-1)).toBe(16_734);
    let start = 16_384;
    for (const end of ends) {
      expect((end - start) * end).toBeLessThanOrEqual(DEFAULT_SCORE_BUDGET);
      start = end;
    }
  });
  it('splits a tail longer than two chunks, and returns nothing for an empty tail', () => {
    expect(sizes(0, tailChunkEnds(0, 600, 256))).toEqual([256, 256, 88]);
    expect(tailChunkEnds(10, 10, 256)).toEqual([]);
  });
});
