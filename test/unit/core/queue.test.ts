// The one decision queue (src/core/queue.ts) of the page engine, the Node engine and the server:
// one client's jobs start in arrival order, never more than `lanes` at once; between clients the
// one that used the least engine time goes next; a full queue refuses the largest holder's
// excess, not a newcomer; a waiting job can be cancelled; one cancelled while running sees it
// and then rejects; dispose rejects what waits; a failing job never stalls the queue.
import { describe, expect, it } from 'vitest';
import { LaneQueue, QueueFullError, type JobContext } from '../../../src/core/queue.js';
import { AbortedError } from '../../../src/wire/errors.js';

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

  it("starts a newcomer before a flooding client's backlog; each client's jobs in its own order", async () => {
    const q = new LaneQueue(1);
    const started: string[] = [];
    const gates: Array<ReturnType<typeof gate>> = [];
    const job = (name: string) => async () => {
      started.push(name);
      const g = gate();
      gates.push(g);
      await g.opened;
      return name;
    };
    const all: Array<Promise<string>> = [];
    for (let i = 0; i < 6; i++) all.push(q.push(i, job(`heavy${i}`), '127.0.0.2'));
    await Promise.resolve();
    all.push(q.push(100, job('normal0'), '127.0.0.1'));
    all.push(q.push(101, job('normal1'), '127.0.0.1'));
    expect(q.sizeOf('127.0.0.2')).toBe(6);
    expect(q.sizeOf('127.0.0.1')).toBe(2);
    // Release the running job, one at a time, and watch what starts next.
    for (let n = 0; n < 8; n++) {
      await new Promise((r) => setTimeout(r, 2));
      gates[n]!.open();
    }
    await Promise.all(all);
    // heavy0 was running when the normal client came; its first job goes next (before the
    // heavy backlog), and its two jobs keep their own order.
    expect(started.slice(0, 2)).toEqual(['heavy0', 'normal0']);
    expect(started.indexOf('normal1')).toBeLessThan(5);
    expect(started.filter((s) => s.startsWith('heavy'))).toEqual(
      Array.from({ length: 6 }, (_, i) => `heavy${i}`),
    );
  });

  it('charges time: a client whose jobs run 10x longer gets about the same time, not the same count', async () => {
    const q = new LaneQueue(1);
    const started: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const all: Array<Promise<unknown>> = [];
    for (let i = 0; i < 4; i++) {
      all.push(q.push(i, () => (started.push('slow'), sleep(40)), 'slow'));
    }
    for (let i = 0; i < 20; i++) {
      all.push(q.push(10 + i, () => (started.push('fast'), sleep(4)), 'fast'));
    }
    await Promise.all(all);
    // Once the first slow job (40 ms) has been charged, the fast client runs several jobs
    // before the slow one's next (arrival order would have run all 4 slow ones first).
    const secondSlow = started.indexOf('slow', 1);
    expect(started.slice(0, secondSlow).filter((s) => s === 'fast').length).toBeGreaterThanOrEqual(
      3,
    );
  });

  it("when full, pushes out the largest holder's newest waiting job, not a newcomer", async () => {
    const q = new LaneQueue(1, 4);
    const g = gate();
    const flood = Array.from({ length: 4 }, (_, i) =>
      q.push(i, async () => (await g.opened, `a${i}`), 'a'),
    );
    const refused = await q.push(9, async () => 'a9', 'a').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueFullError);
    expect((refused as QueueFullError).ownShare).toBe(true);
    expect((refused as Error).message).toMatch(/This client has 4 of the server's 4 queued/);
    const newcomer = q.push(20, async () => 'b', 'b');
    await expect(flood[3]).rejects.toBeInstanceOf(QueueFullError);
    expect(q.size).toBe(4);
    g.open();
    expect(await newcomer).toBe('b');
    expect(await Promise.all(flood.slice(0, 3))).toEqual(['a0', 'a1', 'a2']);
  });

  it('tells a running job it was cancelled; cancel says whether it found the job', async () => {
    const q = new LaneQueue(1);
    const g = gate();
    const seen: boolean[] = [];
    const running = q.push(1, async (ctx: JobContext) => {
      seen.push(ctx.cancelled());
      await g.opened;
      seen.push(ctx.cancelled());
      ctx.throwIfCancelled();
      return 'not reached';
    });
    const waiting = q.push(2, async () => 'second');
    expect(q.cancel(1)).toBe(true);
    expect(q.cancel(2)).toBe(true);
    expect(q.cancel(2)).toBe(false);
    expect(q.cancel(99)).toBe(false);
    g.open();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect((error as Error).message).toMatch(/while running/);
    expect(seen).toEqual([false, true]);
    await expect(waiting).rejects.toThrow(/while queued/);
    expect(q.size).toBe(0);
    expect(await q.push(3, async (ctx) => ctx.cancelled())).toBe(false);
  });

  it('rejectAll rejects every waiting job with its error and cancels the running one', async () => {
    const q = new LaneQueue(1);
    const g = gate();
    let cancelledSeen = false;
    const running = q.push(1, async (ctx) => {
      await g.opened;
      cancelledSeen = ctx.cancelled();
      return 'done';
    });
    const waiting = [q.push(2, async () => 2, 'a'), q.push(3, async () => 3, 'b')];
    const disposed = new Error('disposed');
    q.rejectAll(disposed);
    for (const w of waiting) await expect(w).rejects.toBe(disposed);
    expect(q.size).toBe(1);
    g.open();
    await expect(running).rejects.toBeInstanceOf(AbortedError);
    expect(cancelledSeen).toBe(true);
    expect(q.size).toBe(0);
    expect(await q.push(4, async () => 'after')).toBe('after');
  });

  it('goes on after a job that throws, at once or later', async () => {
    const q = new LaneQueue(1);
    const syncThrow = q.push(1, (() => {
      throw new Error('at once');
    }) as () => Promise<never>);
    const asyncThrow = q.push(2, async () => {
      throw new Error('later');
    });
    const after = q.push(3, async () => 'after');
    await expect(syncThrow).rejects.toThrow('at once');
    await expect(asyncThrow).rejects.toThrow('later');
    expect(await after).toBe('after');
    expect(q.size).toBe(0);
  });
});
