/**
 * The Train panel's thread workers (workers/train-thread.worker.ts): the page starts them and
 * hands the train worker a port to each, whose other end the thread listens on. Started here, not
 * in the train worker, as Firefox ESR can block for ever in a worker's own `new Worker()`
 * (src/engine/thread-watch.ts).
 */
import { MAX_DEFAULT_THREADS, type PageTrainOutcome } from '../train-web/train-wire.js';

/** Threads a user may ask for. */
export const MAX_THREADS = 64;

/**
 * The threads a run uses unless the user says otherwise: the cores, at most 4; 1 where the page
 * is not cross-origin isolated (the threads share memory, which needs COOP/COEP).
 */
export function defaultThreads(): number {
  if (!globalThis.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(navigator.hardwareConcurrency || 1, MAX_DEFAULT_THREADS));
}

/** A run's thread workers. */
export interface ThreadWorkers {
  /** One port a thread, for the train worker (transfer them). */
  ports: MessagePort[];
  /** A failure for the first thread worker that fails (one that does not load, say); it ends the run. */
  lost: Promise<PageTrainOutcome>;
  /** Stops every thread worker. */
  end: () => void;
}

/** Starts `threads` thread workers; none for one thread (the fits then run in the train worker). */
export function startThreadWorkers(threads: number): ThreadWorkers {
  const workers: Worker[] = [];
  const ports: MessagePort[] = [];
  const end = () => {
    for (const worker of workers.splice(0)) worker.terminate();
  };
  if (threads < 2) return { ports, lost: new Promise<never>(() => undefined), end };
  const lost = new Promise<PageTrainOutcome>((resolve) => {
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(new URL('../../workers/train-thread.worker.ts', import.meta.url), {
        type: 'module',
        name: 'clef-train-thread',
      });
      worker.addEventListener('error', (e) => {
        e.preventDefault();
        resolve({
          ok: false,
          failure: {
            code: 'train_thread_failed',
            message:
              `a training thread failed: ${e.message || 'it did not start'} ` +
              '(set Threads to 1 to fit in one thread)',
          },
        });
      });
      const channel = new MessageChannel();
      worker.postMessage({ port: channel.port1 }, [channel.port1]);
      ports.push(channel.port2);
      workers.push(worker);
    }
  });
  return { ports, lost, end };
}
