// In an engine worker named 'clef-web-stall', `new Worker()` for one of onnxruntime's thread
// workers (Emscripten names them 'em-pthread') never returns, as Firefox ESR's sometimes does
// (src/engine/thread-watch.ts): the worker is stuck for good and sends nothing more. Imported
// before the engine, so the engine's own watch wraps this constructor.
if (self.name === 'clef-web-stall') {
  const Real = globalThis.Worker;
  globalThis.Worker = class extends Real {
    constructor(url: string | URL, options?: WorkerOptions) {
      while (options?.name === 'em-pthread') {
        // blocks, as the browser's own call does
      }
      super(url, options);
    }
  };
}
