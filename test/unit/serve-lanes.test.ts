// The server's decision queue with N lanes (src/node/serve/lanes.ts): jobs start in arrival
// order, never more than N at once; a waiting job can be cancelled; one cancelled while running
// finishes and then rejects, as SerialQueue's do.
import { describe, expect, it } from 'vitest';
import { LaneQueue } from '../../src/node/serve/lanes.js';
import { AbortedError } from '../../src/wire/errors.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('LaneQueue', () => {
  it('starts jobs in arrival order, at most `lanes` at once', async () => {
    const q = new LaneQueue(2);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const gates = Array.from({ length: 5 }, gate);
    const results = gates.map((g, i) =>
      q.push(i + 1, async () => {
        started.push(i + 1);
        most = Math.max(most, ++running);
        await g.opened;
        running--;
        return i + 1;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    expect(q.size).toBe(5);
    for (const g of [gates[1]!, gates[0]!, gates[2]!, gates[3]!, gates[4]!]) g.open();
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4, 5]);
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(q.size).toBe(0);
  });

  it('drops a waiting job on cancel; a running one finishes, then rejects', async () => {
    const q = new LaneQueue(1);
    const g = gate();
    let ranSecond = false;
    const first = q.push(1, async () => {
      await g.opened;
      return 'first';
    });
    const second = q.push(2, async () => {
      ranSecond = true;
      return 'second';
    });
    const third = q.push(3, async () => 'third');
    q.cancel(2);
    q.cancel(1);
    await expect(second).rejects.toBeInstanceOf(AbortedError);
    g.open();
    await expect(first).rejects.toBeInstanceOf(AbortedError);
    expect(await third).toBe('third');
    expect(ranSecond).toBe(false);
  });
});
