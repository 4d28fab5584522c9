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

/** Where the bundled clef-nano is served in a page (the plugin serves the package's copy). */
export const BUNDLED_MODEL_PATH = '/clef-web/models/clef-nano/';
