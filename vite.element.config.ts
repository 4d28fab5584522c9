import { defaultClientConditions, defineConfig } from 'vite';
import { ortSelfUrlPlugin } from './tools/build/ort-self-url.mjs';

/**
 * `<clef-decide>` as one script for a `<script type="module">` tag: dist/element/clef-decide.js
 * with Lit, Comlink and the page API bundled in. The engine's worker is emitted beside it (with
 * onnxruntime-web's JavaScript inside); the ORT wasm is fetched at run time from `/ort/` on the
 * page's origin, as in the app.
 */
export default defineConfig({
  // The bundle must not carry public/ (the dev models); it is a script, not a site.
  publicDir: false,
  // The worker is found relative to the script, wherever the page hosts it.
  base: './',
  resolve: {
    // onnxruntime-web's "bundle" build inlines its 28 MB wasm, and library mode inlines every
    // asset: this condition picks the build that imports the wasm loader from wasmPaths (/ort/).
    conditions: ['onnxruntime-web-use-extern-wasm', ...defaultClientConditions],
  },
  build: {
    outDir: 'dist/element',
    target: 'es2022',
    emptyOutDir: true,
    // Maps for debugging the checkout; the package leaves them out, so no file names them.
    sourcemap: 'hidden',
    minify: true,
    lib: {
      entry: { 'clef-decide': 'src/element/index.ts' },
      formats: ['es'],
    },
  },
  worker: { format: 'es', plugins: () => [ortSelfUrlPlugin()] },
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
});
