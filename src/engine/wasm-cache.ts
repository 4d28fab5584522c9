/**
 * How onnxruntime-web's wasm is kept for the next visit: by the browser's HTTP cache, not by
 * the engine. onnxruntime's loader streams `fetch(wasmUrl)` into
 * `WebAssembly.instantiateStreaming`; when that response may be kept by the HTTP cache
 * (the `clef-web/vite` plugin sends `Cache-Control: no-cache` with an ETag, so an unchanged file
 * costs a 304), Chromium also keeps V8's compiled code for it once enough of it has tiered up,
 * and the next visit starts from that code instead of compiling again (measured in
 * docs/benchmarks.md: `v8.wasm.moduleCacheHit` in the trace, session creation and the warm-up
 * decision about 3× faster).
 *
 * Not Cache Storage: Chromium keeps no compiled code for a wasm response handed over from
 * there (no `v8.wasm.cachedModule` in any trace), so every visit would compile the runtime
 * again. The Cache Storage copy older versions of clef-web kept is deleted on start, once, in
 * the background.
 */
const LEGACY_RUNTIME_CACHE = 'clef-web-runtime-v1';

let dropped = false;

/** Deletes the Cache Storage copy older versions kept (14–27 MB); never fails a load. */
export function dropLegacyRuntimeCache(): void {
  if (dropped || typeof caches === 'undefined') return;
  dropped = true;
  void caches.delete(LEGACY_RUNTIME_CACHE).catch(() => undefined);
}

/**
 * Where the wasm came from, by its resource timing: 'cache' when fewer bytes crossed the
 * network than the body holds (an HTTP-cache hit, or a 304 revalidation), else 'network'.
 */
export function wasmSourceOf(entry: PerformanceResourceTiming | undefined): 'cache' | 'network' {
  if (!entry || entry.encodedBodySize === 0) return 'network';
  return entry.transferSize < entry.encodedBodySize ? 'cache' : 'network';
}
