// Where Debian's Firefox ESR lives, and the preferences the Firefox suite launches it with.
// Never a downloaded browser: the suite runs the system Firefox ESR (driven over WebDriver BiDi
// by puppeteer-core) or fails saying how to install it.
import { existsSync } from 'node:fs';

export const FIREFOX_PATH = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';

export const FIREFOX_INSTALL_HINT =
  `No Firefox at ${FIREFOX_PATH}. The Firefox tests need Debian's Firefox ESR: ` +
  `run "sudo apt-get install firefox-esr" (Debian/Ubuntu), or set FIREFOX_PATH to a Firefox binary.`;

export function firefoxAvailable() {
  return existsSync(FIREFOX_PATH);
}

/**
 * WebGPU, off by default in Firefox ESR on Linux: these turn it on and accept a software
 * Vulkan adapter (Mesa's lavapipe, Debian's mesa-vulkan-drivers), the only one a machine
 * without a GPU has.
 */
export const FIREFOX_WEBGPU_PREFS = {
  'dom.webgpu.enabled': true,
  'gfx.webgpu.ignore-blocklist': true,
};

/** The package the Firefox suite's WebGPU case needs for an adapter on a machine without a GPU. */
export const WEBGPU_INSTALL_HINT =
  'Firefox found no WebGPU adapter: on a machine without a GPU, "sudo apt-get install ' +
  'mesa-vulkan-drivers" gives it a software Vulkan one (lavapipe)';
