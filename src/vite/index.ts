/**
 * Serves onnxruntime-web's wasm and its loader same-origin under `/ort/` (dev and preview) and
 * copies them into the build. onnxruntime-web would otherwise fetch them from a CDN: nothing may
 * leave the page's origin.
 */
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Plugin } from 'vite';

export const ORT_PUBLIC_PATH = '/ort/';
const ORT_DIST = join(process.cwd(), 'node_modules', 'onnxruntime-web', 'dist');
/** The files the runtime may ask for: the wasm binaries and their Emscripten loaders. */
const ORT_FILE = /^ort-wasm-simd-threaded(\.[a-z]+)?\.(wasm|mjs)$/;

export function ortAssetNames(): string[] {
  return readdirSync(ORT_DIST).filter((name) => ORT_FILE.test(name));
}

export function ortAssets(): Plugin {
  const serve: Plugin['configureServer'] = (server) => {
    server.middlewares.use(ORT_PUBLIC_PATH, (req, res, next) => {
      const name = (req.url ?? '').split('?')[0].replace(/^\//, '');
      const path = join(ORT_DIST, name);
      if (!ORT_FILE.test(name) || !existsSync(path)) return next();
      res.setHeader(
        'Content-Type',
        name.endsWith('.wasm') ? 'application/wasm' : 'text/javascript',
      );
      res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
      createReadStream(path).pipe(res);
    });
  };
  return {
    name: 'clef-web:ort-assets',
    configureServer: serve,
    async generateBundle() {
      for (const name of ortAssetNames()) {
        this.emitFile({
          type: 'asset',
          fileName: `ort/${name}`,
          source: await readFile(join(ORT_DIST, name)),
        });
      }
    },
  };
}
