/**
 * The files a page using clef-web must serve from its own origin: onnxruntime-web's loader and
 * wasm under `/ort/` (only the builds of the devices the app ships), the bundled clef-nano under
 * `/clef-web/models/clef-nano/`, and for one-script-tag pages the prebuilt `<clef-decide>`
 * bundle under `/clef-web/`. The Vite plugin serves and copies them; `clef-web assets <dir>`
 * copies them for any other static server.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import {
  BUNDLED_MODEL_PATH,
  ORT_PUBLIC_PATH,
  RUNTIME_BUILD_NAMES,
  runtimeBuildFiles,
  type RuntimeBuild,
} from '../wire/assets.js';
import { DEVICE_NAMES, deviceOf, type DeviceName } from '../core/devices.js';
import { bundledModelDir, packageRoot } from './bundled.js';

/**
 * The largest file a common static host takes (Cloudflare Pages: 25 MiB): nothing clef-web
 * ships by default is bigger, and a copy that is says so.
 */
export const HOST_FILE_LIMIT_BYTES = 25 * 2 ** 20;

export interface AssetOptions {
  /**
   * The devices whose onnxruntime-web build the app ships under /ort/ (default: every device,
   * 'webgpu' and 'wasm'). `['wasm']` leaves WebGPU's build out (`auto` then runs WASM);
   * `['webgpu']` ships WebGPU's build alone, which runs WASM too where WebGPU is missing.
   */
  devices?: readonly DeviceName[];
  /**
   * The exact onnxruntime-web builds to ship instead of those `devices` picks: 'plain' (WASM),
   * 'jspi' (WebGPU where the browser has JSPI), 'asyncify' (WebGPU without JSPI: Safari; its
   * 26.8 MB wasm is over Cloudflare Pages' 25 MiB limit).
   */
  runtimeBuilds?: readonly RuntimeBuild[];
  /** The bundled clef-nano (default true; 4.1 MB). */
  bundledModel?: boolean;
  /** The prebuilt `<clef-decide>` script and its worker under /clef-web/ (default false). */
  elementBundle?: boolean;
  /**
   * The URL folder to put the engine's worker (`clef.worker.js` and the chunks it imports) in,
   * for bundlers that leave `new Worker(new URL('./clef.worker.js', import.meta.url))` alone
   * (esbuild): the folder the app's bundle is served from. Default: none (Vite and webpack
   * bundle the worker themselves).
   */
  workerDir?: string | false;
}

/** The System One routes as a classic service-worker script (global `clefSystemOne`). */
const SW_ROUTES_FILE = 'sw-routes.js';

/** The engine's worker, which the library build writes beside its entries. */
const WORKER_FILE = 'clef.worker.js';

/** Relative static and dynamic imports in a built chunk (`./x.js`). */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'`])(\.\/[\w.-]+\.js)\1/g;

/**
 * The worker's files in `libDir` (the package's dist/lib): clef.worker.js and every chunk it
 * imports, followed through their own imports.
 */
export function workerFiles(libDir: string): string[] {
  const found = new Set<string>();
  const visit = (name: string) => {
    if (found.has(name)) return;
    const path = join(libDir, name);
    if (!existsSync(path)) throw new Error(`clef-web: no ${path} (in a checkout: npm run build)`);
    found.add(name);
    for (const match of readFileSync(path, 'utf8').matchAll(RELATIVE_IMPORT)) {
      visit((match[2] as string).slice(2));
    }
  };
  visit(WORKER_FILE);
  return [...found];
}

/** A URL folder as `/a/b/` (from `a/b`, `/a/b/`, `.`, `/`). */
function urlFolder(dir: string): string {
  const parts = dir.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new Error(`clef-web: the worker folder ${dir} leaves the site`);
  return `/${parts.map((p) => `${p}/`).join('')}`;
}

/** onnxruntime-web's dist folder, as clef-web resolves the dependency. */
function ortDistDir(root = packageRoot()): string {
  const require = createRequire(join(root, 'package.json'));
  return dirname(require.resolve('onnxruntime-web'));
}

/** Files under `dir` as paths relative to it ('/'-separated). */
function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, `${prefix}${name}/`));
    else out.push(prefix + name);
  }
  return out;
}

/** A list option's values, each one of `known`, or an error naming the known ones. */
function checkNames<T extends string>(
  what: string,
  values: readonly string[],
  known: readonly T[],
) {
  const wrong = values.filter((v) => !(known as readonly string[]).includes(v));
  if (wrong.length > 0 || values.length === 0) {
    const said = wrong.length > 0 ? wrong.map((w) => `'${w}'`).join(', ') : 'nothing';
    throw new Error(`clef-web: ${what}: ${said} is not one of ${known.join(', ')}`);
  }
  return values as readonly T[];
}

/**
 * The onnxruntime-web builds an app ships: `runtimeBuilds` as given, else the first build of
 * each device in `devices` (src/core/devices.ts), in the list's order.
 */
export function runtimeBuildsFor(options: AssetOptions = {}): RuntimeBuild[] {
  if (options.runtimeBuilds !== undefined) {
    return [...new Set(checkNames('runtimeBuilds', options.runtimeBuilds, RUNTIME_BUILD_NAMES))];
  }
  const devices = checkNames('devices', options.devices ?? DEVICE_NAMES, DEVICE_NAMES);
  const builds = devices.flatMap((d) => deviceOf(d).runtimeBuilds.slice(0, 1));
  return RUNTIME_BUILD_NAMES.filter((b) => builds.includes(b));
}

