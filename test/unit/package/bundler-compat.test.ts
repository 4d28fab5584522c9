// What consumers' bundlers see in the shipped code. onnxruntime's self-URL must not
// look like an asset reference (webpack 5 failed on it, Vite warned), and `clef-web assets`
// must find the engine's worker and every chunk it imports (esbuild leaves the worker to the page).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hideOrtSelfUrl } from '../../../tools/build/ort-self-url.mjs';
import { copyAssets, workerFiles } from '../../../src/node/assets.js';

/** What webpack 5 and Vite treat as an asset: `new URL('<literal>', import.meta.url)`. */
const BUNDLER_URL = /\bnew\s+URL\s*\(\s*('[^']+'|"[^"]+"|`[^`]+`)\s*,\s*import\.meta\.url\s*\)/g;

/** onnxruntime-web's code as the engine's minified worker holds it (the alias folded). */
const FOLDED =
  'Le=()=>Ie?new URL(new URL("ort.wasm.min.mjs",import.meta.url).href,Fe).href:import.meta.url,' +
  'Lg=()=>Ie?new URL(new URL(`ort.webgpu.min.mjs`, import.meta.url).href,Fe).href:import.meta.url';

describe('onnxruntime self-URL', () => {
  it('is hidden from bundlers and keeps its value', () => {
    expect(FOLDED.match(BUNDLER_URL)).toHaveLength(2);
    const hidden = hideOrtSelfUrl(FOLDED);
    expect(hidden.match(BUNDLER_URL)).toBeNull();
    expect(hidden).toContain('new globalThis.URL("ort.wasm.min.mjs",import.meta.url)');
    expect(hidden).toContain('new globalThis.URL(`ort.webgpu.min.mjs`, import.meta.url)');
  });

  it('leaves other URLs alone (the worker reference bundlers must follow)', () => {
    const worker = 'new Worker(new URL("./clef.worker.js", import.meta.url), { type: "module" })';
    expect(hideOrtSelfUrl(worker)).toBe(worker);
  });
});

describe('the worker files', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const lib = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'clef-worker-files-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it('follow static and dynamic imports from clef.worker.js, and nothing else', () => {
    const dir = lib({
      'clef.worker.js': 'const a=()=>import("./ort.wasm-1.js"),b=()=>import(`./ort.webgpu-2.js`);',
      'ort.wasm-1.js': 'import{t as e}from"./runtime-3.js";',
      'ort.webgpu-2.js': "import { t } from './runtime-3.js';",
      'runtime-3.js': 'export const t=1;',
      'index.js': 'import "./other.js";',
      'other.js': '',
    });
    expect(workerFiles(dir).sort()).toEqual([
      'clef.worker.js',
      'ort.wasm-1.js',
      'ort.webgpu-2.js',
      'runtime-3.js',
    ]);
  });

  it('name the missing file and the build when a chunk is absent', () => {
    const dir = lib({ 'clef.worker.js': 'import("./gone.js")' });
    expect(() => workerFiles(dir)).toThrow(/gone\.js.*npm run build/);
  });

  it('refuse a worker folder outside the site', () => {
    const out = mkdtempSync(join(tmpdir(), 'clef-assets-'));
    dirs.push(out);
    expect(() => copyAssets(out, { bundledModel: false, workerDir: '../up' })).toThrow(
      /leaves the site/,
    );
  });
});
