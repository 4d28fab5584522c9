/**
 * Is onnxruntime-web's runtime served? When a device's runtime fails to start, the usual cause
 * in a new app is that nothing serves `/ort/` (a bundler other than Vite, a static server
 * without `npx clef-web assets`). Checked after the failure only, so a working page pays nothing.
 */
import { DownloadError } from '../wire/errors.js';
import { SERVE_FILES_HINT } from '../wire/assets.js';
import type { DeviceName } from '../core/devices.js';
import { RUNTIME_BUILDS, type RuntimeBuild } from './ort.js';

/** The build's loader and wasm, the two files a device's runtime fetches from `wasmBase`. */
function runtimeFilesOf(build: RuntimeBuild): [string, string] {
  const wasm = RUNTIME_BUILDS[build].wasm;
  return [wasm.replace(/\.wasm$/, '.mjs'), wasm];
}

/**
 * The first of `build`'s files the server answers 404 for, as the error to throw (naming the
 * file, the device that needed it, and what to do), or null when both are there.
 */
export async function missingRuntimeFile(
  wasmBase: string,
  build: RuntimeBuild,
  device: DeviceName,
): Promise<DownloadError | null> {
  for (const file of runtimeFilesOf(build)) {
    const url = new URL(file, wasmBase).href;
    let status: number;
    try {
      status = (await fetch(url, { method: 'HEAD', cache: 'no-store' })).status;
    } catch {
      continue; // not an answer about the file
    }
    if (status === 404) {
      return new DownloadError(
        `onnxruntime-web's ${file} is not served at ${url} (HTTP 404), so the ${device} ` +
          `runtime (the device chosen) cannot start. ${SERVE_FILES_HINT[0]!.toUpperCase()}` +
          `${SERVE_FILES_HINT.slice(1)}.`,
        { file, url, device, status },
      );
    }
  }
  return null;
}
