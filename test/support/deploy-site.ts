/**
 * The deploy tests' app (test/fixtures/deploy-site: one page per surface), built as a user's Vite
 * app is: `vite build` with the clef-web/vite plugin, against the checkout's library build
 * (dist/lib, aliased as `clef-web`), so the worker, onnxruntime's files and the bundled model
 * come out as they do in an app. Needs `npm run build` (the library and the element bundle).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import clefWeb from '../../src/vite/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE = join(ROOT, 'test/fixtures/deploy-site');

/** The surfaces, each a page of the site, and what its page leaves in `window.__clefResult`. */
export const SURFACES = {
  'page API, WASM, 1 thread': '/',
  'page API, WASM, 3 threads': '/threads.html',
  'page API, WebGPU': '/webgpu.html',
  'page API, js': '/js.html',
  '<clef-decide>, bundled': '/element.html',
  '<clef-decide>, one script tag': '/element-tag.html',
  'service-worker routes': '/sw.html',
} as const;

export type Surface = keyof typeof SURFACES;

/**
 * The surfaces a page with Trusted Types enforced runs, each with the default policy of
 * docs/deploy.md (public/trusted-types.js) loaded first.
 */
export const TRUSTED_TYPES_SURFACES = {
  'page API, WASM, 3 threads': '/tt-threads.html',
  '<clef-decide>, bundled': '/tt-element.html',
  '<clef-decide>, one script tag': '/tt-element-tag.html',
  'service-worker routes': '/tt-sw.html',
} as const;

/** Builds the site into a new temporary folder; returns that folder. */
export async function buildDeploySite(): Promise<string> {
  for (const built of ['dist/lib/index.js', 'dist/lib/clef.worker.js', 'dist/element', 'dist/sw']) {
    if (!existsSync(join(ROOT, built))) {
      throw new Error(`${built} is missing: run \`npm run build\` first (npm test does)`);
    }
  }
  const outDir = mkdtempSync(join(tmpdir(), 'clef-deploy-site-'));
  const pages = [
    'index',
    'threads',
    'webgpu',
    'js',
    'element',
    'sw',
    'tt-threads',
    'tt-element',
    'tt-sw',
  ];
  await build({
    configFile: false,
    root: SOURCE,
    logLevel: 'warn',
    plugins: [clefWeb({ elementBundle: true })],
    resolve: {
      alias: [
        { find: /^clef-web$/, replacement: join(ROOT, 'dist/lib/index.js') },
        { find: /^clef-web\/element$/, replacement: join(ROOT, 'dist/lib/element.js') },
        { find: /^clef-web\/worker$/, replacement: join(ROOT, 'dist/lib/clef.worker.js') },
      ],
    },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      rollupOptions: {
        input: Object.fromEntries(pages.map((p) => [p, join(SOURCE, `${p}.html`)])),
      },
    },
  });
  return outDir;
}
