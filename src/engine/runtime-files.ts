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
import { DEVICES, type DeviceDescriptor, type DeviceName } from '../core/devices.js';

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
 * The builds the devices run on here: for each device, the first of its builds this browser
 * runs whose loader the server has (one HEAD per build asked, devices at once; once per
 * worker). A build after a served one is never asked for, so a page that ships the default
 * builds requests no file it does not have.
 */
export function servedBuilds(wasmBase = defaultWasmBase()): Promise<readonly RuntimeBuild[]> {
  served ??= (async () => {
    const asked = new Map<RuntimeBuild, Promise<boolean>>();
    const has = (b: RuntimeBuild) => {
      let answer = asked.get(b);
      if (!answer) {
        answer = notServed(new URL(RUNTIME_BUILD_FILES[b].loader, wasmBase).href).then((m) => !m);
        asked.set(b, answer);
      }
      return answer;
    };
    const found = new Set<RuntimeBuild>();
    await Promise.all(
      DEVICES.map(async (d) => {
        for (const b of d.runtimeBuilds.filter(browserRuns)) {
          if (await has(b)) return void found.add(b);
        }
      }),
    );
    return Object.freeze(RUNTIME_BUILD_NAMES.filter((b) => found.has(b)));
  })();
  return served;
}

/** What of a device its runtime's files depend on (its descriptor, src/core/devices.ts). */
export type RuntimeDevice = Pick<DeviceDescriptor, 'name' | 'runtimeBuilds' | 'gpu'>;

/**
 * The build `device` runs on: the first of its builds in `available` (every build this browser
 * runs when not probed; a build not asked for counts as absent). `forced` (a benchmark's choice for the CPU device) wins where the
 * device can run it. Null for a device that runs no onnxruntime build, or none available.
 */
export function buildFor(
  device: RuntimeDevice,
  available?: readonly RuntimeBuild[],
  forced?: RuntimeBuild,
): RuntimeBuild | null {
  const builds = device.runtimeBuilds;
  if (forced && !device.gpu && builds.includes(forced)) return forced;
  return builds.find((b) => (available ? available.includes(b) : browserRuns(b))) ?? null;
}

/** Why `device` cannot start here because its runtime is not served, or null. */
export function runtimeProblem(
  device: RuntimeDevice,
  available: readonly RuntimeBuild[] | undefined,
): string | null {
  const builds = device.runtimeBuilds;
  if (available === undefined || builds.length === 0) return null;
  if (buildFor(device, available) !== null) return null;
  const wanted = builds.find(browserRuns) ?? builds[0]!;
  return (
    `its onnxruntime-web build (${RUNTIME_BUILD_FILES[wanted].loader}) is not served under ` +
    `${ORT_PUBLIC_PATH}: ${shipHint(device.name)}`
  );
}

/** How to ship `device`'s runtime: the plugin's option and the CLI's flag. */
export function shipHint(device: string): string {
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

/**
 * The error for a chunk of the engine's worker that did not load (the browser's "Failed to fetch
 * dynamically imported module: <url>"), or null for another failure. The worker imports
 * onnxruntime's JavaScript from chunks beside itself: a bundler that copies the worker as a
 * file without them (Rollup's import-meta-assets plugin puts it under assets/) leaves them
 * missing, and `clef-web assets --worker-dir` puts them there.
 */
export function chunkNotServedError(e: unknown): DownloadError | null {
  const message = (e as Error | null)?.message ?? '';
  const url = /(?:imported module|module script):?\s*(\S+\.m?js)\b/i.exec(message)?.[1];
  if (!url) return null;
  const file = url.slice(url.lastIndexOf('/') + 1);
  const folder = new URL('.', globalThis.location.href).pathname;
  const dir = folder.replace(/^\/|\/$/g, '');
  const flag = dir === '' ? '' : ` --worker-dir ${dir}`;
  return new DownloadError(
    `The engine's worker (${globalThis.location.pathname}) could not load its chunk ${file} ` +
      `from ${url}: the worker's chunks must be served beside it, in ${folder}. Copy them there ` +
      `with \`npx clef-web assets <dir>${flag}\` (the folder the worker is in, under the ` +
      `folder you serve); Vite, webpack and Parcel bundle them and need no copy.`,
    { file, url, workerDir: folder },
  );
}
