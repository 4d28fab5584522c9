import { defineConfig } from 'vitest/config';

/**
 * The Firefox suite (`npm test` runs it after the Chromium one): Debian's Firefox ESR over
 * WebDriver BiDi on the page API, `<clef-decide>`, the playground, the service-worker routes,
 * Cache Storage and its quota, offline; on WASM, and WebGPU where Firefox finds an adapter.
 * One file at a time: each launches its own Firefox.
 */
export default defineConfig({
  test: {
    include: ['test/firefox/**/*.test.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    globalSetup: ['test/firefox/global-setup.ts'],
  },
});