/** What the plugin serves and copies: URL path -> (name -> file). */
export function clefAssets(options: AssetOptions = {}): Map<string, Map<string, string>> {
  const root = packageRoot();
  const ortDir = ortDistDir(root);
  const names = runtimeBuildsFor(options).flatMap(runtimeBuildFiles);
  const ort = new Map(names.map((name) => [name, join(ortDir, name)]));
  for (const [name, path] of ort) {
    if (!existsSync(path)) throw new Error(`clef-web: onnxruntime-web has no ${name} (${path})`);
  }
  const mounts = new Map([[ORT_PUBLIC_PATH, ort]]);
  if (options.bundledModel ?? true) {
    const modelDir = bundledModelDir(root);
    const model = new Map(
      listFiles(modelDir)
        .filter((name) => !name.endsWith('.md'))
        .map((name) => [name, resolve(modelDir, ...name.split('/'))]),
    );
    for (const path of model.values()) {
      if (!path.startsWith(modelDir + sep)) throw new Error(`clef-web: bad model file ${path}`);
    }
    mounts.set(BUNDLED_MODEL_PATH, model);
  }
  // The service worker's classic script, for `importScripts('/clef-web/sw-routes.js')`.
  const own = new Map<string, string>();
  const swRoutes = join(root, 'dist', 'sw', SW_ROUTES_FILE);
  if (existsSync(swRoutes)) own.set(SW_ROUTES_FILE, swRoutes);
  if (options.elementBundle) {
    const dir = join(root, 'dist', 'element');
    if (!existsSync(dir)) throw new Error(`clef-web: no ${dir} (in a checkout: npm run build)`);
    const files = listFiles(dir).filter((name) => !name.endsWith('.map'));
    for (const name of files) own.set(name, join(dir, ...name.split('/')));
  }
  if (own.size > 0) mounts.set('/clef-web/', own);
  if (typeof options.workerDir === 'string') {
    const libDir = join(root, 'dist', 'lib');
    const mount = urlFolder(options.workerDir);
    const files = mounts.get(mount) ?? new Map<string, string>();
    for (const name of workerFiles(libDir)) files.set(name, join(libDir, name));
    mounts.set(mount, files);
  }
  return mounts;
}

/** One copied (or served) file: its URL path and size. */
export interface AssetFile {
  url: string;
  bytes: number;
}

/** Every asset's URL path and size, largest first within each mount. */
export function assetFiles(mounts: Map<string, Map<string, string>>): AssetFile[] {
  return [...mounts].flatMap(([mount, files]) =>
    [...files]
      .map(([name, path]) => ({ url: mount + name, bytes: statSync(path).size }))
      .sort((a, b) => b.bytes - a.bytes),
  );
}

/** 14.24 MB: sizes as hosts and bundlers print them (10^6 bytes). */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

/**
 * What was copied, as lines a person reads: each mount's files and bytes (onnxruntime's files
 * one by one, with the devices they serve), the total, and any file over a host's 25 MiB limit.
 */
export function assetReport(files: readonly AssetFile[], options: AssetOptions = {}): string[] {
  const total = files.reduce((n, f) => n + f.bytes, 0);
  const lines = [`${files.length} files, ${megabytes(total)}:`];
  const builds = runtimeBuildsFor(options);
  const serves = (b: RuntimeBuild) =>
    DEVICE_NAMES.filter((d) => deviceOf(d).runtimeBuilds.includes(b)).join(', ');
  for (const b of builds) {
    for (const name of runtimeBuildFiles(b)) {
      const f = files.find((x) => x.url === ORT_PUBLIC_PATH + name);
      if (f)
        lines.push(`  ${f.url.padEnd(48)} ${megabytes(f.bytes).padStart(9)}  ${b} (${serves(b)})`);
    }
  }
  const mounts = new Map<string, AssetFile[]>();
  for (const f of files) {
    if (f.url.startsWith(ORT_PUBLIC_PATH)) continue;
    const mount = f.url.slice(0, f.url.lastIndexOf('/') + 1);
    mounts.set(mount, [...(mounts.get(mount) ?? []), f]);
  }
  for (const [mount, group] of mounts) {
    const bytes = group.reduce((n, f) => n + f.bytes, 0);
    const count = `${group.length} file${group.length === 1 ? '' : 's'}`;
    lines.push(`  ${`${mount} (${count})`.padEnd(48)} ${megabytes(bytes).padStart(9)}`);
  }
  for (const f of files.filter((x) => x.bytes > HOST_FILE_LIMIT_BYTES)) {
    lines.push(
      `  warning: ${f.url} is ${(f.bytes / 2 ** 20).toFixed(1)} MiB, over the 25 MiB per-file ` +
        `limit of some static hosts (Cloudflare Pages)`,
    );
  }
  return lines;
}

/** Copies every asset under `outDir` at its URL path; returns the files written and their sizes. */
export function copyAssets(outDir: string, options: AssetOptions = {}): AssetFile[] {
  const mounts = clefAssets(options);
  for (const [mount, files] of mounts) {
    for (const [name, path] of files) {
      const target = join(outDir, ...mount.split('/').filter(Boolean), ...name.split('/'));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(path, target);
    }
  }
  return assetFiles(mounts);
}
