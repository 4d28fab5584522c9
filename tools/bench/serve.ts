/**
 * The servers the benches load their pages from (`dev` for most; first-answer uses both):
 * - `dev`: the Vite dev server on the checkout (test/browser/pages/harness.html: the engine's
 *   modules one by one, untransformed by a bundler) — what a developer sees;
 * - `dist`: tools/bench/pages/first-answer.html built by `vite build` with the clef-web/vite
 *   plugin against the library build (dist/lib, prebuilt worker) and served by `vite preview` —
 *   what a user's production app serves. Needs `npm run build:lib` first.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { build, createServer, preview } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';

export type ServeMode = 'dev' | 'dist';

export interface Served {
  mode: ServeMode;
  /** http://127.0.0.1:<port>, the port actually bound. */
  origin: string;
  /** The page's URL. */
  pageUrl: string;
  close(): Promise<void>;
}

function portOf(address: unknown, fallback: number): number {
  return typeof address === 'object' && address && 'port' in address
    ? Number((address as { port: number }).port)
    : fallback;
}

export async function serve(mode: ServeMode, port: number): Promise<Served> {
  const configFile = resolve('vite.config.ts');
  if (mode === 'dev') {
    const server = await createServer({
      configFile,
      logLevel: 'warn',
      server: { port, strictPort: false, host: '127.0.0.1', hmr: false, watch: null },
    });
    await server.listen();
    const p = portOf(server.httpServer?.address(), port);
    return {
      mode,
      origin: `http://127.0.0.1:${p}`,
      pageUrl: `http://127.0.0.1:${p}/test/browser/pages/harness.html`,
      close: () => server.close(),
    };
  }
  if (!existsSync('dist/lib/clef.worker.js')) {
    throw new Error('dist/lib is not built: run `npm run build:lib` first');
  }
  const outDir = mkdtempSync(join(tmpdir(), 'clef-first-answer-dist-'));
  await build({
    configFile,
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      rollupOptions: { input: resolve('tools/bench/pages/first-answer.html') },
    },
  });
  const server = await preview({
    configFile,
    logLevel: 'warn',
    build: { outDir },
    preview: { port, strictPort: false, host: '127.0.0.1' },
  });
  const p = portOf(server.httpServer?.address(), port);
  return {
    mode,
    origin: `http://127.0.0.1:${p}`,
    pageUrl: `http://127.0.0.1:${p}/tools/bench/pages/first-answer.html`,
    close: async () => {
      await server.close();
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}

/**
 * The dev server and a fresh Chromium on its harness page: the kernel-level benches' setup.
 * `close()` ends both.
 */
export async function harnessPage(port: number): Promise<{ page: Page; close(): Promise<void> }> {
  const server = await serve('dev', port);
  const browser = await chromium
    .launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
    .catch(async (e: unknown) => {
      await server.close();
      throw e;
    });
  const close = async () => {
    await browser.close();
    await server.close();
  };
  try {
    const page = await browser.newPage();
    await page.routeWebSocket(/.*/, () => undefined);
    // tsx names the page function's inner functions through a helper the page lacks.
    await page.addInitScript('globalThis.__name = (f) => f;');
    await page.goto(server.pageUrl);
    return { page, close };
  } catch (e) {
    await close();
    throw e;
  }
}
