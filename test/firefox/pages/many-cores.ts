// Makes the engine's capability probe in this worker see 4 cores (its thread count is
// min(4, cores - 1)), so that onnxruntime's threaded WASM runs with 3 threads even on a 2-core
// machine such as CI's, where the engine would otherwise choose 1 thread. Imported first.
Object.defineProperty(Object.getPrototypeOf(navigator), 'hardwareConcurrency', {
  configurable: true,
  get: () => 4,
});
