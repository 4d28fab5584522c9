/**
 * `clef-web serve`'s engines: N worker threads (engine-worker.ts), each with its own copy of the
 * package loaded, so decisions run on N cores at once and the HTTP event loop never waits for a
 * tokenizer or a model run. The server's queue (src/core/queue.ts) starts at most `lanes` (= N)
 * decisions at a time, fairly between client addresses; the pool gives each to an idle worker at
 * once, and refuses a job past N rather than hold a second queue. Every worker holds the whole
 * package and its own prefix cache: memory grows with N (docs/reliability.md, "Cores").
 *
 * A worker that dies fails the decision it was running (500) and is replaced; a job given its
 * slot meanwhile waits for the new worker (serve-workers.test.ts kills one).
 *
 * With a record log (`serve --record`), each worker makes every decision's record line and
 * sends it here; this thread appends it to the one file and answers when it is synced, and only
 * then does the worker answer the request (an answered decision is a recorded one).
 */
import type { Worker } from 'node:worker_threads';
import { moduleWorker } from '../module-worker.js';
import type { CalibratedDecision, CalibrationAsk } from '../../calibrate/index.js';
import type { PackageManifest } from '../../core/manifest.js';
import type { ModelCard } from '../../protocol/types.js';
import { EngineError } from '../../wire/errors.js';
import { fromWireError, type WireError } from '../../wire/error-wire.js';
import type { NodeEngineOptions } from '../engine.js';
import type { RecordLog } from '../record/log.js';
import type { RouteReply, RouteRequest } from './route-job.js';
import type { ServeEngine } from './server.js';

/** What the pool sends a worker. */
export type PoolRequest =
  | { type: 'decide'; id: number; body: unknown; ask?: CalibrationAsk }
  | ({ type: 'route'; id: number } & RouteRequest);

/** What a worker sends back. */
export type PoolReply =
  | { type: 'ready'; manifest: PackageManifest; cards: ModelCard[] }
  | { type: 'record'; seq: number; line: string }
  | { type: 'load-failed'; error: WireError }
  | { type: 'answer'; id: number; json: string; calibrated?: CalibratedDecision }
  | ({ type: 'routed'; id: number } & RouteReply)
  | { type: 'failed'; id: number; error: WireError };

export interface EnginePool extends ServeEngine {
  /** Decisions that can run at once: the number of workers. */
  readonly lanes: number;
  readonly manifest: PackageManifest;
  /**
   * Routes a whole request in a worker: reading the body's JSON, validating, tokenizing and
   * deciding all happen off the HTTP thread, which only moves bytes.
   */
  route(request: RouteRequest): Promise<RouteReply>;
  dispose(): Promise<void>;
}

/** A job as queued, without its promise's callbacks. */
type JobSpec = { id: number } & (
  { kind: 'decide'; body: unknown; ask?: CalibrationAsk } | { kind: 'route'; request: RouteRequest }
);
type Job = JobSpec & { resolve: (out: never) => void; reject: (error: unknown) => void };

/** A worker's place in the pool: the job it runs, if any. */
interface Slot {
  /** Null while its replacement starts (the worker exited). */
  worker: Worker | null;
  job: Job | null;
  /** The replacement worker starting, if one is. */
  starting: Promise<Worker> | null;
}

/** A worker running engine-worker beside this module (module-worker.ts). */
function newWorker(workerData: unknown): Worker {
  return moduleWorker(import.meta.url, 'engine-worker', workerData);
}

/** Records the pool keeps: where, and whether requests are kept as their SHA-256 only. */
export interface PoolRecording {
  log: RecordLog;
  requestSha256Only: boolean;
}

/** The data an engine worker starts with. */
export interface EngineWorkerData {
  dir: string;
  options: NodeEngineOptions;
  record: { requestSha256Only: boolean } | null;
}

/** The main thread's answer to a worker's `record` message. */
export interface RecordedReply {
  type: 'recorded';
  seq: number;
  error?: string;
}

function startWorker(
  dir: string,
  options: NodeEngineOptions,
  recording: PoolRecording | null,
): Promise<{ worker: Worker; ready: Extract<PoolReply, { type: 'ready' }> }> {
  const data: EngineWorkerData = {
    dir,
    options,
    record: recording ? { requestSha256Only: recording.requestSha256Only } : null,
  };
  const worker = newWorker(data);
  if (recording) {
    worker.on('message', (m: PoolReply) => {
      if (m.type !== 'record') return;
      const reply = (r: RecordedReply) => worker.postMessage(r);
      recording.log.appendLine(m.line).then(
        () => reply({ type: 'recorded', seq: m.seq }),
        (e: unknown) => reply({ type: 'recorded', seq: m.seq, error: (e as Error).message }),
      );
    });
  }
  return new Promise((resolve, reject) => {
    const onMessage = (m: PoolReply) => {
      if (m.type === 'ready') {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve({ worker, ready: m });
      } else if (m.type === 'load-failed') {
        void worker.terminate();
        reject(fromWireError(m.error));
      }
    };
    const onExit = (code: number) =>
      reject(new EngineError(`The engine worker exited (${code}) while loading ${dir}`));
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    worker.once('error', reject);
  });
}

/**
 * Loads the package in `workers` worker threads (in parallel). Each gets `options`; with more
 * than one worker, onnxruntime's intra-op threads default to 1 per worker (N workers already
 * use N cores; more threads each only contend).
 */
