import { defineConfig } from 'vite';
import clefWeb from './src/vite/index.js';
import { RUNTIME_BUILD_NAMES } from './src/wire/assets.js';

/**
 * The playground, built with the same plugin a user's app uses (`clef-web/vite`): onnxruntime's
 * wasm and the bundled clef-nano served same-origin, COOP/COEP on dev and preview. The Train
 * panel's worker runs the trainer and converter (src/build) as they are: no alias rewrites their
 * imports. The dev server serves every onnxruntime-web build (the tests and benchmarks compare
 * them); the built playground ships the default selection, as a user's app does.
 */
export default defineConfig(({ command }) => ({
  plugins: [clefWeb(command === 'serve' ? { runtimeBuilds: RUNTIME_BUILD_NAMES } : {})],
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  build: { outDir: 'dist/app', target: 'es2022' },
}));
