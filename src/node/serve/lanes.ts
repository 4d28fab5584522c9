/**
 * The server's decision queue: jobs start in arrival order, up to `lanes` at once (one per
 * engine worker). A job still waiting can be cancelled (dropped at once); one that started
 * runs to its end and then rejects with AbortedError, as src/core/queue.ts's SerialQueue does.
 */
import { AbortedError } from '../../wire/errors.js';

interface Waiting {
  id: number;
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class LaneQueue {
  private readonly waiting: Waiting[] = [];
  private running = 0;
  private readonly cancelledWhileRunning = new Set<number>();
  private readonly runningIds = new Set<number>();

  constructor(private readonly lanes: number) {}

  /** Jobs waiting or running. */
  get size(): number {
    return this.waiting.length + this.running;
  }

  push<T>(id: number, run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ id, run, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  /** Drops a job that has not started yet (it rejects with AbortedError). */
  cancel(id: number): void {
    if (this.runningIds.has(id)) this.cancelledWhileRunning.add(id);
    const index = this.waiting.findIndex((w) => w.id === id);
    if (index < 0) return;
    const [entry] = this.waiting.splice(index, 1);
    entry!.reject(new AbortedError('The request was aborted while queued'));
  }

  private pump(): void {
    while (this.running < this.lanes && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      this.runningIds.add(job.id);
      const settle = () => {
        this.running--;
        this.runningIds.delete(job.id);
        const cancelled = this.cancelledWhileRunning.delete(job.id);
        this.pump();
        return cancelled;
      };
      job.run().then(
        (value) => {
          if (settle()) job.reject(new AbortedError('The request was aborted while running'));
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
