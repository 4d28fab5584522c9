import { defineConfig } from 'vite';
import clefWeb from './src/vite/index.js';

/**
 * The playground, built with the same plugin a user's app uses (`clef-web/vite`): onnxruntime's
 * wasm and the bundled clef-nano served same-origin, COOP/COEP on dev and preview.
 */
export default defineConfig({
  plugins: [clefWeb()],
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  build: { outDir: 'dist/app', target: 'es2022' },
});
