/**
 * A binary heap of tuples under a strict order `before(a, b)` (a pops first): the tokenizer's
 * merge queue (tokenizer-bpe.ts) and the BPE trainer's pair queue (src/build/train/bpe.ts).
 * Ties must be broken inside `before`, so the pop order is deterministic.
 */
export class BinaryHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        let m = i;
        if (l < items.length && this.before(items[l]!, items[m]!)) m = l;
        if (l + 1 < items.length && this.before(items[l + 1]!, items[m]!)) m = l + 1;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}
