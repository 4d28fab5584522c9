/**
 * Keeps onnxruntime-web's wasm in Cache Storage, so a second visit neither downloads nor (where
 * the browser allows) compiles it again: Chromium keeps the compiled code of a module streamed
 * from a Cache Storage response beside that entry (V8's wasm code cache), which it does not do
 * for a response the HTTP cache may not keep (the dev server sends no caching headers).
 *
 * onnxruntime-web's loader calls `fetch(wasmUrl)` and streams the response into
 * `WebAssembly.instantiateStreaming`; `installRuntimeCache` wraps this worker's `fetch` for the
 * wasm files under the runtime's base URL only. The cache key carries onnxruntime-web's version,
 * so an upgrade never pairs a new loader with an old binary. Without Cache Storage (or on any
 * failure) the plain fetch runs: caching is an optimisation, never a requirement.
 */
export const RUNTIME_CACHE = 'clef-web-runtime-v1';

let installed = false;

/** Wasm requests a cache answered, and how many it stored (for info() and tests). */
export const runtimeCacheStats = { hits: 0, stores: 0, problem: null as string | null };

export function installRuntimeCache(wasmBase: string, version: string): void {
  if (installed || typeof caches === 'undefined' || typeof fetch !== 'function') return;
  installed = true;
  const plain = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(wasmBase) || !url.split('?')[0]!.endsWith('.wasm')) {
      return plain(input, init);
    }
    const key = `${url.split('?')[0]}?onnxruntime-web=${encodeURIComponent(version)}`;
    try {
      const cache = await caches.open(RUNTIME_CACHE);
      const hit = await cache.match(key);
      if (hit) {
        runtimeCacheStats.hits++;
        return hit;
      }
      const response = await plain(input, init);
      if (!response.ok) return response;
      await cache.put(key, response);
      runtimeCacheStats.stores++;
      // The cached copy, not the network one: its compiled code is what the next visit reuses.
      return (await cache.match(key)) ?? plain(input, init);
    } catch (e) {
      runtimeCacheStats.problem = `runtime wasm not cached: ${(e as Error).message}`;
      return plain(input, init);
    }
  };
}
