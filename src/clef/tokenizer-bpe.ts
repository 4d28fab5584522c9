/**
 * The BPE core of src/clef/tokenizer.ts: the merge table and the merge loop, kept apart so each
 * file stays small. Semantics follow the `tokenizers` library: lowest rank first, leftmost on ties.
 */
import { BinaryHeap } from './binary-heap.js';

type Candidate = [rank: number, position: number, left: number, right: number];
/** The lowest rank first, then the leftmost position. */
const mergesFirst = (a: Candidate, b: Candidate): boolean =>
  a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/**
 * Open-addressing hash table from a token-id pair to (rank, merged id), in typed arrays: a
 * 248k-merge table builds in a fraction of the time a Map with float keys takes.
 */
export class MergeTable {
  private readonly mask: number;
  private readonly left: Int32Array;
  private readonly right: Int32Array;
  readonly rank: Int32Array;
  readonly merged: Int32Array;

  constructor(count: number) {
    let capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.left = new Int32Array(capacity).fill(-1);
    this.right = new Int32Array(capacity);
    this.rank = new Int32Array(capacity);
    this.merged = new Int32Array(capacity);
  }

  /** Slot of the pair, or -1. */
  find(a: number, b: number): number {
    for (let slot = (Math.imul(a, 0x9e3779b1) ^ b) & this.mask; ; slot = (slot + 1) & this.mask) {
      const l = this.left[slot]!;
      if (l === -1) return -1;
      if (l === a && this.right[slot] === b) return slot;
    }
  }

  /** A repeated pair keeps its last rank, as the `tokenizers` library does. */
  set(a: number, b: number, rank: number, merged: number): void {
    let slot = (Math.imul(a, 0x9e3779b1) ^ b) & this.mask;
    while (this.left[slot] !== -1 && !(this.left[slot] === a && this.right[slot] === b)) {
      slot = (slot + 1) & this.mask;
    }
    this.left[slot] = a;
    this.right[slot] = b;
    this.rank[slot] = rank;
    this.merged[slot] = merged;
  }
}

/**
 * BPE over one piece, given as its byte-token ids (the array is reused): a linked list of
 * symbols and a min-heap of candidate merges keyed by (rank, position); stale heap entries are
 * skipped. O(n log n), so a 100 KB run without spaces is fine.
 */
export function applyMerges(symbols: number[], merges: MergeTable): number[] {
  const sym = symbols;
  const n = sym.length;
  if (n < 2) return sym;
  const next = Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1));
  const prev = Array.from({ length: n }, (_, i) => i - 1);
  const heap = new BinaryHeap<Candidate>(mergesFirst);
  const push = (i: number) => {
    const j = next[i]!;
    const slot = j < 0 ? -1 : merges.find(sym[i]!, sym[j]!);
    if (slot >= 0) heap.push([merges.rank[slot]!, i, sym[i]!, sym[j]!]);
  };
  for (let i = 0; i + 1 < n; i++) push(i);
  for (let top = heap.pop(); top; top = heap.pop()) {
    const [, i, left, right] = top;
    const j = next[i]!;
    // Skip entries whose symbols changed since they were queued.
    if (sym[i] !== left || j < 0 || sym[j] !== right) continue;
    sym[i] = merges.merged[merges.find(left, right)]!;
    sym[j] = -1;
    next[i] = next[j]!;
    if (next[j]! >= 0) prev[next[j]!] = i;
    if (prev[i]! >= 0) push(prev[i]!);
    push(i);
  }
  const out: number[] = [];
  for (let i = 0; i >= 0; i = next[i]!) out.push(sym[i]!);
  return out;
}
