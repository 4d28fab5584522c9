/**
 * Launching Debian's Firefox ESR for the Firefox suite (test/firefox), driven over WebDriver
 * BiDi by puppeteer-core; Playwright's Firefox is a patched build, and Playwright's BiDi client
 * (its `moz-firefox` channel) asks ESR 153 for commands it lacks. Each launch gets a fresh
 * profile; `close()` ends the browser and waits until its whole process group (the content,
 * socket and GPU processes) is gone, failing if any is left.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { inject } from 'vitest';
import { FIREFOX_INSTALL_HINT, FIREFOX_PATH, firefoxAvailable } from '../../../tools/firefox.mjs';
import { groupMembers } from '../../support/processes.js';

export interface Firefox {
  browser: Browser;
  /** A new tab (in the default context) with console errors and page errors recorded. */
  newPage: () => Promise<Page>;
  /** Console errors and uncaught page errors of every page opened by `newPage`. */
  errors: string[];
  /** Ends Firefox and every process it started. */
  close: () => Promise<void>;
}

/** The dev server's origin (started by global-setup.ts). */
export const origin = () => inject('origin');

export async function launchFirefox(prefs: Record<string, unknown> = {}): Promise<Firefox> {
  if (!firefoxAvailable()) throw new Error(FIREFOX_INSTALL_HINT);
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    extraPrefsFirefox: prefs,
    protocolTimeout: 150_000,
  });
  const pid = browser.process()?.pid;
  const errors: string[] = [];
  return {
    browser,
    errors,
    newPage: async () => {
      const page = await browser.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String((e as Error).message ?? e)));
      return page;
    },
    close: async () => {
      await browser.close();
      if (pid === undefined) return;
      // puppeteer starts Firefox as the leader of its own process group.
      for (let i = 0; groupMembers(pid).length > 0; i++) {
        if (i === 100) {
          const left = groupMembers(pid);
          process.kill(-pid, 'SIGKILL');
          throw new Error(`Firefox left ${left.length} process(es) running: ${left.join(' ')}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

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
  }
}
