/**
 * The playground's Train panel in Firefox ESR (the dev server): a Latin-1 file refused with the
 * message `clef-web train` gives; the planted task trained in the page's worker, its fits on
 * two thread workers the page started (a worker's own `new Worker()` can block for ever here:
 * src/engine/thread-watch.ts), verified through Firefox's engine, kept in its origin-private file
 * system, loaded through the service worker's local-package route and answering fresh draws on
 * the page's System One route; both baselines (naive Bayes, logistic regression) fitted beside it in Firefox's worker. Chromium
 * runs the full check (test/browser/playground-train.spec.ts: bytes against the disk run, the
 * .zip, the network audit); this one proves the Firefox parts. Then a thread worker whose script
 * cannot be fetched: Firefox reports it, the run ends with `train_thread_failed`, and the panel
 * trains on one thread after it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ElementHandle, Page } from 'puppeteer-core';
import { decodeTrainingText } from '../../src/build/train/encoding.js';
import { plantedExamples, plantedJsonl, plantedRequest } from '../../tools/train/planted.js';
import { testSeed } from '../support/seed.js';
import { connectFirefox, origin, type Firefox } from './support/firefox.js';

let firefox: Firefox;
const work = mkdtempSync(join(tmpdir(), 'clef-firefox-train-'));

beforeAll(async () => {
  firefox = await connectFirefox();
});
afterAll(async () => {
  await firefox?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Types `n` into the Train panel's Threads field, as a user does, once it is enabled. */
async function setThreads(page: Page, n: number): Promise<void> {
  const threads = (await page.waitForSelector(
    '.train input[aria-label="Threads"]:not([disabled])',
  )) as ElementHandle<HTMLInputElement>;
  await threads.click({ count: 3 });
  await threads.type(String(n));
  await page.$eval('.train input[aria-label="Threads"]', (e) =>
    e.dispatchEvent(new Event('change', { bubbles: true })),
  );
}

