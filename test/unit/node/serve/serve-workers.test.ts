// `clef-web serve --workers N` runs N engines in worker threads.
// Proven here on the tiny package: answers byte for byte what one in-process engine gives, with
// both workers busy at once (the whole request is routed in a worker: JSON, validation,
// tokenizing and the model); errors keep their status and body. The pool holds no queue (the
// server's is the one a request waits in): a job past its N workers is refused, and a worker
// that exits fails its job and is replaced.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import { startEnginePool, type EnginePool } from '../../../../src/node/serve/engine-pool.js';
import {
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let pool: EnginePool;
let server: RunningServer;
let reference: RunningServer;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-serve-workers-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  pool = await startEnginePool(tiny.dir, 2);
  server = await startServer(pool, { port: 0 });
  reference = await startServer(nodeEngineBackend(engine), { port: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await reference?.close();
  await pool?.dispose();
  await engine?.dispose();
  tiny?.remove();
});

const body = (state: string, questions: object = { q: { type: 'noul' } }) =>
  JSON.stringify({ model: TINY_MODEL, state, questions });

async function post(url: string, text: string) {
  const res = await fetch(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
  });
  return { status: res.status, text: await res.text() };
}

/**
 * Watches the pool's worker threads from this thread: a job (a `route` or `decide` message)
 * posted to a worker is outstanding until that worker's reply with its id is delivered. The
 * first reply is held back until another worker has a job too (or `holdMs` has passed), so the
 * overlap does not depend on how fast this machine runs a decision: a pool that gave out one job
 * at a time would post no second job while the first is outstanding.
 */
function watchWorkers(holdMs: number) {
  const outstanding = new Map<Worker, Set<number>>();
  let mostBusy = 0;
  const held: Array<() => void> = [];
  let holding = true;
  let timer: NodeJS.Timeout | undefined;
  const release = () => {
    holding = false;
    clearTimeout(timer);
    for (const deliver of held.splice(0)) deliver();
  };
  const watch = (worker: Worker, jobs: Set<number>) => {
    const emit = worker.emit;
    worker.emit = function (event: string | symbol, ...args: any[]) {
      const id = args[0]?.id;
      if (event !== 'message' || !jobs.has(id)) return emit.call(this, event, ...args);
      const deliver = () => {
        jobs.delete(id);
        emit.call(this, event, ...args);
      };
      if (!holding || mostBusy >= 2) deliver();
      else {
        held.push(deliver);
        timer ??= setTimeout(release, holdMs);
      }
      return true;
    };
  };
  const post = Worker.prototype.postMessage;
  const spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
    this: Worker,
    message: any,
    transfer?: any,
  ) {
    if (message?.type === 'route' || message?.type === 'decide') {
      let jobs = outstanding.get(this);
      if (!jobs) {
        jobs = new Set();
        outstanding.set(this, jobs);
        watch(this, jobs);
      }
      jobs.add(message.id);
      const busy = [...outstanding.values()].filter((j) => j.size > 0).length;
      mostBusy = Math.max(mostBusy, busy);
      if (mostBusy >= 2) queueMicrotask(release);
    }
    return post.call(this, message, transfer);
  });
  return {
    /** The most workers that had a job outstanding at the same moment. */
    mostBusy: () => mostBusy,
    /** Workers that were given a job. */
    workers: () => outstanding.size,
    stop() {
      spy.mockRestore();
      release();
      for (const worker of outstanding.keys()) delete (worker as any).emit;
    },
  };
}

describe('serve --workers 2', () => {
  it('answers 24 concurrent requests byte for byte as one in-process engine does, both workers busy at once', async () => {
    const bodies = Array.from({ length: 24 }, (_, i) =>
      body(`request ${i}: ${'words of state '.repeat(i % 7)}`, {
        a: { type: 'noul' },
        b: { type: 'choice', criteria: { x: 'the x one', y: null, z: `z ${i}` } },
        c: { type: 'score', criteria: ['low', 'mid', 'high'] },
      }),
    );
    const workers = watchWorkers(20_000);
    let got: Array<Awaited<ReturnType<typeof post>>>;
    try {
      got = await Promise.all(bodies.map((b) => post(server.url, b)));
    } finally {
      workers.stop();
    }
    expect(workers.workers(), 'workers given a job').toBe(2);
    expect(workers.mostBusy(), 'workers with a job outstanding at the same moment').toBe(2);
    for (let i = 0; i < bodies.length; i++) {
      const want = await post(reference.url, bodies[i]!);
      expect(got[i]!.status).toBe(200);
      expect(got[i]!.text).toBe(want.text);
    }
  });

  it('errors keep their status and body (422, 400 unknown model, max_tokens_exceeded, not JSON)', async () => {
    for (const b of [
      JSON.stringify({ model: TINY_MODEL, questions: {} }),
      body('hi').replace(TINY_MODEL, 'no-such-model'),
      body('word '.repeat(3000)),
      '{"model": ', // not JSON: parsed in the worker now
    ]) {
      const [got, want] = [await post(server.url, b), await post(reference.url, b)];
      expect(got.status).toBeGreaterThanOrEqual(400);
      expect(got).toEqual(want);
    }
  });
});

describe('the engine pool holds no queue of its own', () => {
  const decision = (i: number) => ({
    model: TINY_MODEL,
    state: `pool job ${i}`,
    questions: { q: { type: 'noul' } },
  });

  it('refuses a job past its N workers at once, and takes one again when a worker is free', async () => {
    const jobs = [pool.decide(decision(1)), pool.decide(decision(2))];
    await expect(pool.decide(decision(3))).rejects.toThrow(/All 2 engine workers are deciding/);
    const answers = await Promise.all(jobs);
    expect(answers.map((a) => a.json)).toEqual([
      (await engine.decide(decision(1))).json,
      (await engine.decide(decision(2))).json,
    ]);
    expect((await pool.decide(decision(4))).json).toBe((await engine.decide(decision(4))).json);
  });

  it('fails the job of a worker that exits, starts another in its place, and decides on it', async () => {
    // The job is posted to no one and its worker ended while the pool waits for the answer. It
    // is not ended inside a run: onnxruntime-node aborts the whole process when a worker thread is
    // ended while a session runs in it ("terminate called after throwing an instance of
    // 'Napi::Error'"; a scratch loop ending a worker 0-4 ms into a decision aborted within two
    // tries, 3 times of 3; ended with its job unposted, 60 of 60 went on).
    const victims: Worker[] = [];
    const post = Worker.prototype.postMessage;
    const spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
      this: Worker,
      message: any,
      transfer?: any,
    ) {
      if (message?.type === 'decide') {
        victims.push(this);
        return;
      }
      return post.call(this, message, transfer);
    });
    let lost: Promise<unknown>;
    try {
      lost = pool.decide(decision(5));
    } finally {
      spy.mockRestore();
    }
    expect(victims).toHaveLength(1);
    await victims[0]!.terminate();
    await expect(lost).rejects.toThrow(/The engine worker exited \(1\) while deciding/);
    // Both slots take a job again: the one refilled waits for its new worker to load.
    const again = await Promise.all([pool.decide(decision(6)), pool.decide(decision(7))]);
    expect(again.map((a) => a.json)).toEqual([
      (await engine.decide(decision(6))).json,
      (await engine.decide(decision(7))).json,
    ]);
  }, 60_000);
});
