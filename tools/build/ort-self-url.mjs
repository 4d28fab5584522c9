// onnxruntime-web computes its own script URL as `new URL("ort.wasm.min.mjs", import.meta.url)`
// behind an alias (`let e = URL; new e(...)`) that hides it from bundlers; minifying the engine's
// worker (Rolldown) folds the alias back. Consumers' bundlers then take that file name for an
// asset: webpack 5 fails (`Can't resolve 'ort.wasm.min.mjs'`) and Vite warns that it "doesn't
// exist at build time". The URL only serves onnxruntime's proxy worker and its default wasm
// path, neither of which clef-web uses (it sets `wasmPaths` to `/ort/`), so the shipped code
// spells it `new globalThis.URL(...)`: the same value, in a form no bundler follows.

/** The expression as the minified builds write it (any quote). */
export const ORT_SELF_URL = /new URL\((["'`])(ort\.[\w.]+\.mjs)\1(,\s*)import\.meta\.url\)/g;

/** `source` with every ORT_SELF_URL spelt `new globalThis.URL(...)`. */
export function hideOrtSelfUrl(source) {
  return source.replace(ORT_SELF_URL, 'new globalThis.URL($1$2$1$3import.meta.url)');
}

/** A Vite/Rolldown plugin applying hideOrtSelfUrl to every chunk it writes. */
export function ortSelfUrlPlugin() {
  return {
    name: 'clef-web:ort-self-url',
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type === 'chunk') chunk.code = hideOrtSelfUrl(chunk.code);
      }
    },
  };
}
