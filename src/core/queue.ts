/**
 * The one decision queue of the page engine, the Node engine and `clef-web serve`: up to `lanes`
 * jobs run at once, and the next one to start is chosen fairly between clients
 * (docs/reliability.md, "Fairness"). The page's engine and the Node engine run one lane and one
 * client (so: one job at a time, in arrival order); a shared engine in the browser
 * (src/engine/shared-engine.ts) runs one lane, its clients the tabs; `clef-web serve` runs one
 * lane per engine worker, its clients the remote addresses.
 *
 * - Each client has its own first-in-first-out line, so
 *   one client's requests start in the order it sent them.
 * - Between clients, the next job comes from the waiting client that has used the least engine
 *   time: each job charges its client the milliseconds it ran (a provisional average while it
 *   runs, so several lanes are not all handed to one client before it is charged). A client
 *   that was idle starts level with the clients being served, not with credit saved up. So a
 *   client whose requests are expensive (1 MiB bodies, long states) gets the same share of time
 *   as one whose requests are cheap, not the same number of requests, and a client sending one
 *   request at a time waits for at most the jobs already running.
 * - `capacity` jobs may wait or run in all. When the queue is full, a new job from a client that
 *   holds fewer than the largest holder pushes out that holder's newest waiting job (which
 *   rejects with `QueueFullError`); otherwise the new job is refused. So a flooding client is
 *   refused its own excess, not the other clients their share.
 *
 * A job can be cancelled while waiting (it is dropped at once, rejecting with AbortedError) or
 * while running (its `cancelled()` turns true, so a long job stops at its next check; whatever it
 * returns, it then rejects with AbortedError). A failing job never stalls the queue.
 */
import { AbortedError } from '../wire/errors.js';

/** Where a running decision is; an abort names the stage it stopped in. */
export type DecisionStage = 'encoding' | 'backbone' | 'head';

export interface JobContext {
  /** True once the request was cancelled; long jobs check it between steps. */
  cancelled(): boolean;
  /** Throws AbortedError when cancelled. */
  throwIfCancelled(): void;
  /**
   * Called as a decision reaches a stage (each backbone chunk enters 'backbone' again), so an
   * abort can name where it stopped, and test hooks can act there. Optional: Node callers
   * that never cancel leave it out.
   */
  enter?(stage: DecisionStage): Promise<void> | void;
}

/** Why a job was not queued, or was pushed out of the queue: a full queue. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  /** True when the client's own share was the limit (others' requests were still taken). */
  readonly ownShare: boolean;
  constructor(message: string, ownShare: boolean) {
    super(message);
    this.ownShare = ownShare;
  }
}

interface Job {
  id: number;
  run: (ctx: JobContext) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  cancelled: boolean;
}

interface Flow {
  client: string;
  waiting: Job[];
  running: number;
  /** Engine milliseconds charged to this client (virtual time). */
  used: number;
}

/** Idle clients remembered (with their time used) before the oldest are forgotten. */
const MAX_IDLE_FLOWS = 1024;

export class LaneQueue {
  private readonly flows = new Map<string, Flow>();
  private readonly flowOf = new Map<number, Flow>();
  private readonly running = new Map<number, Job>();
  private size_ = 0;
  /** The time used of the client last started: where an idle client re-enters. */
  private virtualTime = 0;
  /** Running average of a job's engine time, charged provisionally when a job starts. */
  private meanMs = 1;

  constructor(
    private readonly lanes: number,
    private readonly capacity = Infinity,
  ) {}

  /** Jobs waiting or running. */
  get size(): number {
    return this.size_;
  }

  /** Jobs of `client` waiting or running. */
  sizeOf(client: string): number {
    const flow = this.flows.get(client);
    return flow ? flow.waiting.length + flow.running : 0;
  }

