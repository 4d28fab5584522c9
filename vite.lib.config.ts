import { defaultClientConditions, defineConfig, type Plugin } from 'vite';

/**
 * The library build (`dist/lib`, ESM) for people who bundle clef-web into their app: the page
 * API (`clef-web`), the protocol (`clef-web/protocol`), `<clef-decide>` (`clef-web/element`) and the service-worker route
 * (`clef-web/sw`). Runtime dependencies stay imports for the consumer's bundler. The engine's
 * worker is built on its own (vite.worker.config.ts) as dist/lib/clef.worker.js; this build
 * points at it with the pattern bundlers resolve: see src/client/default-worker.ts.
 */
function prebuiltWorker(): Plugin {
  const id = '\0clef-web:default-worker';
  const placeholder = '__CLEF_WEB_WORKER_URL__';
  return {
    name: 'clef-web:prebuilt-worker',
    enforce: 'pre',
    resolveId(source, importer) {
      if (source === './default-worker.js' && importer?.includes('/src/client/')) return id;
      return null;
    },
    load(loaded) {
      if (loaded !== id) return null;
      // The URL is filled in after Vite's worker plugin has run, so that plugin leaves the
      // expression alone and the output says exactly `new Worker(new URL('./clef.worker.js',
      // import.meta.url), ...)`, and `new SharedWorker(...)` with the same URL (every chunk sits
      // in dist/lib beside the worker).
      return `export function defaultWorker() {
  return new Worker(new URL(${placeholder}, import.meta.url), { type: 'module', name: 'clef-web' });
}
export function defaultSharedWorker(name) {
  return new SharedWorker(new URL(${placeholder}, import.meta.url), { type: 'module', name });
}`;
    },
    renderChunk(code) {
      return code.includes(placeholder)
        ? { code: code.replaceAll(placeholder, "'./clef.worker.js'"), map: null }
        : null;
    },
  };
}

export default defineConfig({
  // A library, not a site: the dev models and the service worker stay out of it.
  publicDir: false,
  plugins: [prebuiltWorker()],
  build: {
    outDir: 'dist/lib',
    target: 'es2022',
    emptyOutDir: false,
    // Maps for debugging the checkout; the package leaves them out, so no file names them.
    sourcemap: 'hidden',
    lib: {
      entry: {
        index: 'src/index.ts',
        protocol: 'src/protocol-entry.ts',
        element: 'src/element/index.ts',
        sw: 'src/sw/index.ts',
      },
      formats: ['es'],
    },
    rollupOptions: {
      external: ['comlink', /^lit/, /^onnxruntime-/],
    },
  },
  resolve: { conditions: [...defaultClientConditions] },
});
