// The engine's warm-up (src/engine/warm-up.ts) on a real one-lane queue (src/core/queue.ts)
// with a fake decision of three stages: it gives way to requests, runs again once the queue has
// been idle, gives up after WARM_UP_TRIES tries, never retries a failure, leaves the counters as
// they were, and says when it is in the queue.
import { describe, expect, it } from 'vitest';
import { LaneQueue, type JobContext } from '../../../src/core/queue.js';
import { WARM_UP_TRIES, warmUp, type WarmUpHost } from '../../../src/engine/warm-up.js';

function host(decide: (ctx: JobContext) => Promise<void>) {
  const log: string[] = [];
  const h: WarmUpHost & { log: string[]; finishedMs: number[] } = {
    modelName: 'clef-nano',
    queue: new LaneQueue(1),
    counters: { decisions: 0 },
    disposed: () => false,
    idleMs: 20,
    decide: async (_body, ctx) => {
      log.push('warm-up starts');
      await decide(ctx);
      log.push('warm-up done');
    },
    finished: (ms) => h.finishedMs.push(ms),
    log,
    finishedMs: [],
  };
  return h;
}

/** Three stages of 10 ms, each entered (a task yield) and checked, as the engine's decisions are. */
const stages = (counters: { decisions: number }) => async (ctx: JobContext) => {
  for (let s = 0; s < 3; s++) {
    await new Promise((next) => setTimeout(next, 10));
    await ctx.enter!('backbone');
    ctx.throwIfCancelled();
  }
  counters.decisions++;
};

const request = (h: { queue: LaneQueue; log: string[] }, name: string) =>
  h.queue.push(1, async () => {
    h.log.push(name);
  });

describe('warmUp', () => {
  it('finishes when nothing comes in, and puts the counters back', async () => {
    const h = host(async (ctx) => stages(h.counters as { decisions: number })(ctx));
    await warmUp(h).settled;
    expect(h.log).toEqual(['warm-up starts', 'warm-up done']);
    expect(h.finishedMs).toHaveLength(1);
    expect(h.counters).toEqual({ decisions: 0 });
  });

  it('gives way to a request, then runs again once the queue has been idle', async () => {
    const h = host(async (ctx) => stages(h.counters as { decisions: number })(ctx));
    const w = warmUp(h);
    expect(w.inQueue()).toBe(true);
    await request(h, 'request');
    // Between tries it waits for quiet, out of the queue: a second request goes straight in.
    expect(w.inQueue()).toBe(false);
    await request(h, 'second request');
    await w.settled;
    expect(h.log).toEqual([
      'warm-up starts',
      'request',
      'second request',
      'warm-up starts',
      'warm-up done',
    ]);
    expect(h.finishedMs).toHaveLength(1);
    expect(w.inQueue()).toBe(false);
  });

  it(`gives up after ${WARM_UP_TRIES} tries that each gave way`, async () => {
    const h = host(async (ctx) => stages(h.counters as { decisions: number })(ctx));
    const w = warmUp(h);
    const starts = () => h.log.filter((l) => l === 'warm-up starts').length;
    for (let k = 0; k < WARM_UP_TRIES; k++) {
      // Each request arrives while a try is in its first stage.
      while (starts() < k + 1) await new Promise((next) => setTimeout(next, 1));
      await request(h, `request ${k}`);
    }
    await w.settled;
    expect(h.log.filter((l) => l === 'warm-up starts')).toHaveLength(WARM_UP_TRIES);
    expect(h.log).not.toContain('warm-up done');
    expect(h.finishedMs).toEqual([]);
  });

  it('with one try (the engine on WebGPU), gives way and is done', async () => {
    const h = host(async (ctx) => stages(h.counters as { decisions: number })(ctx));
    h.tries = 1;
    const w = warmUp(h);
    await request(h, 'request');
    await w.settled;
    expect(h.log).toEqual(['warm-up starts', 'request']);
    expect(h.finishedMs).toEqual([]);
  });

  it('does not try again after a failure, and the queue goes on', async () => {
    const h = host(async () => {
      throw new Error('no runtime');
    });
    await warmUp(h).settled;
    await request(h, 'request');
    expect(h.log).toEqual(['warm-up starts', 'request']);
    expect(h.finishedMs).toEqual([]);
  });
});
