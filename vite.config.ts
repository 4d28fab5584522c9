import { defineConfig } from 'vite';
import { ortAssets } from './src/vite/index.js';

/**
 * Multi-threaded WASM needs SharedArrayBuffer, which needs cross-origin isolation: every server
 * we ship (dev and preview) sends these two headers.
 */
export const crossOriginIsolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  plugins: [ortAssets()],
  server: { headers: crossOriginIsolation, host: '127.0.0.1' },
  preview: { headers: crossOriginIsolation, host: '127.0.0.1' },
  worker: { format: 'es' },
  build: { outDir: 'dist/app', target: 'es2022' },
  optimizeDeps: { exclude: ['onnxruntime-web'] },
});
