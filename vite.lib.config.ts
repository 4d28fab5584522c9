import { defaultClientConditions, defineConfig } from 'vite';

/** The library build: ESM, runtime deps left to the consumer's bundler. */
export default defineConfig({
  // A library, not a site: the dev models and the service worker stay out of it.
  publicDir: false,
  resolve: {
    // Pick onnxruntime-web's build that loads its wasm from wasmPaths (/ort/, same-origin)
    // instead of inlining 28 MB of it into the worker chunk.
    conditions: ['onnxruntime-web-use-extern-wasm', ...defaultClientConditions],
  },
  worker: { format: 'es' },
  build: {
    outDir: 'dist/lib',
    target: 'es2022',
    emptyOutDir: true,
    sourcemap: true,
    lib: {
      entry: { index: 'src/index.ts' },
      formats: ['es'],
    },
    rollupOptions: {
      external: [/^onnxruntime-/, /^@huggingface\//, 'comlink', /^lit/, /^node:/],
    },
  },
});
