/**
 * How long the runtime's `WebAssembly.instantiateStreaming` took (fetch, compile, instantiate),
 * by wasm file name, for info().loadMs.runtime.instantiateMs in the instrumented worker.
 * onnxruntime-web's loader makes that call itself, so it is timed by wrapping the function, once
 * per worker; the call passes through unchanged. What is left of a
 * runtime's init is its own start in wasm (docs/benchmarks.md: its environment and first session).
 */
const took = new Map<string, number>();
let installed = false;

export function timeWasmInstantiation(): void {
  if (installed || typeof WebAssembly === 'undefined') return;
  if (typeof WebAssembly.instantiateStreaming !== 'function') return;
  installed = true;
  const original = WebAssembly.instantiateStreaming.bind(WebAssembly);
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const started = performance.now();
    const result = await original(source, imports);
    const { url } = await source;
    took.set(url.slice(url.lastIndexOf('/') + 1), performance.now() - started);
    return result;
  };
}

/** The last timed instantiation of `file` (ms), or null when the runtime did not stream it. */
export function instantiationMs(file: string): number | null {
  return took.get(file) ?? null;
}
