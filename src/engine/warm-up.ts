/**
 * The engine's own warm-up: one small decision after load, so that the browser's wasm tier-up
 * (and shader compilation) happen here rather than in the page's first request, and so that
 * Chromium has optimised code to keep for the next visit: it caches a module's compiled code only
 * once enough of it has tiered up, which a visit that only loads and asks two short questions
 * does not reach (docs/benchmarks.md, fourth and fifth rounds).
 *
 * It gives way to a request that arrives meanwhile (that request compiles the same code and need
 * not wait for an answer nobody reads): between its stages it yields a task, so the request's
 * message is seen, and stops there. On WASM it tries again once the queue has been empty for
 * WARM_UP_IDLE_MS (so the rest of a burst of requests does not wait behind it), up to
 * WARM_UP_TRIES times; on WebGPU it does not, since leaving compiled wasm for the next visit is
 * WASM's concern and one stage on a slow adapter can hold a request for seconds. It is not
 * counted and never reads or fills the prefix cache.
 */
import { AbortedError } from '../wire/errors.js';
import type { JobContext, LaneQueue } from '../core/queue.js';

export const WARM_UP_TRIES = 3;
const WARM_UP_IDLE_MS = 250;

export interface WarmUpHost {
  modelName: string;
  queue: LaneQueue;
  /** A decision without test hooks and without the prefix cache. */
  decide(body: unknown, ctx: JobContext): Promise<unknown>;
  /** The counters the decision moves; put back as they were after each try. */
  counters: object;
  disposed(): boolean;
  /** Called as each try reaches a stage; the try waits for it (EngineHooks.warmUpStage). */
  stage?(tryNumber: number, queued: () => number, cancelled: () => boolean): Promise<void>;
  /** The finished try's duration (ms). */
  finished(ms: number): void;
  /** How long the queue must stay empty before a try after the first (default WARM_UP_IDLE_MS). */
  idleMs?: number;
  /** How many tries at most (default WARM_UP_TRIES; the engine gives WebGPU one). */
  tries?: number;
}

export interface WarmUp {
  /** Settles when it has finished, failed, or given way on its last try. */
  settled: Promise<void>;
  /** It is in the queue now (waiting or running), not between tries. */
  inQueue(): boolean;
}

export function warmUp(host: WarmUpHost): WarmUp {
  const body = {
    model: host.modelName,
    state: 'warm-up',
    questions: { w: { type: 'choice', criteria: { a: null, b: null } } },
  };
  let tries = 0;
  const job = async (ctx: JobContext) => {
    const tryNumber = ++tries;
    const before = { ...host.counters };
    const givesWay = () => ctx.cancelled() || host.queue.size > 1;
    const warm: JobContext = {
      cancelled: givesWay,
      throwIfCancelled: () => {
        if (givesWay()) throw new AbortedError('The warm-up gave way to a request');
      },
      enter: async () => {
        await host.stage?.(
          tryNumber,
          () => host.queue.size,
          () => ctx.cancelled(),
        );
        await nextTask(0);
      },
    };
    const started = performance.now();
    try {
      await host.decide(body, warm);
      host.finished(performance.now() - started);
    } finally {
      Object.assign(host.counters, before);
    }
  };
  const idle = async () => {
    do await nextTask(host.idleMs ?? WARM_UP_IDLE_MS);
    while (host.queue.size > 0 && !host.disposed());
  };
  let inQueue = false;
  const queued = (): Promise<void> => {
    inQueue = true;
    return host.queue.push(-1, job).then(
      () => {
        inQueue = false;
      },
      async (e: unknown) => {
        inQueue = false;
        // A failure changes nothing: the first request reports the problem, if it persists.
        const most = host.tries ?? WARM_UP_TRIES;
        if (!(e instanceof AbortedError) || tries >= most || host.disposed()) return;
        await idle();
        if (!host.disposed()) await queued();
      },
    );
  };
  return { settled: queued(), inQueue: () => inQueue };
}

function nextTask(ms: number): Promise<void> {
  return new Promise((next) => setTimeout(next, ms));
}
