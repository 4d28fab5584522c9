// Where Debian's Chromium lives, and the flags every browser test launches it with.
// Never a downloaded browser: tests run the system Chromium or fail saying how to install it.
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_INSTALL_HINT =
  `No Chromium at ${CHROMIUM_PATH}. The browser tests need Debian's Chromium: ` +
  `run "sudo apt-get install chromium" (Debian/Ubuntu), or set CHROMIUM_PATH to a Chromium binary.`;

export function chromiumAvailable() {
  return existsSync(CHROMIUM_PATH);
}

/** WebGPU runs for real on SwiftShader; the rest keeps a closed network quiet. */
export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
