import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './tools/chromium.mjs';
import { DEVICE_NAMES } from './src/core/devices.js';

/** A per-device test carries its device's tag (test/browser/support/engine.ts deviceTag). */
const tagged = (devices: readonly string[]) => new RegExp(`@(${devices.join('|')})\\b`);

const PORT = Number(process.env.CLEF_TEST_PORT || 5179);

export default defineConfig({
  testDir: 'test/browser',
  timeout: 180_000,
  workers: 1,
  reporter: [['list'], ['json', { outputFile: 'test-results/browser.json' }]],
  outputDir: 'test-results/artifacts',
  use: {
    baseURL: `http://localhost:${PORT}`,
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
  },
  // One project per device (the engine's ordered list), running the tests tagged with it; the
  // rest, which choose their device themselves or need none, run once.
  projects: [
    { name: 'page', grepInvert: tagged(DEVICE_NAMES) },
    ...DEVICE_NAMES.map((device) => ({ name: device, grep: tagged([device]) })),
  ],
  webServer: {
    command: `node_modules/.bin/vite --port ${PORT} --strictPort --host localhost`,
    url: `http://localhost:${PORT}/`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