export async function startEnginePool(
  dir: string,
  workers: number,
  options: NodeEngineOptions = {},
  recording: PoolRecording | null = null,
): Promise<EnginePool> {
  const perWorker = { ...options, threads: options.threads ?? (workers > 1 ? 1 : undefined) };
  if (perWorker.threads === undefined) delete perWorker.threads;
  const started = await Promise.allSettled(
    Array.from({ length: workers }, () => startWorker(dir, perWorker, recording)),
  );
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    for (const s of started) if (s.status === 'fulfilled') void s.value.worker.terminate();
    throw (failed as PromiseRejectedResult).reason;
  }
  const first = (started[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof startWorker>>>)
    .value.ready;
  // One slot per worker: the server's queue starts at most `workers` jobs at once, so a job
  // finds a free slot and is posted at once (the pool holds no queue of its own). A slot whose
  // worker died is refilled; a job that takes it meanwhile waits for the new worker.
  const slots: Slot[] = [];
  let nextId = 1;
  let disposed = false;

  const refill = (slot: Slot): Promise<Worker> => {
    slot.worker = null;
    const fresh = startWorker(dir, perWorker, recording).then(({ worker }) => {
      if (disposed) {
        void worker.terminate();
        throw new EngineError('The engine pool was disposed');
      }
      watch(slot, worker);
      return worker;
    });
    slot.starting = fresh;
    // Until a job needs the slot nobody waits for it; a failed start is tried again then.
    fresh.then(
      () => (slot.starting = null),
      () => (slot.starting = null),
    );
    return fresh;
  };

  const watch = (slot: Slot, worker: Worker) => {
    slot.worker = worker;
    worker.on('message', (m: PoolReply) => {
      const job = slot.job;
      if (job === null || !('id' in m) || m.id !== job.id) return;
      slot.job = null;
      const resolve = job.resolve as (out: unknown) => void;
      if (m.type === 'answer') {
        resolve(m.calibrated !== undefined ? { json: m.json, calibrated: m.calibrated } : m);
      } else if (m.type === 'routed') {
        resolve({ status: m.status, headers: m.headers, body: m.body });
      } else if (m.type === 'failed') job.reject(fromWireError(m.error));
    });
    worker.once('exit', (code) => {
      const job = slot.job;
      slot.job = null;
      job?.reject(new EngineError(`The engine worker exited (${code}) while deciding`));
      if (!disposed) void refill(slot).catch(() => undefined);
      else slot.worker = null;
    });
  };

  const post = (worker: Worker, job: Job) => {
    if (job.kind === 'route') {
      const message: PoolRequest = { type: 'route', id: job.id, ...job.request };
      worker.postMessage(message, job.request.body ? [job.request.body] : []);
    } else {
      const message: PoolRequest = { type: 'decide', id: job.id, body: job.body };
      if (job.ask !== undefined) message.ask = job.ask;
      worker.postMessage(message);
    }
  };

  for (const s of started) {
    const slot: Slot = { worker: null, job: null, starting: null };
    slots.push(slot);
    watch(
      slot,
      (s as PromiseFulfilledResult<Awaited<ReturnType<typeof startWorker>>>).value.worker,
    );
  }

  const start = <T>(make: (id: number) => JobSpec) =>
    new Promise<T>((resolve, reject) => {
      if (disposed) {
        reject(new EngineError('The engine pool was disposed'));
        return;
      }
      // A free slot with a worker first; else a free one whose worker is being replaced.
      const slot =
        slots.find((l) => l.job === null && l.worker !== null) ?? slots.find((l) => l.job === null);
      if (slot === undefined) {
        reject(
          new EngineError(
            `All ${workers} engine workers are deciding: give the pool at most ${workers} jobs at once`,
          ),
        );
        return;
      }
      const job = { ...make(nextId++), resolve, reject } as unknown as Job;
      slot.job = job;
      if (slot.worker !== null) {
        post(slot.worker, job);
        return;
      }
      (slot.starting ?? refill(slot)).then(
        (worker) => {
          if (slot.job === job) post(worker, job);
        },
        (e: unknown) => {
          if (slot.job !== job) return;
          slot.job = null;
          reject(e);
        },
      );
    });
  const submit = (body: unknown, ask?: CalibrationAsk) =>
    start<{ json: string; calibrated?: CalibratedDecision }>((id) =>
      ask !== undefined ? { id, kind: 'decide', body, ask } : { id, kind: 'decide', body },
    );

  return {
    lanes: workers,
    manifest: first.manifest,
    modelCards: () => first.cards,
    decide: (body) => submit(body),
    decideCalibrated: (body, ask) => submit(body, ask),
    route: (request) => start<RouteReply>((id) => ({ id, kind: 'route', request })),
    async dispose() {
      disposed = true;
      for (const slot of slots) {
        if (slot.worker !== null) continue;
        // Waiting for a worker that will not come.
        slot.job?.reject(new EngineError('The engine pool was disposed'));
        slot.job = null;
      }
      await Promise.all(
        slots.map((slot) => {
          const worker = slot.worker;
          if (worker === null) return undefined;
          return new Promise<void>((resolve) => {
            worker.once('exit', () => resolve());
            worker.postMessage({ type: 'dispose' });
            // A worker stuck in a run is ended after a grace period. onnxruntime-node aborts the
            // process when a worker is ended inside a session's run, so this is the last resort of
            // a shutdown, never a way to cancel a decision.
            setTimeout(() => void worker.terminate(), 5000).unref();
          });
        }),
      );
    },
  };
}
