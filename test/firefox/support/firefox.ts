/**
 * Debian's Firefox ESR for the Firefox suite (test/firefox), driven over WebDriver BiDi by
 * puppeteer-core; Playwright's Firefox is a patched build, and Playwright's own BiDi client
 * (its `moz-firefox` channel) asks ESR 153 for a command it lacks. global-setup.ts launches two
 * Firefoxes once for the whole suite (starting one costs 4 to 20 s here, a session on a running
 * one well under 1 s): `default`, as users have it, and `tuned`, with WebGPU turned on and
 * a 1 MiB storage limit (quota.test.ts, webgpu.test.ts). Each test file connects with its
 * own BiDi session and works in a fresh browser context (its own storage, service workers and
 * caches), closed when the file ends. Stopping a Firefox waits until its whole process group
 * (content, socket, GPU processes) is gone, and fails if any is left.
 */
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { inject } from 'vitest';
import type { FirefoxKind } from './launch.js';

export {
  FIREFOX_PREFS,
  startFirefox,
  TUNED_STORAGE_LIMIT_KIB,
  type FirefoxKind,
  type RunningFirefox,
} from './launch.js';

export interface Firefox {
  browser: Browser;
  context: BrowserContext;
  /** A new tab in this file's context, its console errors and page errors recorded. */
  newPage: () => Promise<Page>;
  /** Console errors and uncaught page errors of every page opened by `newPage`. */
  errors: string[];
  /** Closes this file's context and ends its session; Firefox keeps running. */
  close: () => Promise<void>;
}

/** A session on the suite's `kind` Firefox, with a fresh browser context. */
export async function connectFirefox(kind: FirefoxKind = 'default'): Promise<Firefox> {
  const browser = await puppeteer.connect({
    browserWSEndpoint: inject('firefox')[kind],
    protocol: 'webDriverBiDi',
    protocolTimeout: 150_000,
  });
  const context = await browser.createBrowserContext();
  const errors: string[] = [];
  return {
    browser,
    context,
    errors,
    newPage: async () => {
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String((e as Error).message ?? e)));
      return page;
    },
    close: async () => {
      await context.close();
      await browser.disconnect();
    },
  };
}

/** The dev server's origin (started by global-setup.ts). */
export const origin = () => inject('origin');

/** Opens a test page on the dev server and waits for its module scripts (#status 'ready'). */
export async function openTestPage(page: Page, path: string): Promise<void> {
  await page.goto(new URL(path, origin()).href);
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'ready', {
    timeout: 60_000,
  });
}

declare module 'vitest' {
  export interface ProvidedContext {
    origin: string;
    firefox: Record<FirefoxKind, string>;
  }
}
