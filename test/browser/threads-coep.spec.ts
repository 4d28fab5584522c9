/**
 * A page served cross-origin isolated by a server that leaves COEP off onnxruntime's loader
 * (`/ort/*.mjs`): the browser refuses the loader as a thread worker's script, and a runtime
 * asked for threads waited for ever. The engine now reads the loader's headers first and runs
 * on one thread, saying why. The engine's worker sees 4 cores (test/firefox/pages/many-cores.ts),
 * so it asks for 3 threads even on a 2-core machine. The server without COEP there is a real
 * one: a proxy in front of the dev server that drops the header from `/ort/*.mjs` (Playwright's
 * router does not see a thread worker's script). Also: a worker that blocks starting a thread
 * worker is ended by the page and replaced.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import type { EngineInfo } from '../../src/wire/telemetry.js';

const PAGE = '/test/firefox/pages/firefox.html';
const BODY = {
  model: 'clef-tiny',
  state: 'My card was charged twice.',
  questions: { urgent: { type: 'noul', instructions: 'Is this urgent?' } },
};

/** Forwards to `target`, without COEP on /ort/*.mjs; counts the loader responses it changed. */
async function proxyWithoutLoaderCoep(target: URL) {
  const stripped: string[] = [];
  const server: Server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        const headers = { ...up.headers };
        if (/^\/ort\/[^?]*\.mjs/.test(req.url ?? '')) {
          delete headers['cross-origin-embedder-policy'];
          stripped.push(`${req.method} ${req.url}`);
        }
        res.writeHead(up.statusCode ?? 502, headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    stripped,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function loadThreaded(page: Page, url: string, name: string) {
  await page.goto(url);
  await page.locator('#status').filter({ hasText: 'ready' }).waitFor();
  expect(await page.evaluate(() => crossOriginIsolated), 'the page is isolated').toBe(true);
  const out = await page.evaluate(
    (name) => window.firefoxPage.loadThreaded(name, { model: '/models/tiny/', device: 'wasm' }),
    name,
  );
  expect(out.ok, JSON.stringify(out)).toBe(true);
  const info = (out as { value: EngineInfo }).value;
  const answer = await page.evaluate(
    async ([name, body]) => (await window.enginePage.get(name).decide(body)).json,
    [name, BODY] as const,
  );
  await page.evaluate((name) => window.enginePage.dispose(name), name);
  return { info, answer };
}

test('no COEP on /ort/*.mjs: one thread and the reason, not a load that never ends', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(150_000);
  const served = await loadThreaded(page, PAGE, 'served');
  expect(served.info.threads).toBe(3);
  expect(served.info.threadsReason).toBeNull();

  const proxy = await proxyWithoutLoaderCoep(new URL(baseURL!));
  try {
    const unserved = await loadThreaded(page, proxy.origin + PAGE, 'unserved');
    expect(proxy.stripped.length, 'the proxy served the loader without COEP').toBeGreaterThan(0);
    expect(unserved.info.threads).toBe(1);
    expect(unserved.info.threadsReason).toMatch(
      /^1 thread, not 3: \/ort\/ort-wasm-simd-threaded\.mjs is served without Cross-Origin-Embedder-Policy/,
    );
    expect(unserved.info.loadMs.runtime?.threads).toBe(1);
    // One thread or three, the model answers alike (float32 noise, rounded to 4 places).
    const noul = (json: string) =>
      (JSON.parse(json) as { answers: { urgent: { noul: number } } }).answers.urgent.noul;
    expect(Math.abs(noul(served.answer) - noul(unserved.answer))).toBeLessThanOrEqual(1e-4);
  } finally {
    await page.goto('about:blank');
    await proxy.close();
  }
});

// Firefox ESR can block for ever inside onnxruntime's `new Worker()` for a thread worker
// (src/engine/thread-watch.ts; test/firefox/engine.test.ts has both cases). Here Chromium runs
// the page's side of it: the first engine worker blocks there on purpose
// (test/firefox/pages/stall-worker.ts), and the page ends it and starts another, threaded.
test('a thread worker whose start never returns: the worker is replaced, threads kept', async ({
  page,
}) => {
  test.setTimeout(120_000);
  await page.goto(PAGE);
  await page.locator('#status').filter({ hasText: 'ready' }).waitFor();
  const out = await page.evaluate(() =>
    window.firefoxPage.loadStalling('stalled', 1, { model: '/models/tiny/', device: 'wasm' }),
  );
  expect(out.ok, JSON.stringify(out)).toBe(true);
  const { info, workers, ms } = (
    out as { value: { info: EngineInfo; workers: number; ms: number } }
  ).value;
  expect(workers).toBe(2);
  expect(info.threads).toBe(3);
  expect(info.threadsReason).toBeNull();
  expect(ms).toBeGreaterThanOrEqual(10_000);
  const answer = await page.evaluate(
    async (body) => JSON.parse((await window.enginePage.get('stalled').decide(body)).json),
    BODY,
  );
  expect(answer.answers.urgent.noul).toBeGreaterThan(0);
  await page.evaluate(() => window.enginePage.dispose('stalled'));
});
