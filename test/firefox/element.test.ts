/**
 * `<clef-decide>` in Firefox ESR: the elements of the Chromium suite's page sharing one engine,
 * showing the engine's numbers and following the field they are bound to as a person types
 * into it; and the prebuilt one-script-tag element from `clef-web assets --element` behind a
 * plain static server without COOP/COEP (not cross-origin isolated: one thread), deciding with
 * the bundled clef-nano.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import { ELEMENT_PAGE } from '../browser/support/consumer-app-sources.js';
import { connectFirefox, origin, type Firefox } from './support/firefox.js';
import { staticSite } from '../support/static-site.js';

let firefox: Firefox;

beforeAll(async () => {
  firefox = await connectFirefox();
});
afterAll(async () => {
  await firefox?.close();
});

const decisions = (page: Page, id: string) =>
  page.evaluate(
    (id) =>
      (window as any).events.filter((e: any) => e.type === 'clef-decision' && e.target === id)
        .length as number,
    id,
  );

async function untilDecisions(page: Page, id: string, count: number) {
  await page.waitForFunction(
    (id, count) =>
      (window as any).events.filter((e: any) => e.type === 'clef-decision' && e.target === id)
        .length >= count,
    { timeout: 90_000 },
    id,
    count,
  );
}

describe('<clef-decide> on the dev server', () => {
  it('two elements share one load, show the engine numbers and follow their bound field', async () => {
    const page = await firefox.newPage();
    await page.goto(`${origin()}/test/browser/pages/element.html`);
    await untilDecisions(page, 'bound', 1);
    await untilDecisions(page, 'themed', 1);
    expect(await page.evaluate(() => (window as any).registry.loadsStarted)).toBe(1);

    // What the element shows is what the engine answered: one meter per option, valued so.
    const shown = await page.evaluate(() => {
      const event = (window as any).events.find(
        (e: any) => e.type === 'clef-decision' && e.target === 'bound',
      );
      const root = document.getElementById('bound')!.shadowRoot!;
      const meters = [...root.querySelectorAll('[data-question=route] [role=meter]')];
      return {
        probabilities: event.detail.response.answers.route.probabilities,
        meters: meters.map((m) => [m.getAttribute('aria-label'), m.getAttribute('aria-valuenow')]),
      };
    });
    const options = Object.entries(shown.probabilities as Record<string, number>);
    expect(shown.meters).toHaveLength(3);
    options.forEach(([option, p], i) => {
      expect(shown.meters[i]![0]).toMatch(new RegExp(`^route: ${option}`));
      expect(Math.abs(Number(shown.meters[i]![1]) - p * 100)).toBeLessThanOrEqual(0.05 + 1e-9);
    });

    // Typing into the bound field (real key events) decides again, on the new text.
    const text = 'The parcel never arrived.';
    await page.focus('#ticket');
    await page.$eval('#ticket', (t) => (t as HTMLTextAreaElement).select());
    await page.type('#ticket', text);
    await page.waitForFunction(
      (text) =>
        (window as any).events.some(
          (e: any) =>
            e.type === 'clef-decision' && e.target === 'bound' && e.detail.request.state === text,
        ),
      { timeout: 60_000 },
      text,
    );
    expect(await decisions(page, 'bound')).toBeGreaterThanOrEqual(2);
    expect(
      await page.evaluate(
        () => (window as any).events.filter((e: any) => e.type === 'clef-error').length,
      ),
    ).toBe(0);
    await page.close();
    expect(firefox.errors).toEqual([]);
  });
});

describe('the one-script-tag element on a plain static server', () => {
  const ROOT = resolve(import.meta.dirname, '../..');
  let site: string;

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist/node')) || !existsSync(join(ROOT, 'dist/element'))) {
      throw new Error('No dist/: run "npm run build" first (npm test builds before it tests)');
    }
    site = mkdtempSync(join(tmpdir(), 'clef-firefox-site-'));
    execFileSync('node', [join(ROOT, 'bin/clef-web.mjs'), 'assets', site, '--element'], {
      stdio: 'pipe',
    });
    writeFileSync(join(site, 'index.html'), ELEMENT_PAGE);
  });
  afterAll(() => {
    if (site) rmSync(site, { recursive: true, force: true });
  });

  it('decides with the bundled clef-nano on one thread, without COOP/COEP', async () => {
    const server = await staticSite(site, false);
    const page = await firefox.newPage();
    try {
      await page.goto(`${server.origin}/`);
      await page.waitForFunction(() => (window as any).__clefResult, { timeout: 90_000 });
      const out = await page.evaluate(async () => ({
        isolated: globalThis.crossOriginIsolated,
        response: (window as any).__clefResult,
        threads: (await (document.querySelector('clef-decide') as any).info()).threads,
      }));
      expect(out.isolated).toBe(false);
      expect(out.threads).toBe(1);
      expect(out.response.model).toBe('clef-nano');
      expect(out.response.answers.route.choice).toBe('card_declined');
      expect(server.missing.filter((p) => p !== '/favicon.ico')).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
    expect(firefox.errors).toEqual([]);
  });
});
