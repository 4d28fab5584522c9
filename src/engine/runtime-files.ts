/**
 * Which of onnxruntime-web's builds this page can run: those the browser supports (the JSPI
 * build needs `WebAssembly.Suspending`) and the server serves under /ort/. An app ships the
 * builds of the devices it chose (the Vite plugin's and `clef-web assets`' `devices`), so `auto`
 * passes over a device whose runtime is not there, and an explicit device without its runtime
 * gets an error naming the missing file and the option that ships it.
 */
import { DownloadError } from '../wire/errors.js';
import {
  ORT_PUBLIC_PATH,
  RUNTIME_BUILD_FILES,
  RUNTIME_BUILD_NAMES,
  SERVE_FILES_HINT,
  runtimeBuildFiles,
  type RuntimeBuild,
} from '../wire/assets.js';
import { deviceOf, type DeviceName } from '../core/devices.js';

/** Where the worker finds onnxruntime-web's files: same origin, ORT_PUBLIC_PATH (/ort/). */
export function defaultWasmBase(): string {
  return new URL(ORT_PUBLIC_PATH, self.location.origin).href;
}

/** Whether this browser can run `build` (JSPI: `WebAssembly.Suspending`). */
export function browserRuns(build: RuntimeBuild): boolean {
  if (RUNTIME_BUILD_FILES[build].needs !== 'jspi') return true;
  return typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function';
}

/**
 * A loader the server does not have: a 404, or the HTML page a single-page-app host answers
 * every unknown path with. Anything else (an error included) counts as served, so that a server
 * that refuses HEAD never hides a runtime it has.
 */
async function notServed(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { method: 'HEAD' });
    if (response.status === 404) return true;
    return response.ok && /^text\/html\b/i.test(response.headers.get('content-type') ?? '');
  } catch {
    return false;
  }
}

let served: Promise<readonly RuntimeBuild[]> | null = null;

/**
 * The builds this browser runs whose loader the server has (one HEAD each, all at once; once
 * per worker).
 */
export function servedBuilds(wasmBase = defaultWasmBase()): Promise<readonly RuntimeBuild[]> {
  served ??= (async () => {
    const runnable = RUNTIME_BUILD_NAMES.filter(browserRuns);
    const missing = await Promise.all(
      runnable.map((b) => notServed(new URL(RUNTIME_BUILD_FILES[b].loader, wasmBase).href)),
    );
    return Object.freeze(runnable.filter((_, i) => !missing[i]));
  })();
  return served;
}

/**
 * The build `device` runs on: the first of its builds in `available` (every build this browser
 * runs when not probed). `forced` (a benchmark's choice for the CPU device) wins where the
 * device can run it. Null for a device that runs no onnxruntime build, or none available.
 */
export function buildFor(
  device: DeviceName,
  available?: readonly RuntimeBuild[],
  forced?: RuntimeBuild,
): RuntimeBuild | null {
  const builds = deviceOf(device).runtimeBuilds;
  if (forced && !deviceOf(device).gpu && builds.includes(forced)) return forced;
  return builds.find((b) => (available ? available.includes(b) : browserRuns(b))) ?? null;
}

/** Why `device` cannot start here because its runtime is not served, or null. */
export function runtimeProblem(
  device: DeviceName,
  available: readonly RuntimeBuild[] | undefined,
): string | null {
  const builds = deviceOf(device).runtimeBuilds;
  if (available === undefined || builds.length === 0) return null;
  if (buildFor(device, available) !== null) return null;
  const wanted = builds.find(browserRuns) ?? builds[0]!;
  return (
    `its onnxruntime-web build (${RUNTIME_BUILD_FILES[wanted].loader}) is not served under ` +
    `${ORT_PUBLIC_PATH}: ${shipHint(device)}`
  );
}

/** How to ship `device`'s runtime: the plugin's option and the CLI's flag. */
export function shipHint(device: DeviceName): string {
  return (
    `an app ships the runtime of the devices named by the clef-web/vite plugin's \`devices\` ` +
    `option or by \`npx clef-web assets <dir> --devices\` (both default to every device): ` +
    `include '${device}' there`
  );
}

/** The error for `device`'s runtime not being served: its loader, the URL, the fix. */
export function runtimeNotServedError(
  wasmBase: string,
  device: DeviceName,
  build: RuntimeBuild,
  file: string = RUNTIME_BUILD_FILES[build].loader,
  status = 404,
): DownloadError {
  const url = new URL(file, wasmBase).href;
  return new DownloadError(
    `onnxruntime-web's ${file} is not served at ${url} (HTTP ${status}), so the ${device} ` +
      `runtime (the device chosen) cannot start. ${SERVE_FILES_HINT[0]!.toUpperCase()}` +
      `${SERVE_FILES_HINT.slice(1)}; ${shipHint(device)}.`,
    { file, url, device, status },
  );
}

/**
 * The first of `build`'s files the server answers 404 for, as the error to throw (naming the
 * file, the device that needed it, and what to do), or null when both are there. Asked after a
 * runtime failed to start, so a working page pays nothing.
 */
export async function missingRuntimeFile(
  wasmBase: string,
  build: RuntimeBuild,
  device: DeviceName,
): Promise<DownloadError | null> {
  for (const file of runtimeBuildFiles(build)) {
    const url = new URL(file, wasmBase).href;
    let status: number;
    try {
      status = (await fetch(url, { method: 'HEAD', cache: 'no-store' })).status;
    } catch {
      continue; // not an answer about the file
    }
    if (status === 404) return runtimeNotServedError(wasmBase, device, build, file, status);
  }
  return null;
}
