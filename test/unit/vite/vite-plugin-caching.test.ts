// The clef-web/vite plugin serves onnxruntime's wasm cacheable: `no-cache` with an
// ETag, answered 304 when unchanged, so the browser's HTTP cache keeps the file and Chromium
// may keep its compiled code for the next visit. And the engine's reading of resource timing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connect, Plugin } from 'vite';
import clefWeb from '../../../src/vite/index.js';
import { wasmSourceOf } from '../../../src/engine/wasm-cache.js';

const WASM = '/ort/ort-wasm-simd-threaded.wasm';
let server: Server;
let base = '';

beforeAll(async () => {
  const handlers: Connect.NextHandleFunction[] = [];
  const plugin = clefWeb() as Plugin & { configureServer: (s: unknown) => void };
  plugin.configureServer({
    middlewares: { use: (fn: Connect.NextHandleFunction) => handlers.push(fn) },
  });
  server = createServer((req, res) => {
    const next = (i: number): void => {
      const handler = handlers[i];
      if (!handler) {
        res.statusCode = 404;
        res.end();
        return;
      }
      handler(req as Connect.IncomingMessage, res, () => next(i + 1));
    };
    next(0);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

describe('the plugin serves /ort/ cacheable and revalidated', () => {
  it('sends no-cache with an ETag and Last-Modified, and the wasm type', async () => {
    const r = await fetch(base + WASM);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(r.headers.get('last-modified')).toBeTruthy();
    expect(r.headers.get('content-type')).toBe('application/wasm');
    expect(r.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(Number(r.headers.get('content-length'))).toBe((await r.arrayBuffer()).byteLength);
  });

  it('answers 304 with no body for an unchanged file, 200 for another ETag', async () => {
    const etag = (await fetch(base + WASM, { method: 'HEAD' })).headers.get('etag')!;
    const same = await fetch(base + WASM, { headers: { 'If-None-Match': etag } });
    expect(same.status).toBe(304);
    expect((await same.arrayBuffer()).byteLength).toBe(0);
    expect(same.headers.get('etag')).toBe(etag);
    const other = await fetch(base + WASM, { headers: { 'If-None-Match': '"0-0"' } });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });
});

describe('the plugin serves /ort/ cross-origin isolated', () => {
  // onnxruntime starts its threads as workers from /ort/*.mjs; in a cross-origin-isolated page
  // a worker script without COEP is refused, and threaded WASM then hangs at load.
  it("sends COOP/COEP with onnxruntime's loader and wasm, as Vite does with the page", async () => {
    for (const path of ['/ort/ort-wasm-simd-threaded.mjs', WASM]) {
      const r = await fetch(base + path, { method: 'HEAD' });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('cross-origin-embedder-policy'), path).toBe('require-corp');
      expect(r.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
    }
  });
});

describe('wasmSourceOf', () => {
  const timing = (transferSize: number, encodedBodySize: number) =>
    ({ transferSize, encodedBodySize }) as PerformanceResourceTiming;
  it('calls a download network, an HTTP-cache hit or a 304 cache', () => {
    expect(wasmSourceOf(timing(14_200_300, 14_200_000))).toBe('network');
    expect(wasmSourceOf(timing(0, 14_200_000))).toBe('cache');
    expect(wasmSourceOf(timing(310, 14_200_000))).toBe('cache');
    expect(wasmSourceOf(undefined)).toBe('network');
  });
});
