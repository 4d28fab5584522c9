/**
 * Serves requests one at a time, in arrival order. A request can be cancelled while queued
 * (it is dropped at once) or while running (the job sees `cancelled()` turn true at its next
 * check and stops, freeing what it held). A failing job never stalls the queue.
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

interface Entry<T> {
  id: number;
  run: (ctx: JobContext) => Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
  cancelled: boolean;
}

export class SerialQueue {
  private readonly waiting: Array<Entry<unknown>> = [];
  private running: Entry<unknown> | null = null;

  get size(): number {
    return this.waiting.length + (this.running ? 1 : 0);
  }

  push<T>(id: number, run: (ctx: JobContext) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ id, run, resolve, reject, cancelled: false } as Entry<unknown>);
      void this.pump();
    });
  }

  /** Cancels a queued or running request; false when no such request is pending. */
  cancel(id: number): boolean {
    const index = this.waiting.findIndex((e) => e.id === id);
    if (index >= 0) {
      const [entry] = this.waiting.splice(index, 1);
      entry!.reject(new AbortedError('The request was aborted while queued'));
      return true;
    }
    if (this.running?.id === id) {
      this.running.cancelled = true;
      return true;
    }
    return false;
  }

  /** Rejects everything pending (used on dispose). */
  rejectAll(error: Error): void {
    for (const e of this.waiting.splice(0)) e.reject(error);
    if (this.running) this.running.cancelled = true;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    const entry = this.waiting.shift();
    if (!entry) return;
    this.running = entry;
    const ctx: JobContext = {
      cancelled: () => entry.cancelled,
      throwIfCancelled: () => {
        if (entry.cancelled) throw new AbortedError('The request was aborted while running');
      },
    };
    try {
      const value = await entry.run(ctx);
      if (entry.cancelled) entry.reject(new AbortedError('The request was aborted while running'));
      else entry.resolve(value);
    } catch (e) {
      entry.reject(e);
    } finally {
      this.running = null;
      void this.pump();
    }
  }
}
