/**
 * The playground's Train panel in Chromium: the planted task (each state's label is decided by
 * one planted word) trained in the page, with the pipeline `clef-web train` runs, in a worker
 * over an in-memory file system. Checked: the label counts; the held-out accuracy (≥ 99%, as the
 * trainer's own test asks); the package verified through the page's engine to within 1e-3; the
 * converted files byte-identical to the same run on the disk in Node (so the in-memory fs, path
 * and SHA-256 stand-ins change nothing); the downloaded .zip holding exactly the package the
 * manifest describes; the model answering fresh planted draws once "used"; and no request to
 * any origin but the page's own.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { loadNodePackage } from '../../src/node/engine.js';
import { runTraining } from '../../src/node/train/pipeline.js';
import { plantedExamples, plantedJsonl, plantedRequest } from '../../tools/train/planted.js';
import { testSeed } from '../support/seed.js';
import { openPlayground } from './playground-helpers.js';

const EXAMPLES = plantedJsonl(240, 11);

/** The entries of a stored (uncompressed) zip, read front to back by their local headers. */
function readStoredZip(bytes: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let at = 0;
  while (bytes.readUInt32LE(at) === 0x04034b50) {
    expect(bytes.readUInt16LE(at + 8), 'stored, not compressed').toBe(0);
    const size = bytes.readUInt32LE(at + 18);
    const nameLength = bytes.readUInt16LE(at + 26);
    const extra = bytes.readUInt16LE(at + 28);
    const name = bytes.subarray(at + 30, at + 30 + nameLength).toString('utf8');
    const start = at + 30 + nameLength + extra;
    out.set(name, bytes.subarray(start, start + size));
    at = start + size;
  }
  expect(bytes.readUInt32LE(at), 'central directory after the entries').toBe(0x02014b50);
  return out;
}

interface ManifestFile {
  path: string;
  role: string;
  sha256: string;
}

