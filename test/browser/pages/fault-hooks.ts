/// <reference lib="webworker" />
/**
 * Imported by fault-worker.ts before the engine: lets a test make the worker fail on purpose
 * through a plain message `{ clefTestFault }` (Comlink ignores messages without its id):
 * - 'close': the worker closes itself (as a crashed worker would: no message ever comes back);
 * - 'throw': an uncaught error in the worker (its `error` event reaches the page);
 * - 'quota': every Cache Storage `put` fails with QuotaExceededError (send it before loading);
 * - 'gpu-adapter': the WebGPU adapter (SwiftShader here) describes itself as a hardware GPU
 *   (`isFallbackAdapter: false`, vendor 'test-vendor'), while still running on SwiftShader;
 * - 'unflagged-adapter': the adapter's info has no `isFallbackAdapter` at all (older browsers),
 *   so only its name tells that it is SwiftShader.
 * The last two patch GPUAdapterInfo's getters in this worker; send them before loading.
 */
function patchAdapterInfo(fields: Record<string, unknown>): void {
  const proto = (self as unknown as { GPUAdapterInfo?: { prototype: object } }).GPUAdapterInfo
    ?.prototype;
  if (!proto) return;
  for (const [name, value] of Object.entries(fields)) {
    Object.defineProperty(proto, name, { configurable: true, get: () => value });
  }
}

self.addEventListener('message', (event: MessageEvent) => {
  const fault = (event.data as { clefTestFault?: string } | null)?.clefTestFault;
  if (fault === 'close') self.close();
  if (fault === 'throw') {
    setTimeout(() => {
      throw new Error('simulated worker crash');
    });
  }
  if (fault === 'gpu-adapter') {
    patchAdapterInfo({ isFallbackAdapter: false, vendor: 'test-vendor', architecture: 'test-gpu' });
  }
  if (fault === 'unflagged-adapter') patchAdapterInfo({ isFallbackAdapter: undefined });
  if (fault === 'quota') {
    Cache.prototype.put = () =>
      Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
  }
});
