import { defineConfig } from 'vite';

/** The library build: ESM, runtime deps left to the consumer's bundler. */
export default defineConfig({
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