test('trains in the page, verifies through the page engine, downloads and uses the model', async ({
  browser,
}, testInfo) => {
  test.setTimeout(300_000);
  const context = await browser.newContext({
    baseURL: testInfo.project.use.baseURL,
    acceptDownloads: true,
  });
  const origin = new URL(testInfo.project.use.baseURL as string).origin;
  const foreign: string[] = [];
  context.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith('blob:') && !url.startsWith('data:')) {
      foreign.push(url);
    }
  });
  const page = await openPlayground(context);
  await expect(page.getByTestId('device')).toContainText('wasm', { timeout: 120_000 });

  await page.getByLabel('Training data (labelled JSONL)').setInputFiles({
    name: 'planted.jsonl',
    mimeType: 'application/json',
    buffer: Buffer.from(EXAMPLES),
  });
  const counts = page.locator('.train table.label-counts');
  for (const option of ['abuse', 'billing', 'other', 'shipping']) {
    await expect(counts.locator('tr', { hasText: option })).toContainText('60');
  }
  await page.getByRole('button', { name: 'Train', exact: true }).click();
  await expect(page.locator('.train .progress-note')).toBeVisible({ timeout: 30_000 });
  const result = page.locator('.train .train-result');
  await expect(result).toBeVisible({ timeout: 240_000 });
  await expect(page.locator('.train [role=alert]')).toHaveCount(0);
  const accuracy = parseFloat((await result.locator('[data-accuracy]').textContent()) ?? '');
  expect(accuracy).toBeGreaterThanOrEqual(99);
  const delta = Number(await result.locator('[data-delta]').textContent());
  expect(delta).toBeLessThanOrEqual(1e-3);

  // The download: the package (and its release), every file as the manifest hashes it.
  const download = page.waitForEvent('download');
  await result.getByRole('button', { name: 'Download .zip' }).click();
  const zip = readStoredZip(readFileSync((await (await download).path())!));
  const manifest = JSON.parse(zip.get('support-router/manifest.json')!.toString('utf8')) as {
    files: ManifestFile[];
    training: { questions: Array<{ id: string; options: string[] }> };
  };
  expect(manifest.training.questions.map((q) => q.id)).toEqual(['route']);
  for (const f of manifest.files) {
    const bytes = zip.get(`support-router/${f.path}`);
    expect(bytes, f.path).toBeDefined();
    expect(createHash('sha256').update(bytes!).digest('hex'), f.path).toBe(f.sha256);
  }
  expect([...zip.keys()].some((k) => k.startsWith('support-router-release/'))).toBe(true);

  // The same run on the disk in Node: the converted files are the same bytes.
  const work = mkdtempSync(join(tmpdir(), 'clef-train-page-'));
  try {
    await runTraining(
      { examples: EXAMPLES, out: join(work, 'package'), fidelityRequests: 0 },
      {
        openPackage: (dir) => loadNodePackage(dir, { threads: 1 }),
        cwd: work,
        runTag: 'node',
        wasmGraphs: false,
        engineName: 'onnxruntime-node',
      },
    );
    const disk = JSON.parse(readFileSync(join(work, 'package', 'manifest.json'), 'utf8')) as {
      files: ManifestFile[];
    };
    // The calibration (fitted on engine logits) and the card (it names the engine) may differ.
    const converted = (files: ManifestFile[]) =>
      files
        .filter((f) => f.role !== 'calibration' && f.path !== 'README.md')
        .map((f) => `${f.path} ${f.sha256}`);
    expect(converted(manifest.files).length).toBeGreaterThanOrEqual(5);
    expect(converted(manifest.files)).toEqual(converted(disk.files));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  // Used here: the playground loads it, and it answers fresh draws through the page's route.
  await result.getByRole('button', { name: 'Use this model here' }).click();
  await expect(page.locator('dl.facts dd', { hasText: 'support-router' }).first()).toBeVisible({
    timeout: 60_000,
  });
  // The page registers its System One route just after the model shows.
  const probe = plantedRequest('my parcel is late');
  await expect
    .poll(
      () =>
        page.evaluate(
          async (body) =>
            (await fetch('/v1/systemone', { method: 'POST', body: JSON.stringify(body) })).status,
          probe,
        ),
      { timeout: 30_000 },
    )
    .toBe(200);
  const seed = testSeed('playground train: fresh planted draws');
  const fresh = plantedExamples(12, seed);
  const answers = await page.evaluate(
    async (requests) => {
      const out: string[] = [];
      for (const body of requests) {
        const r = await fetch('/v1/systemone', { method: 'POST', body: JSON.stringify(body) });
        const json = (await r.json()) as { answers?: { route: { choice: string } } };
        out.push(json.answers?.route.choice ?? `${r.status} ${JSON.stringify(json)}`);
      }
      return out;
    },
    fresh.map((e) => plantedRequest(e.state)),
  );
  expect(answers, `seed ${seed}`).toEqual(fresh.map((e) => e.label));
  expect(foreign).toEqual([]);
  await context.close();
});

test('refuses a file it cannot learn from, saying why, before any work', async ({
  browser,
}, testInfo) => {
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
  const page = await openPlayground(context);
  // Three examples of one option: five are needed.
  const lines = plantedJsonl(40, 3).split('\n').filter(Boolean);
  const few = lines
    .filter((l) => !l.includes('"route":"abuse"'))
    .concat(lines.filter((l) => l.includes('"route":"abuse"')).slice(0, 3));
  await page.getByLabel('Training data (labelled JSONL)').setInputFiles({
    name: 'few.jsonl',
    mimeType: 'application/json',
    buffer: Buffer.from(few.join('\n')),
  });
  await page.getByRole('button', { name: 'Train', exact: true }).click();
  const alert = page.locator('.train [role=alert]');
  await expect(alert).toHaveAttribute('data-code', 'examples_unlearnable', { timeout: 60_000 });
  await expect(alert).toContainText('abuse');
  await expect(alert).toContainText('5');
  await expect(page.locator('.train .train-result')).toHaveCount(0);
  await context.close();
});
