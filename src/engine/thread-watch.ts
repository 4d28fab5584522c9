/**
 * Tells the page when onnxruntime starts a thread worker, and when the start returned. Firefox
 * ESR can block for ever inside `new Worker()` when onnxruntime's threaded WASM starts its
 * thread pool from the engine's worker (seen in 3 of 20 starts with one of two cores busy; the
 * call takes 0 to 5 ms when it returns). A blocked worker can send nothing more, so the notice
 * goes out before the call, and the page ends a worker whose start never came back
 * (src/client/connection.ts). The notice is posted synchronously (a Comlink proxy call), so it
 * leaves the worker before the worker blocks.
 */
export type ThreadWorkerNotice = 'starting' | 'started';

let listener: ((notice: ThreadWorkerNotice) => void) | null = null;
let installed = false;

function install(): void {
  const Real = globalThis.Worker;
  if (installed || typeof Real !== 'function') return;
  installed = true;
  class WatchedWorker extends Real {
    constructor(url: string | URL, options?: WorkerOptions) {
      const notify = listener;
      notify?.('starting');
      super(url, options);
      notify?.('started');
    }
  }
  globalThis.Worker = WatchedWorker;
}

/**
 * Calls `onNotice` around every `new Worker()` in this worker until the returned function is
 * called (one listener at a time: a later call replaces an earlier one). No-op where the
 * global scope has no Worker (Node, a SharedWorker in some browsers).
 */
export function watchThreadWorkers(onNotice: (notice: ThreadWorkerNotice) => void): () => void {
  install();
  listener = onNotice;
  return () => {
    if (listener === onNotice) listener = null;
  };
}
