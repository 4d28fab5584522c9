/**
 * `npx tsx tools/bench/train-page.ts [--tasks helpdesk,devices,bikeshop] [--threads 1,2]
 *   [--label x] [--no-write]`
 *
 * The playground's Train panel in Debian's Chromium (the dev server), on the project's small
 * hand-written files (data/tasks/<task>/train.jsonl and its question.json): each file trained at
 * each Threads setting, one after the other in the same page, the time from the Train button to
 * the result, the renderer's peak resident memory meanwhile (the page's workers are its threads;
 * the page and its engine included), the threads the result says the fits ran on, and the
 * converted files' hashes from the package's manifest (README.md aside: it names the engine and
 * the times), so the settings can be seen to give the same bytes. Prints the times and the ratio to the first setting, and
 * writes bench/results/<date>-train-page[-label].json.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { loadAverage, machineFacts, readMemory, resetPeaks } from './proc.js';
import { writeResults } from './results-file.js';
import { serve } from './serve.js';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,devices,bikeshop' },
    threads: { type: 'string', default: '1,2' },
    label: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const tasks = (args.tasks as string).split(',').filter(Boolean);
const settings = (args.threads as string).split(',').map(Number);

/** The entries of a stored (uncompressed) zip, read front to back by their local headers. */
function storedZip(bytes: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let at = 0;
  while (bytes.readUInt32LE(at) === 0x04034b50) {
    const size = bytes.readUInt32LE(at + 18);
    const nameLength = bytes.readUInt16LE(at + 26);
    const start = at + 30 + nameLength + bytes.readUInt16LE(at + 28);
    out.set(
      bytes.subarray(at + 30, at + 30 + nameLength).toString('utf8'),
      bytes.subarray(start, start + size),
    );
    at = start + size;
  }
  return out;
}

interface Run {
  task: string;
  threadsAsked: number;
  threadsRan: number;
  seconds: number;
  /** The renderer's peak resident memory during the run (its workers are its threads), MB. */
  peakMB: number | null;
  accuracy: string;
  /** The phases' times as the panel shows them. */
  phases: string;
  /** path sha256 of each file of the package but README.md. */
  files: string[];
}

const loadStart = loadAverage();
const served = await serve('dev', 5190);
const context = await chromium.launchPersistentContext('', {
  executablePath: CHROMIUM_PATH,
  args: CHROMIUM_ARGS,
  acceptDownloads: true,
});
const runs: Run[] = [];
try {
  const page = await context.newPage();
  await page.goto(`${served.origin}/`);
  await page
    .getByTestId('device')
    .filter({ hasText: /wasm|js/ })
    .waitFor({ timeout: 180_000 });
  const panel = page.locator('clef-train-panel');
  for (const task of tasks) {
    for (const threads of settings) {
      await panel.getByLabel('Training data').setInputFiles({
        name: `${task}.jsonl`,
        mimeType: 'application/jsonl',
        buffer: readFileSync(`data/tasks/${task}/train.jsonl`),
      });
      const question = panel.getByLabel('Question', { exact: true });
      await question.waitFor();
      await question.fill(readFileSync(`data/tasks/${task}/question.json`, 'utf8'));
      await question.blur();
      await panel.getByLabel('Model name').fill(task);
      const field = panel.getByLabel('Threads');
      await field.fill(String(threads));
      await field.blur();
      const train = panel.getByRole('button', { name: 'Train', exact: true });
      await train.waitFor();
      await page.waitForFunction(
        () =>
          !(document.querySelector('clef-train-panel button.primary') as HTMLButtonElement)
            .disabled,
      );
      resetPeaks();
      const t0 = performance.now();
      await train.click();
      const result = panel.locator('.train-result');
      await result.waitFor({ timeout: 900_000 });
      const seconds = (performance.now() - t0) / 1000;
      const peak = readMemory().renderer?.peak;
      const downloading = page.waitForEvent('download');
      await result.getByRole('button', { name: 'Download .zip' }).click();
      const zip = storedZip(readFileSync((await (await downloading).path())!));
      const manifest = JSON.parse(zip.get(`${task}/manifest.json`)!.toString('utf8')) as {
        files: Array<{ path: string; sha256: string }>;
      };
      const run: Run = {
        task,
        threadsAsked: threads,
        threadsRan: Number(await result.locator('[data-threads]').textContent()),
        seconds,
        peakMB: peak === undefined ? null : Math.round(peak / 1e6),
        accuracy: ((await result.locator('[data-accuracy]').first().textContent()) ?? '').trim(),
        phases: ((await result.locator('[data-timings]').textContent()) ?? '')
          .replace(/\s+/g, ' ')
          .trim(),
        files: manifest.files
          .filter((f) => f.path !== 'README.md')
          .map((f) => `${f.path} ${f.sha256}`),
      };
      runs.push(run);
      const first = runs.find((r) => r.task === task) as Run;
      const same = JSON.stringify(first.files) === JSON.stringify(run.files);
      console.log(
        `${task}: Threads ${threads} (ran on ${run.threadsRan}): ${seconds.toFixed(1)} s, ` +
          `renderer peak ${run.peakMB ?? '?'} MB, ` +
          `${(first.seconds / seconds).toFixed(2)}× the first setting; out of fold ${run.accuracy}; ` +
          `files ${same ? 'the same bytes' : 'DIFFERENT'} as the first setting\n  ${run.phases}`,
      );
    }
  }
} finally {
  await context.close();
  await served.close();
}
const body = {
  bench: 'train-page',
  browser: `chromium ${CHROMIUM_PATH}`,
  machine: machineFacts(loadStart),
  runs,
};
if (!args['no-write']) writeResults(args.label ? `train-page-${args.label}` : 'train-page', body);
