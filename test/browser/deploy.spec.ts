/**
 * docs/deploy.md's header sets, each read from the doc and served exactly as written around a
 * built app (test/fixtures/deploy-site, `vite build` with the plugin): real nginx and Caddy, the
 * `_headers` file of Netlify and Cloudflare Pages and Vercel's `vercel.json` applied by their
 * documented matching rules, and `clef-web static`. In each the page decides in Chromium,
 * cross-origin isolated, with no CSP violation, and onnxruntime's files come with COEP, their
 * types and revalidated caching; the `clef-web static` set decides in Firefox ESR too.
 */
import { expect, test, type Page } from '@playwright/test';
import { rmSync } from 'node:fs';
import { CONTENT_SECURITY_POLICY } from '../../src/node/static/headers.js';
import { startStatic } from '../../src/node/static/server.js';
import { buildDeploySite } from '../support/deploy-site.js';
import {
  caddyHost,
  documentedSet,
  documentedSets,
  headersFileHost,
  nginxHost,
  ruleHost,
  vercelHeaders,
  type RunningHost,
} from './support/host-headers.js';
import { startFirefox } from '../firefox/support/launch.js';
import { expectFraudRoute, firstDecisionInFirefox } from './support/consumer-app.js';

test.describe.configure({ mode: 'serial', timeout: 120_000 });

let site = '';

test.beforeAll(async () => {
  test.setTimeout(120_000);
  site = await buildDeploySite();
});

test.afterAll(() => {
  if (site) rmSync(site, { recursive: true, force: true });
});

/** The hosts docs/deploy.md documents, each started on the built site with its set. */
const HOSTS: Record<string, (site: string) => Promise<RunningHost>> = {
  nginx: (s) => nginxHost(s, documentedSet('nginx')),
  Caddy: (s) => caddyHost(s, documentedSet('Caddy')),
  Netlify: (s) => headersFileHost(s, documentedSet('Netlify')),
  'Cloudflare Pages': (s) => headersFileHost(s, documentedSet('Cloudflare Pages')),
  Vercel: (s) => ruleHost(s, vercelHeaders(documentedSet('Vercel'))),
  'clef-web static': async (s) => {
    const running = await startStatic(s, { host: '127.0.0.1', port: 0 });
    return { origin: running.url, close: running.close };
  },
};

test('every host section of docs/deploy.md is served here (none left untested)', () => {
  const documented = [...documentedSets().keys()].filter((t) => t !== 'Next.js');
  // Next.js's set runs in tools/check-nextjs.mjs (by hand: Next.js is 300 MB to install).
  expect(documented.sort()).toEqual(
    Object.keys(HOSTS)
      .filter((h) => h !== 'clef-web static')
      .sort(),
  );
});

/** Decides on `origin`'s page at `path`, failing at the first CSP violation. */
async function decide(page: Page, origin: string, path: string) {
  const violations: string[] = [];
  await page.exposeFunction('__violation', (v: string) => violations.push(v));
  await page.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as any).__violation(`${e.effectiveDirective} blocked ${e.blockedURI}`),
    ),
  );
  const requested: string[] = [];
  page.context().on('request', (r) => requested.push(r.url()));
  await page.goto(`${origin}${path}`);
  const handle = await page.waitForFunction(() => (window as any).__clefResult, undefined, {
    timeout: 90_000,
  });
  expect(violations).toEqual([]);
  return { ...((await handle.jsonValue()) as any), requested };
}

for (const [host, start] of Object.entries(HOSTS)) {
  test(`${host}: the documented headers, and the app decides on 3 threads`, async ({ page }) => {
    const running = await start(site);
    try {
      const html = await fetch(`${running.origin}/`);
      expect(html.status).toBe(200);
      expect(html.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(html.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
      expect(html.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      const loader = await fetch(`${running.origin}/ort/ort-wasm-simd-threaded.mjs`, {
        method: 'HEAD',
      });
      expect(loader.status).toBe(200);
      // Thread workers run the loader: it needs COEP itself, and a JavaScript type.
      expect(loader.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
      expect(loader.headers.get('content-type')).toMatch(/^(text|application)\/javascript\b/);
      expect(loader.headers.get('cache-control')).toBe('no-cache');
      const wasm = await fetch(`${running.origin}/ort/ort-wasm-simd-threaded.wasm`, {
        method: 'HEAD',
      });
      expect(wasm.headers.get('content-type')).toBe('application/wasm');
      expect(wasm.headers.get('cache-control')).toBe('no-cache');
      const model = await fetch(`${running.origin}/clef-web/models/clef-nano/manifest.json`, {
        method: 'HEAD',
      });
      expect(model.headers.get('cache-control')).toBe('no-cache');

      // The engine's worker sees 4 cores (the site's threads page): 3 threads, which only start
      // when the page is isolated and onnxruntime's loader comes with COEP.
      const result = await decide(page, running.origin, '/threads.html');
      expectFraudRoute(result, running.origin);
      expect(result.info.threads).toBe(3);
      expect(result.info.threadsReason).toBeNull();
      if (host === 'clef-web static') {
        const firefox = await startFirefox('default');
        try {
          const inFirefox = await firstDecisionInFirefox(firefox, running.origin);
          expectFraudRoute(inFirefox, running.origin);
        } finally {
          await firefox.stop();
        }
      }
    } finally {
      await running.close();
    }
  });
}
