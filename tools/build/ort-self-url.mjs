// onnxruntime-web's minified builds compute their own script URL as
// `new URL("ort.wasm.min.mjs", import.meta.url)` (their source aliases `URL` to hide it from
// bundlers; minifying undoes the alias). Consumers' bundlers then take that file name for an
// asset: webpack 5 fails (`Can't resolve 'ort.wasm.min.mjs'`) and Vite warns that it "doesn't
// exist at build time". The URL only serves onnxruntime's proxy worker and its default wasm
// path, neither of which clef-web uses (it sets `wasmPaths` to `/ort/`), so the shipped code
// spells it `new globalThis.URL(...)`: the same value, in a form no bundler follows.

/** The expression as the minified builds write it (any quote). */
export const ORT_SELF_URL = /new URL\((["'`])(ort\.[\w.]+\.mjs)\1,\s*import\.meta\.url\)/g;

/** `source` with every ORT_SELF_URL spelt `new globalThis.URL(...)`. */
export function hideOrtSelfUrl(source) {
  return source.replace(ORT_SELF_URL, 'new globalThis.URL($1$2$1, import.meta.url)');
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
