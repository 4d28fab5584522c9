/// <reference lib="webworker" />
/**
 * Imported by fault-worker.ts before the engine: lets a test make the worker fail on purpose
 * through a plain message `{ clefTestFault }` (Comlink ignores messages without its id):
 * - 'close': the worker closes itself (as a crashed worker would: no message ever comes back);
 * - 'throw': an uncaught error in the worker (its `error` event reaches the page);
 * - 'quota': every Cache Storage `put` fails with QuotaExceededError (send it before loading).
 */
self.addEventListener('message', (event: MessageEvent) => {
  const fault = (event.data as { clefTestFault?: string } | null)?.clefTestFault;
  if (fault === 'close') self.close();
  if (fault === 'throw') {
    setTimeout(() => {
      throw new Error('simulated worker crash');
    });
  }
  if (fault === 'quota') {
    Cache.prototype.put = () =>
      Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
  }
});