it('trains the planted task in the page, then uses the model', async () => {
  const file = join(work, 'planted.jsonl');
  writeFileSync(file, plantedJsonl(240, 11));
  const page = await firefox.newPage();
  await page.goto(`${origin()}/`);
  // The bundled clef-nano loaded (auto: on the js device).
  await page.waitForFunction(
    () => /\b(js|wasm)\b/.test(document.querySelector('[data-testid=device]')?.textContent ?? ''),
    { timeout: 120_000 },
  );
  const input = (await page.waitForSelector(
    'input[aria-label="Training data"]',
  )) as ElementHandle<HTMLInputElement>;
  // A Latin-1 file: refused with the message `clef-web train` gives (the same code decides).
  const latin1 = join(work, 'latin1.jsonl');
  const bytes = Buffer.from(`${plantedJsonl(8, 1)}{"state": "café"}\n`, 'latin1');
  writeFileSync(latin1, bytes);
  const expected = (() => {
    try {
      decodeTrainingText(bytes, 'latin1.jsonl');
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('not refused');
  })();
  await input.uploadFile(latin1);
  await page.waitForSelector('.train [role=alert][data-code=examples_encoding]');
  expect(await page.$eval('.train [role=alert]', (e) => e.textContent?.trim())).toBe(expected);
  expect(await page.$eval('.train button.primary', (b) => (b as HTMLButtonElement).disabled)).toBe(
    true,
  );
  await input.uploadFile(file);
  await page.waitForSelector('.train table.label-counts');
  // The fits on two thread workers, as `clef-web train --threads 2`.
  await setThreads(page, 2);
  await (await page.waitForSelector('.train button.primary'))!.click();
  await page.waitForSelector('.train .train-result, .train [role=alert]', { timeout: 240_000 });
  const alert = await page.$eval('.train', (e) => e.querySelector('[role=alert]')?.textContent);
  expect(alert).toBeUndefined();
  const accuracy = parseFloat(await page.$eval('[data-accuracy]', (e) => e.textContent ?? ''));
  expect(accuracy).toBeGreaterThanOrEqual(99);
  const delta = Number(await page.$eval('[data-delta]', (e) => e.textContent ?? ''));
  expect(delta).toBeLessThanOrEqual(1e-3);
  expect(await page.$eval('[data-threads]', (e) => e.textContent)).toBe('2');
  // Both baselines, fitted in Firefox's worker too, each with its sign test.
  expect(await page.$eval('[data-logistic]', (e) => e.textContent ?? '')).toMatch(/^\d+\.\d%$/);
  const chance = await page.$$eval('[data-chance]', (spans) =>
    spans.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ')),
  );
  expect(chance).toEqual([
    expect.stringMatching(/^\(right alone: the model \d+, naive Bayes \d+; sign test p /),
    expect.stringMatching(/^\(right alone: the model \d+, logistic regression \d+; sign test p /),
  ]);

  await (await page.waitForSelector('::-p-aria(Use this model here[role="button"])'))!.click();
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('dl.facts dd')].some((d) =>
        d.textContent?.includes('support-router'),
      ),
    { timeout: 60_000 },
  );
  const seed = testSeed('firefox train: fresh planted draws');
  const fresh = plantedExamples(8, seed);
  const answers = await page.evaluate(
    async (requests) => {
      const out: string[] = [];
      for (const body of requests) {
        // The page registers its route just after the model shows: retry a 503 for a while.
        for (let i = 0; ; i++) {
          const r = await fetch('/v1/systemone', { method: 'POST', body: JSON.stringify(body) });
          const json = (await r.json()) as { answers?: { route: { choice: string } } };
          if (r.status === 200 || i === 100) {
            out.push(json.answers?.route.choice ?? `${r.status} ${JSON.stringify(json)}`);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      return out;
    },
    fresh.map((e) => plantedRequest(e.state)),
  );
  expect(answers, `seed ${seed}`).toEqual(fresh.map((e) => e.label));
  await page.close();
  expect(firefox.errors).toEqual([]);
});

it('ends the run with train_thread_failed when a thread worker does not load, then trains on one', async () => {
  const file = join(work, 'planted-40.jsonl');
  writeFileSync(file, plantedJsonl(40, 5));
  const page = await firefox.newPage();
  // The thread workers' script cannot be fetched (offline before a run ever used threads, say).
  // Firefox's BiDi sees a worker's requests but cannot block them, so the page is given a
  // Worker that sends the thread workers to a script the server does not have (a 404).
  await page.evaluateOnNewDocument(() => {
    const PageWorker = window.Worker;
    const refused: string[] = [];
    (window as unknown as { refusedThreads: string[] }).refusedThreads = refused;
    window.Worker = class extends PageWorker {
      constructor(url: string | URL, options?: WorkerOptions) {
        const missing = /train-thread\.worker/.test(String(url));
        if (missing) refused.push(String(url));
        super(
          missing ? new URL('/no-such-script/train-thread.worker.js', location.href) : url,
          options,
        );
      }
    };
  });
  await page.goto(`${origin()}/`);
  const input = (await page.waitForSelector(
    'input[aria-label="Training data"]',
  )) as ElementHandle<HTMLInputElement>;
  await input.uploadFile(file);
  await page.waitForSelector('.train table.label-counts');
  await setThreads(page, 2);
  await (await page.waitForSelector('.train button.primary:not([disabled])'))!.click();
  await page.waitForSelector('.train [role=alert]', { timeout: 60_000 });
  expect(await page.$eval('.train [role=alert]', (e) => e.getAttribute('data-code'))).toBe(
    'train_thread_failed',
  );
  const message = await page.$eval('.train [role=alert]', (e) => e.textContent ?? '');
  expect(message).toContain('a training thread failed');
  expect(message).toContain('set Threads to 1 to fit in one thread');
  expect(
    await page.evaluate(
      () => (window as unknown as { refusedThreads: string[] }).refusedThreads.length,
    ),
  ).toBe(2);
  expect(await page.$$('.train .train-result')).toHaveLength(0);
  // Nothing is left busy: on one thread (no thread worker), Train trains.
  await setThreads(page, 1);
  await (await page.waitForSelector('.train button.primary:not([disabled])'))!.click();
  await page.waitForSelector('.train .train-result', { timeout: 120_000 });
  expect(await page.$eval('[data-threads]', (e) => e.textContent)).toBe('1');
  await page.close();
  expect(firefox.errors.filter((e) => !/no-such-script/.test(e))).toEqual([]);
});
