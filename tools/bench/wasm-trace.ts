/**
 * Chromium's own account of its wasm code cache, from a DevTools trace: Blink emits
 * `v8.wasm.streamFromResponseCallback` per streamed module, `v8.wasm.compiledModule` when it
 * compiled one, `v8.wasm.cachedModule` when it stored compiled code for the next visit and
 * `v8.wasm.moduleCacheHit` when it reused stored code (the events Chromium's own
 * wasm-code-cache tests read). Counts them by name for one visit.
 */
import type { BrowserContext, Page } from '@playwright/test';

const CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8.wasm',
  'disabled-by-default-v8.wasm',
].join(',');

export async function startWasmTrace(
  context: BrowserContext,
  page: Page,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const cdp = await context.newCDPSession(page);
  const counts: Record<string, number> = {};
  cdp.on('Tracing.dataCollected', ({ value }: { value: Array<{ name?: string }> }) => {
    for (const e of value) {
      if (e.name?.startsWith('v8.wasm.')) counts[e.name] = (counts[e.name] ?? 0) + 1;
    }
  });
  await cdp.send('Tracing.start', {
    traceConfig: { includedCategories: CATEGORIES.split(',') },
    transferMode: 'ReportEvents',
  });
  return {
    async stop() {
      const complete = new Promise<void>((done) =>
        cdp.once('Tracing.tracingComplete', () => done()),
      );
      await cdp.send('Tracing.end');
      await complete;
      await cdp.detach();
      return counts;
    },
  };
}
