/**
 * The page's requests to its engine worker: each sent in order with an id, answered, cancelled
 * or failed exactly once; a lost worker replaced (one restart at a time) and the requests queued
 * behind the one it was running sent again, in their order. createClef (clef.ts) holds one.
 */
import * as Comlink from 'comlink';
import { validateRequest } from '../protocol/validate.js';
import { AbortedError, DisposedError, EngineError, WorkerLostError } from '../wire/errors.js';
import { type AnswerWire, type DecisionWire, type WireResult } from '../wire/wire.js';
import { fromWireError } from '../wire/error-wire.js';
import type { DeviceName } from '../wire/devices.js';
import type { HostInfo } from '../wire/telemetry.js';
import type { CalibrationAsk } from '../calibrate/index.js';
import type { Connection } from './connection.js';
import { decisionOf } from './answer.js';

export function unwrap<T>(result: WireResult<T>): T {
  if (result.ok) return result.value;
  throw fromWireError(result.error);
}

/** A decision the worker made, and the engine that made it (what a record names). */
export interface LocalAnswer {
  wire: DecisionWire;
  /** The answering engine's info at its load: its package and its runtime. */
  loaded: HostInfo;
  /** The device that ran the decision. */
  device: DeviceName;
}

/** A request the page sent (or will send) to the worker and has no answer for yet. */
interface Pending {
  id: number;
  body: unknown;
  /** Calibrated answers asked for (null: the plain decision). */
  ask: CalibrationAsk | null;
  /** The head's logits asked for. */
  logits: boolean;
  resolve: (answer: LocalAnswer) => void;
  reject: (error: unknown) => void;
  /** The worker it was sent to; null while waiting for a replacement worker. */
  sentTo: Connection | null;
  aborted: boolean;
}

/** Structured clone refused the body (a function, a symbol): answer as the contract says. */
function cloneFailure(body: unknown, error: unknown): Error {
  validateRequest(body); // throws the 422 for what is not JSON
  return new EngineError(`The request could not be sent to the engine: ${String(error)}`);
}

export class WorkerSession {
  private ended = false;
  private nextId = 1;
  /** In send order: the worker serves its queue in that order too. */
  private readonly pending = new Map<number, Pending>();
  private current: Connection | null;
  private restarting: Promise<Connection> | null = null;
  /** Starts a replacement worker with the package loaded. */
  private readonly restart: () => Promise<Connection>;

  constructor(first: Connection, restart: () => Promise<Connection>) {
    this.current = this.watch(first);
    this.restart = restart;
  }

  get disposed(): boolean {
    return this.ended;
  }

  private settle(p: Pending, work: () => LocalAnswer): void {
    if (this.pending.get(p.id) !== p) return;
    this.pending.delete(p.id);
    try {
      p.resolve(work());
    } catch (e) {
      p.reject(e);
    }
  }

  private send(p: Pending, conn: Connection): void {
    p.sentTo = conn;
    const options = {
      ...(p.ask === null ? {} : { calibration: p.ask }),
      ...(p.logits ? { logits: true } : {}),
    };
    const answered = (answer: AnswerWire): LocalAnswer => ({
      wire: decisionOf(answer, p.body),
      loaded: conn.info,
      device: answer.device,
    });
    conn.api.systemone(p.id, p.body, options).then(
      (result) => p.sentTo === conn && this.settle(p, () => answered(unwrap(result))),
      (error: unknown) =>
        p.sentTo === conn &&
        this.settle(p, () => {
          throw cloneFailure(p.body, error);
        }),
    );
  }

  /**
   * The worker is gone. The request it was running (the oldest one sent to it) fails with
   * WorkerLostError: it may be what killed the worker, so it is not retried. Requests queued
   * behind it go to a new worker, in their order, and are answered as if nothing happened.
   */
  private onLost(conn: Connection, reason: string): void {
    if (this.ended || conn !== this.current) return;
    conn.close();
    this.current = null;
    const sent = [...this.pending.values()].filter((p) => p.sentTo === conn);
    sent.forEach((p, index) => {
      p.sentTo = null;
      if (p.aborted) {
        this.pending.delete(p.id);
        p.reject(new AbortedError('The request was aborted while queued'));
      } else if (index === 0) {
        this.pending.delete(p.id);
        p.reject(
          new WorkerLostError(
            `The engine's worker was lost while this request was running: ${reason}`,
            { reason },
          ),
        );
      }
    });
    void this.connection().then(
      (fresh) => {
        for (const p of this.pending.values()) if (!p.sentTo) this.send(p, fresh);
      },
      () => undefined,
    );
  }

  private watch(conn: Connection): Connection {
    void conn.lost.then((reason) => this.onLost(conn, reason));
    return conn;
  }

  /** The live worker, or a new one when the last was lost (one restart at a time). */
  connection(): Promise<Connection> {
    if (this.current) return Promise.resolve(this.current);
    if (this.ended) return Promise.reject(new DisposedError());
    this.restarting ??= this.replace();
    return this.restarting;
  }

  private async replace(): Promise<Connection> {
    try {
      const fresh = await this.restart();
      if (this.ended) {
        fresh.close();
        throw new DisposedError();
      }
      this.current = this.watch(fresh);
      return this.current;
    } catch (e) {
      const error = new WorkerLostError(
        `The engine's worker was lost and could not be restarted: ${(e as Error).message}`,
      );
      for (const p of [...this.pending.values()]) {
        if (p.sentTo) continue;
        this.pending.delete(p.id);
        p.reject(error);
      }
      throw error;
    } finally {
      this.restarting = null;
    }
  }

  /**
   * Decides `body` in the worker; `askOf` says which calibrated answers (read once the request
   * is known to go ahead), `logits` whether the head's logits come too. An abort cancels it in
   * the worker, or drops it while it waits.
   */
  decide(
    body: unknown,
    signal: AbortSignal | undefined,
    askOf: () => CalibrationAsk | null,
    logits = false,
  ): Promise<LocalAnswer> {
    if (this.ended) return Promise.reject(new DisposedError());
    if (signal?.aborted) return Promise.reject(new AbortedError());
    let ask: CalibrationAsk | null;
    try {
      ask = askOf();
    } catch (e) {
      return Promise.reject(e);
    }
    const id = this.nextId++;
    return new Promise<LocalAnswer>((resolve, reject) => {
      const onAbort = () => {
        if (this.pending.get(id) !== p) return;
        p.aborted = true;
        if (p.sentTo) void p.sentTo.api.cancel(id);
        else
          this.settle(p, () => {
            throw new AbortedError('The request was aborted while queued');
          });
      };
      const done = () => signal?.removeEventListener('abort', onAbort);
      const p: Pending = {
        id,
        body,
        ask,
        logits,
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
        sentTo: null,
        aborted: false,
      };
      this.pending.set(id, p);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.current) this.send(p, this.current);
      else
        void this.connection().then(
          (conn) => !p.sentTo && this.pending.has(id) && this.send(p, conn),
          () => undefined,
        );
    });
  }

  /** Disposes the engine and ends the worker; every request not answered rejects DisposedError. */
  async dispose(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const conn = this.current;
    this.current = null;
    try {
      if (conn) await Promise.race([conn.api.dispose(), conn.lost]);
    } finally {
      for (const p of [...this.pending.values()]) {
        this.pending.delete(p.id);
        p.reject(new DisposedError());
      }
      if (conn) {
        conn.api[Comlink.releaseProxy]();
        conn.close();
      }
    }
  }
}
