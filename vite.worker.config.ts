import { defaultClientConditions, defineConfig } from 'vite';
import { ortSelfUrlPlugin } from './tools/build/ort-self-url.mjs';

/**
 * The engine's worker for the library (`dist/lib/clef.worker.js`), built whole: Comlink and
 * onnxruntime-web's JavaScript inside, so a consumer's bundler only has to copy or re-bundle
 * one module tree. onnxruntime-web's wasm is not inlined: the
 * `onnxruntime-web-use-extern-wasm` condition picks the build that loads it at run time from
 * `/ort/` on the page's origin (served by the `clef-web/vite` plugin).
 */
export default defineConfig({
  publicDir: false,
  plugins: [ortSelfUrlPlugin()],
  resolve: { conditions: ['onnxruntime-web-use-extern-wasm', ...defaultClientConditions] },
  build: {
    outDir: 'dist/lib',
    target: 'es2022',
    // Runs first in `npm run build:lib`: it empties dist/lib.
    emptyOutDir: true,
    // Maps for debugging the checkout; the package leaves them out, so no file names them.
    sourcemap: 'hidden',
    minify: true,
    lib: { entry: { 'clef.worker': 'workers/clef.worker.ts' }, formats: ['es'] },
  },
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
});
