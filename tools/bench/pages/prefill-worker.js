/* global self, performance */
// The WASM side of tools/bench/prefill-ab.ts, in a worker as the engine runs (a threaded
// onnxruntime-web needs a worker: the page's main thread cannot wait for its pool).
const entry = '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';

self.onmessage = async ({ data: a }) => {
  try {
    const ort = await import(/* @vite-ignore */ entry);
    ort.env.wasm.wasmPaths = '/ort/';
    ort.env.wasm.numThreads = a.threads;
    const get = async (f) => new Uint8Array(await (await fetch(a.url + f)).arrayBuffer());
    const model = await get('backbone.onnx');
    const data = await get('backbone.onnx.data');
    const sessions = [];
    for (const v of a.variants) {
      sessions.push(
        await ort.InferenceSession.create(model, {
          executionProviders: ['wasm'],
          graphOptimizationLevel: 'all',
          externalData: [{ path: 'backbone.onnx.data', data }],
          ...v.options,
        }),
      );
    }
    const times = a.variants.map(() => []);
    for (let r = 0; r < a.rounds; r++) {
      for (const [k, v] of a.variants.entries()) {
        let feeds = {};
        for (const s of a.states) {
          const n = s.emptyDims.reduce((x, y) => x * y, 1);
          feeds[s.input] = new ort.Tensor('float32', new Float32Array(n), s.emptyDims);
        }
        const t0 = performance.now();
        for (let start = 0; start < a.ids.length; start += v.chunk) {
          const part = a.ids.slice(start, start + v.chunk);
          feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(part, BigInt), [
            1,
            part.length,
          ]);
          const o = await sessions[k].run(feeds);
          feeds = {};
          for (const s of a.states) feeds[s.input] = o[s.output];
        }
        times[k].push(performance.now() - t0);
      }
    }
    self.postMessage({ times, crossOriginIsolated: self.crossOriginIsolated });
  } catch (e) {
    self.postMessage({ error: String(e && e.stack ? e.stack : e) });
  }
};
