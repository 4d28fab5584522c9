/**
 * Which of onnxruntime-web's files the engine fetches at run time, and where: its Emscripten
 * loader and wasm binary, served same-origin under ORT_PUBLIC_PATH (never a CDN). The Vite
 * plugin (src/vite) and `clef-web assets` serve and copy those of the app's devices; the engine
 * points `wasmPaths` there.
 * Runtime-free so the plugin can read it in Node.
 */
export const ORT_PUBLIC_PATH = '/ort/';

/**
 * onnxruntime-web's builds the engine can run, each a loader (`.mjs`) and its wasm under
 * ORT_PUBLIC_PATH. A device lists the builds it runs on, best first (`runtimeBuilds` in
 * src/core/devices.ts); the engine runs the first one this browser supports and the server
 * serves, and the Vite plugin and `clef-web assets` copy the first one of each device an app
 * ships. `needs`: the browser feature a build requires (JSPI: `WebAssembly.Suspending`, in
 * Chromium 137+ and Firefox; not in Safari 26).
 */
export const RUNTIME_BUILD_FILES = {
  /** The plain SIMD-threaded build: the CPU back end only (14.2 MB of wasm). */
  plain: {
    loader: 'ort-wasm-simd-threaded.mjs',
    wasm: 'ort-wasm-simd-threaded.wasm',
    needs: null,
  },
  /** WebGPU (and the CPU back end) with JS promise integration (16.8 MB of wasm). */
  jspi: {
    loader: 'ort-wasm-simd-threaded.jspi.mjs',
    wasm: 'ort-wasm-simd-threaded.jspi.wasm',
    needs: 'jspi',
  },
  /**
   * WebGPU (and the CPU back end) for browsers without JSPI (26.8 MB of wasm: over Cloudflare
   * Pages' 25 MiB per-file limit, so shipped only when asked for).
   */
  asyncify: {
    loader: 'ort-wasm-simd-threaded.asyncify.mjs',
    wasm: 'ort-wasm-simd-threaded.asyncify.wasm',
    needs: null,
  },
} as const;

export type RuntimeBuild = keyof typeof RUNTIME_BUILD_FILES;

export const RUNTIME_BUILD_NAMES = Object.freeze(
  Object.keys(RUNTIME_BUILD_FILES) as RuntimeBuild[],
);

/** A build's two files under ORT_PUBLIC_PATH: its loader, then its wasm. */
export function runtimeBuildFiles(build: RuntimeBuild): [string, string] {
  const { loader, wasm } = RUNTIME_BUILD_FILES[build];
  return [loader, wasm];
}

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
