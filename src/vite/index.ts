/**
 * `clef-web/vite`: the Vite plugin a page using clef-web needs.
 *
 * ```ts
 * import clefWeb from 'clef-web/vite';
 * export default { plugins: [clefWeb()] };
 * ```
 *
 * - Serves onnxruntime-web's loader and wasm under `/ort/` (the builds of the devices in its
 *   `devices` option; default every device), and the bundled clef-nano under
 *   `/clef-web/models/clef-nano/`, in dev and preview, and copies both into the build (saying
 *   what and how big): nothing is fetched from another origin.
 * - Sends COOP/COEP on dev and preview (threaded WASM needs cross-origin isolation; your
 *   production server must send them too: see the README).
 * - Keeps clef-web and onnxruntime-web out of dependency pre-bundling, so the engine's worker
 *   (`new Worker(new URL('./clef.worker.js', import.meta.url))`) resolves next to the library.
 */
import { createReadStream, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { defaultClientConditions, type Connect, type Logger, type Plugin } from 'vite';
import { assetFiles, assetReport, clefAssets, type AssetOptions } from '../node/assets.js';

export interface ClefWebPluginOptions extends AssetOptions {
  /** Send COOP/COEP on the dev and preview servers (default true). */
  crossOriginIsolation?: boolean;
}

/** Multi-threaded WASM needs SharedArrayBuffer, which needs cross-origin isolation. */
export const CROSS_ORIGIN_ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});

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

/**
 * The caching headers for a served file: kept by the HTTP cache but revalidated on every use
 * (`no-cache` + an ETag from size and modification time: an upgraded onnxruntime-web or model
 * is never served stale, and an unchanged one costs a 304). A cacheable response is also what
 * lets Chromium keep the compiled code of onnxruntime's wasm for the next visit (V8's wasm
 * code cache skips responses the HTTP cache may not keep; measured in docs/benchmarks.md).
 */
export function cachingHeaders(path: string): Record<string, string> {
  const { size, mtime } = statSync(path);
  return {
    'Cache-Control': 'no-cache',
    ETag: `"${size.toString(16)}-${Math.floor(mtime.getTime()).toString(16)}"`,
    'Last-Modified': mtime.toUTCString(),
  };
}

/**
 * A middleware serving `files` (url name -> absolute path) under `mount`, with `headers` (the
 * cross-origin isolation headers): Vite's own `server.headers` never reach a response a
 * middleware ends, and onnxruntime starts its threads as workers from `/ort/*.mjs`, which a
 * cross-origin-isolated page may only run when they are served with COEP themselves (without
 * it, threaded WASM hung at load in Chromium and Firefox alike).
 */
function serveFiles(
  mount: string,
  files: Map<string, string>,
  headers: Readonly<Record<string, string>>,
): Connect.NextHandleFunction {
  return (req, res, next) => {
    const pathname = decodeURIComponent((req.url ?? '').split('?')[0] ?? '');
    if (!pathname.startsWith(mount)) return next();
    const path = files.get(pathname.slice(mount.length));
    if (path === undefined) return next();
    const caching = cachingHeaders(path);
    for (const [name, value] of Object.entries({ ...headers, ...caching })) {
      res.setHeader(name, value);
    }
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    if (req.headers['if-none-match'] === caching.ETag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('Content-Type', contentType(path));
    res.setHeader('Content-Length', String(statSync(path).size));
    createReadStream(path).pipe(res);
  };
}

export default function clefWeb(options: ClefWebPluginOptions = {}): Plugin {
  const headers = options.crossOriginIsolation === false ? {} : CROSS_ORIGIN_ISOLATION_HEADERS;
  let assets: Map<string, Map<string, string>> | null = null;
  // Read once, at the first use: a wrong `devices` name fails the dev server and the build alike.
  const mounts = () => (assets ??= clefAssets(options));
  let logger: Logger | null = null;
  const middlewares = (use: (fn: Connect.NextHandleFunction) => void) => {
    for (const [mount, files] of mounts()) use(serveFiles(mount, files, headers));
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
    configResolved: (config) => {
      logger = config.logger;
      mounts();
    },
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
      const [head, ...rest] = assetReport(assetFiles(mounts()), options);
      logger?.info([`clef-web: copied ${head}`, ...rest].join('\n'));
    },
  };
}

export { clefWeb };
