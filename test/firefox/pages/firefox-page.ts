/**
 * Page side of the Firefox suite: the engine tests' page helpers (test/browser/pages/
 * engine-page.ts), plus a createClef whose worker sees 4 cores (threads-worker.ts) and the
 * checks of the page's own platform.
 */
import { createClef, type ClefOptions } from '../../../src/client/clef.js';
import { enginePage } from '../../browser/pages/engine-page.js';

export const firefoxPage = {
  /** createClef on a worker that sees 4 cores: threaded WASM when the page is isolated. */
  loadThreaded: async (name: string, options: Omit<ClefOptions, 'onProgress' | 'worker'>) => {
    try {
      const loading = createClef({
        ...options,
        worker: () =>
          new Worker(new URL('./threads-worker.ts', import.meta.url), {
            type: 'module',
            name: 'clef-web',
          }),
      });
      // A thread worker the browser refuses leaves onnxruntime waiting for ever: say so.
      const clef = await Promise.race([
        loading,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error('createClef on 3 threads did not finish within 60 s')),
            60_000,
          ),
        ),
      ]);
      enginePage.clefs.set(name, clef);
      return { ok: true as const, value: await clef.info() };
    } catch (e) {
      return { ok: false as const, error: enginePage.errorData(e) };
    }
  },
  /**
   * createClef on 3 threads where the first `stalls` engine workers block starting a thread
   * worker (stall-worker.ts); the later ones start as usual. The load's time comes back too.
   */
  loadStalling: async (
    name: string,
    stalls: number,
    options: Omit<ClefOptions, 'onProgress' | 'worker'>,
  ) => {
    const started = performance.now();
    let made = 0;
    try {
      const clef = await createClef({
        ...options,
        worker: () =>
          new Worker(new URL('./stall-worker.ts', import.meta.url), {
            type: 'module',
            name: made++ < stalls ? 'clef-web-stall' : 'clef-web',
          }),
      });
      enginePage.clefs.set(name, clef);
      const info = await clef.info();
      return { ok: true as const, value: { info, workers: made, ms: performance.now() - started } };
    } catch (e) {
      return { ok: false as const, error: enginePage.errorData(e) };
    }
  },
  platform: () => ({
    crossOriginIsolated: globalThis.crossOriginIsolated,
    sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
    cores: navigator.hardwareConcurrency,
    gpu: 'gpu' in navigator,
    userAgent: navigator.userAgent,
  }),
};

declare global {
  interface Window {
    firefoxPage: typeof firefoxPage;
  }
}
window.firefoxPage = firefoxPage;