  /**
   * Queues `run` for `client` (all jobs without one share a single line, in arrival order).
   * Rejects with QueueFullError when the queue is full and this client holds the most.
   */
  push<T>(id: number, run: (ctx: JobContext) => Promise<T>, client = ''): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.size_ >= this.capacity && !this.pushOutFor(client)) {
        const own = this.sizeOf(client);
        reject(
          new QueueFullError(
            own > 0 && own * this.flowsHolding() >= this.size_
              ? `This client has ${own} of the server's ${this.size_} queued requests, its share; try again shortly`
              : `The server has ${this.size_} requests queued; try again shortly`,
            own > 0,
          ),
        );
        return;
      }
      let flow = this.flows.get(client);
      if (!flow) {
        flow = { client, waiting: [], running: 0, used: this.virtualTime };
        this.flows.set(client, flow);
      } else if (flow.waiting.length === 0 && flow.running === 0) {
        flow.used = Math.max(flow.used, this.virtualTime);
      }
      const job: Job = {
        id,
        run,
        resolve: resolve as (v: unknown) => void,
        reject,
        cancelled: false,
      };
      flow.waiting.push(job);
      this.flowOf.set(id, flow);
      this.size_++;
      this.pump();
    });
  }

  /**
   * Cancels a waiting job (dropped now) or a running one (it sees `cancelled()` and rejects
   * once it returns); false when no such job is here.
   */
  cancel(id: number): boolean {
    const running = this.running.get(id);
    if (running) {
      running.cancelled = true;
      return true;
    }
    const flow = this.flowOf.get(id);
    const index = flow ? flow.waiting.findIndex((w) => w.id === id) : -1;
    if (index < 0) return false;
    const [job] = flow!.waiting.splice(index, 1);
    this.flowOf.delete(id);
    this.size_--;
    this.forgetIfIdle(flow!);
    job!.reject(new AbortedError('The request was aborted while queued'));
    return true;
  }

  /** Rejects every waiting job with `error` and cancels the running ones (dispose). */
  rejectAll(error: Error): void {
    for (const flow of [...this.flows.values()]) {
      for (const job of flow.waiting.splice(0)) {
        this.flowOf.delete(job.id);
        this.size_--;
        job.reject(error);
      }
      this.forgetIfIdle(flow);
    }
    for (const job of this.running.values()) job.cancelled = true;
  }

  /** Clients with at least one job waiting or running. */
  private flowsHolding(): number {
    let n = 0;
    for (const flow of this.flows.values()) if (flow.waiting.length + flow.running > 0) n++;
    return n;
  }

  /**
   * Makes room for `client` by refusing the newest waiting job of the client that holds the
   * most, if that client holds more than `client` will once its job is in. False: no room.
   */
  private pushOutFor(client: string): boolean {
    const mine = this.sizeOf(client) + 1;
    let largest: Flow | undefined;
    for (const flow of this.flows.values()) {
      if (flow.client === client || flow.waiting.length === 0) continue;
      const held = flow.waiting.length + flow.running;
      if (held > mine && (!largest || held > largest.waiting.length + largest.running)) {
        largest = flow;
      }
    }
    if (!largest) return false;
    const held = largest.waiting.length + largest.running;
    const victim = largest.waiting.pop()!;
    this.flowOf.delete(victim.id);
    this.size_--;
    victim.reject(
      new QueueFullError(
        `This client had ${held} of the server's ${this.size_ + 1} queued requests, more than its share, when another client's request came; try again shortly`,
        true,
      ),
    );
    return true;
  }

  /** The waiting client that has used the least time (the first such one on a tie). */
  private next(): Flow | undefined {
    let best: Flow | undefined;
    for (const flow of this.flows.values()) {
      if (flow.waiting.length > 0 && (!best || flow.used < best.used)) best = flow;
    }
    return best;
  }

  private forgetIfIdle(flow: Flow): void {
    if (flow.waiting.length > 0 || flow.running > 0) return;
    // An idle client that used no more than the clients being served has nothing to remember.
    if (flow.used <= this.virtualTime) this.flows.delete(flow.client);
    else if (this.flows.size > MAX_IDLE_FLOWS) {
      for (const f of this.flows.values()) {
        if (f.waiting.length === 0 && f.running === 0) this.flows.delete(f.client);
      }
    }
  }

  private pump(): void {
    while (this.running.size < this.lanes) {
      const flow = this.next();
      if (!flow) return;
      const job = flow.waiting.shift()!;
      // Round robin on ties: the client served goes to the back of the map's order.
      this.flows.delete(flow.client);
      this.flows.set(flow.client, flow);
      this.virtualTime = Math.max(this.virtualTime, flow.used);
      const charged = this.meanMs;
      flow.used += charged;
      flow.running++;
      this.running.set(job.id, job);
      const started = performance.now();
      const settle = () => {
        const ms = performance.now() - started;
        this.meanMs += (ms - this.meanMs) / 8;
        flow.used += ms - charged;
        flow.running--;
        this.size_--;
        this.running.delete(job.id);
        this.flowOf.delete(job.id);
        this.forgetIfIdle(flow);
        this.pump();
      };
      const aborted = () => new AbortedError('The request was aborted while running');
      const ctx: JobContext = {
        cancelled: () => job.cancelled,
        throwIfCancelled: () => {
          if (job.cancelled) throw aborted();
        },
      };
      let ran: Promise<unknown>;
      try {
        ran = Promise.resolve(job.run(ctx));
      } catch (e) {
        ran = Promise.reject(e);
      }
      ran.then(
        (value) => {
          settle();
          if (job.cancelled) job.reject(aborted());
          else job.resolve(value);
        },
        (error: unknown) => {
          settle();
          job.reject(error);
        },
      );
    }
  }
}
