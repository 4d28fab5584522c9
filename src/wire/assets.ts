/**
 * Which of onnxruntime-web's files the engine fetches at run time, and where: its Emscripten
 * loader and wasm binary, served same-origin under ORT_PUBLIC_PATH (never a CDN). The Vite
 * plugin (src/vite) serves and copies exactly these; the engine points `wasmPaths` there.
 * Runtime-free so the plugin can read it in Node.
 */
export const ORT_PUBLIC_PATH = '/ort/';

/**
 * WASM loads the plain build (`onnxruntime-web/wasm`: the plain pair, 14.2 MB of wasm); WebGPU
 * loads `onnxruntime-web/webgpu` (the asyncify pair, 26.8 MB). src/engine/ort.ts picks one.
 */
export const ORT_RUNTIME_FILES: readonly string[] = [
  'ort-wasm-simd-threaded.mjs',
  'ort-wasm-simd-threaded.wasm',
  'ort-wasm-simd-threaded.asyncify.mjs',
  'ort-wasm-simd-threaded.asyncify.wasm',
];

/**
 * The Cache Storage cache where the engine keeps verified package files, each under its URL
 * with the manifest's SHA-256 (`packageFileKey`), big ones in parts (src/core/cache-parts.ts).
 * A service worker reads them from there (src/sw/engine-cache.ts) instead of storing them twice.
 */
export const PACKAGE_CACHE = 'clef-web-packages-v1';

/** A package file's key in PACKAGE_CACHE: the hash in the key, so a changed file never matches. */
export function packageFileKey(fileUrl: string, sha256: string): string {
  return `${fileUrl}?sha256=${sha256}`;
}

/** Where the bundled clef-nano is served in a page (the plugin serves the package's copy). */
export const BUNDLED_MODEL_PATH = '/clef-web/models/clef-nano/';

/**
 * What to do when a file clef-web serves is missing: said by the errors for a 404 on
 * the bundled model, on onnxruntime's runtime files and on the engine's worker.
 */
export const SERVE_FILES_HINT =
  'the clef-web/vite plugin serves them in dev and copies them into `vite build`; with any ' +
  'other bundler or server, copy them into the folder you serve with `npx clef-web assets <dir>`';

/** The hint for a package's manifest.json answered 404 at `baseUrl`. */
export function missingPackageHint(baseUrl: string): string {
  const path = (() => {
    try {
      return new URL(baseUrl, 'http://x/').pathname;
    } catch {
      return baseUrl;
    }
  })();
  return path.endsWith(BUNDLED_MODEL_PATH)
    ? `The bundled clef-nano is not served there: ${SERVE_FILES_HINT}`
    : `No package is served there: put the converted package's folder (its manifest.json and ` +
        `files) under the folder you serve so that this URL reaches it, or omit \`model\` for ` +
        `the bundled clef-nano`;
}
