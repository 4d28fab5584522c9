/**
 * `clef-web/vite`: the Vite plugin a page using clef-web needs.
 *
 * ```ts
 * import clefWeb from 'clef-web/vite';
 * export default { plugins: [clefWeb()] };
 * ```
 *
 * - Serves onnxruntime-web's loader and wasm (only the files the engine loads) under `/ort/`,
 *   and the bundled clef-nano under `/clef-web/models/clef-nano/`, in dev and preview, and
 *   copies both into the build: nothing is fetched from another origin.
 * - Sends COOP/COEP on dev and preview (threaded WASM needs cross-origin isolation; your
 *   production server must send them too: see the README).
 * - Keeps clef-web and onnxruntime-web out of dependency pre-bundling, so the engine's worker
 *   (`new Worker(new URL('./clef.worker.js', import.meta.url))`) resolves next to the library.
 */
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { defaultClientConditions, type Connect, type Plugin } from 'vite';
import { bundledModelDir, packageRoot } from '../node/bundled.js';
import { BUNDLED_MODEL_PATH, ORT_PUBLIC_PATH, ORT_RUNTIME_FILES } from '../wire/assets.js';

export interface ClefWebPluginOptions {
  /** Serve and copy the bundled clef-nano (default true; 3.7 MB in the build). */
  bundledModel?: boolean;
  /** Send COOP/COEP on the dev and preview servers (default true). */
  crossOriginIsolation?: boolean;
}

/** Multi-threaded WASM needs SharedArrayBuffer, which needs cross-origin isolation. */
export const CROSS_ORIGIN_ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});

/** onnxruntime-web's dist folder, as clef-web resolves the dependency. */
export function ortDistDir(root = packageRoot()): string {
  const require = createRequire(join(root, 'package.json'));
  return dirname(require.resolve('onnxruntime-web'));
}

const CONTENT_TYPES: Record<string, string> = {
  '.wasm': 'application/wasm',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
};

function contentType(name: string): string {
  const ext = name.slice(name.lastIndexOf('.'));
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
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

/** A middleware serving `files` (url name -> absolute path) under `mount`. */
function serveFiles(mount: string, files: Map<string, string>): Connect.NextHandleFunction {
  return (req, res, next) => {
    const pathname = decodeURIComponent((req.url ?? '').split('?')[0] ?? '');
    if (!pathname.startsWith(mount)) return next();
    const path = files.get(pathname.slice(mount.length));
    if (path === undefined) return next();
    res.setHeader('Content-Type', contentType(path));
    res.setHeader('Content-Length', String(statSync(path).size));
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    createReadStream(path).pipe(res);
  };
}

/** What the plugin serves and copies: URL path -> (name -> file). */
export function clefAssets(options: ClefWebPluginOptions = {}): Map<string, Map<string, string>> {
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
  return mounts;
}

export default function clefWeb(options: ClefWebPluginOptions = {}): Plugin {
  const headers = options.crossOriginIsolation === false ? {} : CROSS_ORIGIN_ISOLATION_HEADERS;
  let assets: Map<string, Map<string, string>> | null = null;
  const mounts = () => (assets ??= clefAssets(options));
  const middlewares = (use: (fn: Connect.NextHandleFunction) => void) => {
    for (const [mount, files] of mounts()) use(serveFiles(mount, files));
  };
  return {
    name: 'clef-web',
    config: () => ({
      server: { headers: { ...headers } },
      preview: { headers: { ...headers } },
      worker: { format: 'es' },
      // When onnxruntime-web is bundled from source (the checkout's playground), pick its build
      // that loads the wasm from /ort/ instead of emitting a second 27 MB copy as an asset.
      resolve: { conditions: ['onnxruntime-web-use-extern-wasm', ...defaultClientConditions] },
      optimizeDeps: { exclude: ['clef-web', 'onnxruntime-web'] },
    }),
    configureServer: (server) => middlewares((fn) => server.middlewares.use(fn)),
    configurePreviewServer: (server) => middlewares((fn) => server.middlewares.use(fn)),
    async generateBundle() {
      for (const [mount, files] of mounts()) {
        for (const [name, path] of files) {
          this.emitFile({
            type: 'asset',
            fileName: mount.slice(1) + name,
            source: await readFile(path),
          });
        }
      }
    },
  };
}

export { clefWeb };
