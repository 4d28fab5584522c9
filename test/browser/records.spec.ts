/**
 * Decision records in the page (docs/records.md): createClef({ record }) and
 * <clef-decide record> keep their records in IndexedDB (or give them to the page's function),
 * every request the page makes stays on its own origin, and the exported JSONL replays as
 * identical in Node (`clef-web replay`) on the same package.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';

const REQUESTS = [
  {
    model: 'clef-nano',
    state: { amount: 12.5, text: 'two charges on my card I never made' },
    questions: {
      route: {
        type: 'choice',
        criteria: { report_fraud: 'Reports fraudulent charges.', card_declined: null, none: null },
      },
      upset: { type: 'noul' },
    },
  },
  {
    model: 'clef-nano',
    state: 'please pay my water bill',
    questions: {
      intent: { type: 'choice', criteria: { pay_bill: null, bill_due: null, weather: null } },
    },
  },
];

test('records stay in the browser and replay as identical in Node', async ({
  browser,
}, testInfo) => {
  const page = await browser.newPage({ baseURL: testInfo.project.use.baseURL });
  const origin = new URL(testInfo.project.use.baseURL!).origin;
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    if (
      !r.url().startsWith(`${origin}/`) &&
      !r.url().startsWith('blob:') &&
      !r.url().startsWith('data:')
    ) {
      elsewhere.push(r.url());
    }
  });
  await page.goto('/test/browser/pages/records.html');
  await page.waitForFunction(() => (window as any).harness !== undefined);
  const { jsonl, given } = await page.evaluate((r) => (window as any).harness.run(r), REQUESTS);
  await page.close();
  expect(elsewhere, 'requests to another origin').toEqual([]);

  const lines = (jsonl as string).trimEnd().split('\n');
  const all = lines.map((l) => JSON.parse(l));
  // Two from createClef; the element's (it decides once loaded, and when asked) beside them.
  const records = all.filter((r) => r.surface === 'page');
  expect(records).toHaveLength(2);
  expect(all.filter((r) => r.surface === 'element').length).toBeGreaterThanOrEqual(1);
  expect(all.every((r) => r.surface === 'page' || r.surface === 'element')).toBe(true);
  for (const r of all) {
    expect(r.engine.device).toBe('wasm');
    expect(r.engine.runtime).toBe('onnxruntime-web/wasm');
    expect(r.package.manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.package.calibration_sha256).toMatch(/^[0-9a-f]{64}$/);
  }
  expect(records[1].thresholds.abstain_below).toBe(0.9);
  expect(given).toHaveLength(1);
  expect(given[0].request).toBeUndefined();
  expect(given[0].request_sha256).toBe(records[0].request_sha256);

  const dir = mkdtempSync(join(tmpdir(), 'clef-page-records-'));
  try {
    const file = join(dir, 'page.jsonl');
    writeFileSync(file, jsonl);
    const { replayFile } = await import('../../src/node/record/replay.js');
    const { loadNodePackage } = await import('../../src/node/engine.js');
    const engine = await loadNodePackage('models/clef-nano', { threads: 1 });
    const out: string[] = [];
    try {
      await replayFile(file, engine, (line) => void out.push(line));
      // The rounded responses are the same across runtimes; the calibrated part's unrounded
      // probabilities move by float32 noise between onnxruntime-web and -node: --tolerance.
      await replayFile(file, engine, (line) => void out.push(line), 1e-6);
    } finally {
      await engine.dispose();
    }
    const calibratedLine = all.findIndex((r) => r.thresholds !== null) + 1;
    const exact = out.slice(0, lines.length);
    exact.forEach((line, i) => {
      if (i + 1 === calibratedLine) {
        expect(line).toMatch(
          /^line \d+: (identical|different: max \|Δp\| [0-9.e-]+; no choice changed)$/,
        );
      } else expect(line).toBe(`line ${i + 1}: identical`);
    });
    for (const line of out.slice(lines.length)) {
      expect(line).toMatch(
        /^line \d+: (identical|within tolerance: max \|Δp\| [0-9.e-]+, no pick changed)$/,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
