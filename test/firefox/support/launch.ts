/**
 * Starting and stopping Debian's Firefox ESR (puppeteer-core over WebDriver BiDi), with no
 * test runner attached: the Firefox suite's global setup (firefox.ts) and the packed-app spec
 * (test/browser/consumer-app.spec.ts) both start one here. Stopping waits until Firefox's
 * whole process group (content, socket, GPU processes) is gone, and fails if any is left.
 */
import puppeteer from 'puppeteer-core';
import {
  FIREFOX_INSTALL_HINT,
  FIREFOX_PATH,
  FIREFOX_WEBGPU_PREFS,
  firefoxAvailable,
} from '../../../tools/firefox.mjs';
import { groupMembers } from '../../support/processes.js';

/** The `tuned` Firefox's storage limit, in KiB (`navigator.storage.estimate().quota` / 1024). */
export const TUNED_STORAGE_LIMIT_KIB = 1024;

export const FIREFOX_PREFS = {
  default: {},
  tuned: {
    ...FIREFOX_WEBGPU_PREFS,
    'dom.quotaManager.temporaryStorage.fixedLimit': TUNED_STORAGE_LIMIT_KIB,
  },
} as const;
export type FirefoxKind = keyof typeof FIREFOX_PREFS;

export interface RunningFirefox {
  wsEndpoint: string;
  version: string;
  /** Ends Firefox and every process it started. */
  stop: () => Promise<void>;
}

export async function startFirefox(kind: FirefoxKind): Promise<RunningFirefox> {
  if (!firefoxAvailable()) throw new Error(FIREFOX_INSTALL_HINT);
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    extraPrefsFirefox: FIREFOX_PREFS[kind],
  });
  const wsEndpoint = browser.wsEndpoint();
  const version = await browser.version();
  // puppeteer started Firefox as the leader of its own process group.
  const pid = browser.process()?.pid;
  const exited = new Promise<void>((r) => browser.process()?.once('exit', () => r()));
  await browser.disconnect();
  return {
    wsEndpoint,
    version,
    stop: async () => {
      // A session of its own to close it: the launcher then removes the temporary profile.
      const last = await puppeteer.connect({
        browserWSEndpoint: wsEndpoint,
        protocol: 'webDriverBiDi',
      });
      await last.close();
      await exited;
      if (pid === undefined) return;
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
