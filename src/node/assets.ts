/**
 * The files a page using clef-web must serve from its own origin: onnxruntime-web's loader and
 * wasm (only those the engine loads) under `/ort/`, the bundled clef-nano under
 * `/clef-web/models/clef-nano/`, and for one-script-tag pages the prebuilt `<clef-decide>`
 * bundle under `/clef-web/`. The Vite plugin serves and copies them; `clef-web assets <dir>`
 * copies them for any other static server.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { BUNDLED_MODEL_PATH, ORT_PUBLIC_PATH, ORT_RUNTIME_FILES } from '../wire/assets.js';
import { bundledModelDir, packageRoot } from './bundled.js';

export interface AssetOptions {
  /** The bundled clef-nano (default true; 3.7 MB). */
  bundledModel?: boolean;
  /** The prebuilt `<clef-decide>` script and its worker under /clef-web/ (default false). */
  elementBundle?: boolean;
}

/** onnxruntime-web's dist folder, as clef-web resolves the dependency. */
export function ortDistDir(root = packageRoot()): string {
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
  if (options.elementBundle) {
    const dir = join(root, 'dist', 'element');
    if (!existsSync(dir)) throw new Error(`clef-web: no ${dir} (in a checkout: npm run build)`);
    const files = listFiles(dir).filter((name) => !name.endsWith('.map'));
    mounts.set('/clef-web/', new Map(files.map((name) => [name, join(dir, ...name.split('/'))])));
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
