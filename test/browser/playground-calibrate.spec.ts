/**
 * The playground's in-page calibration in Chromium on the tiny package: 40 noul questions all
 * labelled `true`. The tiny model answers true for every state with P(true) ≈ 0.54 (its noul
 * logits barely depend on the state), so it is always right and badly underconfident: the
 * likelihood wants the sharpest temperature the search allows, and the calibrated ECE must fall
 * far below the raw one (≈ 0.46). The figures, two reliability diagrams and the exported files
 * are checked against that.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { parseCalibration } from '../../src/calibrate/index.js';
import { openPlayground } from './support/playground.js';

const lines = Array.from({ length: 40 }, (_, i) =>
  JSON.stringify({
    request: {
      model: 'clef-tiny',
      state: `ticket ${i}: ${'lorem ipsum dolor sit amet'.slice(0, 3 + (i % 20))}`,
      questions: { urgent: { type: 'noul', instructions: 'Is it urgent?' } },
    },
    labels: { urgent: true },
  }),
).join('\n');

test('calibrates labelled examples in the page, charts them and exports the files', async ({
  browser,
}, testInfo) => {
  const context = await browser.newContext({
    baseURL: testInfo.project.use.baseURL,
    acceptDownloads: true,
  });
  const page = await openPlayground(context);
  await expect(page.getByTestId('device')).toContainText('wasm', { timeout: 120_000 });
  const input = page.getByLabel('Calibration data (labelled JSONL)');
  await expect(input).toBeEnabled();
  await input.setInputFiles({
    name: 'labelled.jsonl',
    mimeType: 'application/json',
    buffer: Buffer.from(lines),
  });
  const report = page.locator('.calibrate .fit-report');
  await expect(report).toBeVisible({ timeout: 120_000 });
  const text = (await report.textContent()) ?? '';
  expect(text).toMatch(/noul: 30 answers fitted, 10 held out/);
  expect(text).toMatch(/at the search bound/);
  const ece = (row: string) => Number(new RegExp(`${row} +ECE (\\S+)`).exec(text)![1]);
  expect(ece('before')).toBeGreaterThan(0.3);
  expect(ece('after')).toBeLessThan(ece('before') / 3);
  // One figure (raw and calibrated panels) with bars in each.
  const figure = page.locator('.calibrate figure.reliability[data-group="noul"]');
  await expect(figure.locator('svg')).toHaveCount(1);
  expect(await figure.locator('rect.bar').count()).toBeGreaterThanOrEqual(2);
  await expect(figure).toContainText('noul, calibrated');

  const downloads: Record<string, string> = {};
  page.on('download', async (d) => {
    downloads[d.suggestedFilename()] = readFileSync((await d.path())!, 'utf8');
  });
  await page.getByRole('button', { name: /Export calibration.json/ }).click();
  await expect
    .poll(() => Object.keys(downloads).sort(), { timeout: 10_000 })
    .toEqual(['calibration.json', 'manifest.json']);
  const calibration = parseCalibration(downloads['calibration.json']!);
  expect(calibration.types.noul!.temperature).toBeLessThan(0.1);
  const manifest = JSON.parse(downloads['manifest.json']!);
  const entry = manifest.files.find((f: { role: string }) => f.role === 'calibration');
  expect(entry.sha256).toBe(
    createHash('sha256').update(downloads['calibration.json']!).digest('hex'),
  );
  expect(entry.bytes).toBe(Buffer.byteLength(downloads['calibration.json']!));
  await context.close();
});
