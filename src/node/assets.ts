/**
 * The files a page using clef-web must serve from its own origin: onnxruntime-web's loader and
 * wasm (only those the engine loads) under `/ort/`, the bundled clef-nano under
 * `/clef-web/models/clef-nano/`, and for one-script-tag pages the prebuilt `<clef-decide>`
 * bundle under `/clef-web/`. The Vite plugin serves and copies them; `clef-web assets <dir>`
 * copies them for any other static server.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { BUNDLED_MODEL_PATH, ORT_PUBLIC_PATH, ORT_RUNTIME_FILES } from '../wire/assets.js';
import { bundledModelDir, packageRoot } from './bundled.js';

export interface AssetOptions {
  /** The bundled clef-nano (default true; 3.7 MB). */
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

/** What the plugin serves and copies: URL path -> (name -> file). */
export function clefAssets(options: AssetOptions = {}): Map<string, Map<string, string>> {
  const root = packageRoot();
  const ortDir = ortDistDir(root);
  const ort = new Map(ORT_RUNTIME_FILES.map((name) => [name, join(ortDir, name)]));
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

/** Copies every asset under `outDir` at its URL path; returns the files written. */
export function copyAssets(outDir: string, options: AssetOptions = {}): string[] {
  const written: string[] = [];
  for (const [mount, files] of clefAssets(options)) {
    for (const [name, path] of files) {
      const target = join(outDir, ...mount.split('/').filter(Boolean), ...name.split('/'));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(path, target);
      written.push(target);
    }
  }
  return written;
}
