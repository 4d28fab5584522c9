/**
 * A load fetches every package file once: files are fetched as the sessions need
 * them, and the two head graphs share their data files, so a careless order would fetch those
 * twice (with the cache off, twice from the network: 240 MB for Clef-flash's head).
 */
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { FP32, mustLoad, openPage } from './support/engine.js';

test('each package file the engine reads is fetched exactly once, with the cache off', async ({
  page,
}) => {
  const manifest = JSON.parse(readFileSync(`public${FP32}manifest.json`, 'utf8'));
  await openPage(page);
  const paths: string[] = [];
  page.context().on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith(FP32)) paths.push(path.slice(FP32.length));
  });
  await mustLoad(page, 'once', { model: FP32, device: 'wasm', cache: false, warmUp: false });
  // Every file the engine reads, once each: not clef_config.json (role 'config', for tools),
  // nor the float16-KV graph (role 'backbone-kv16') of a load whose KV is float32, nor the
  // graphs WASM replaces with their WASM-prepared twins (role 'wasm-graph', which it reads).
  const all = manifest.files as Array<{ path: string; role: string; replaces?: string }>;
  const replaced = new Set(all.map((f) => f.replaces));
  const files = all
    .filter((f) => f.role !== 'config' && f.role !== 'backbone-kv16' && !replaced.has(f.path))
    .map((f) => f.path);
  expect(files.length).toBeGreaterThan(5);
  expect(files.filter((f) => f.endsWith('.wasm.onnx'))).toHaveLength(3);
  expect([...paths].sort()).toEqual(['manifest.json', ...files].sort());
});
