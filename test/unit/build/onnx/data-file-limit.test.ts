// External data files stay under 4 GiB (onnxruntime-web's offsets are 32-bit: one bigger file
// loads without an error and computes NaN). The converter's writer refuses to make one, and the
// engine refuses a manifest that lists one, before downloading anything. The converter also
// records the biggest tensor, which the engine checks against the adapter's buffer limits.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from '../../../../src/core/manifest.js';
import { GraphBuilder, MAX_EXTERNAL_DATA_FILE_BYTES } from '../../../../src/build/onnx/graph.js';
import { PackageError } from '../../../../src/wire/errors.js';
import { buildTinyPackage, type TinyPackage } from '../../support/tiny-package.js';

// A tiny fp32 package converted here (a fresh clone has no public/models/ before the browser
// suites build them).
let tiny: TinyPackage;
beforeAll(async () => {
  tiny = await buildTinyPackage('clef-limit-pkg-');
}, 60_000);
afterAll(() => tiny?.remove());

describe('the 4 GiB data-file invariant', () => {
  it('the writer refuses a data-file limit of 4 GiB or more', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clef-limit-'));
    try {
      const onnxPath = join(dir, 'm.onnx');
      expect(() => new GraphBuilder({ name: 'm', onnxPath, maxDataFileBytes: 2 ** 32 })).toThrow(
        /4 GiB/,
      );
      // At the limit it builds, and writes a graph with its data file.
      const g = new GraphBuilder({
        name: 'm',
        onnxPath,
        inlineBelowBytes: 0,
        maxDataFileBytes: MAX_EXTERNAL_DATA_FILE_BYTES,
      });
      g.initializer('w', 1, [256], new Float32Array(256));
      g.input('x', 1, [1]);
      g.output('x', 'x', 1, [1]);
      const written = g.finish();
      expect(written.dataPaths).toHaveLength(1);
      expect(written.dataBytes).toBeGreaterThanOrEqual(1024);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the writer refuses a tensor bigger than a data file may be, and splits smaller ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clef-limit-'));
    try {
      const g = new GraphBuilder({
        name: 'm',
        onnxPath: join(dir, 'm.onnx'),
        inlineBelowBytes: 0,
        maxDataFileBytes: 4096,
      });
      // 1,024 float32 = 4,096 bytes fits exactly; 1,025 does not fit any file.
      g.initializerFromChunks('fits', 1, [1024], [new Float32Array(1024)]);
      g.initializerFromChunks('next', 1, [1024], [new Float32Array(1024)]);
      expect(() => g.initializerFromChunks('big', 1, [1025], [new Float32Array(1025)])).toThrow(
        /4100 bytes is larger than the 4096-byte/,
      );
      g.abort();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the engine refuses a manifest listing a data file of 4 GiB, naming it', () => {
    const manifest = JSON.parse(readFileSync('models/clef-nano/manifest.json', 'utf8'));
    expect(parseManifest(structuredClone(manifest)).files.length).toBeGreaterThan(3);
    const data = manifest.files.find((f: any) => f.role === 'backbone-data');
    data.bytes = 2 ** 32;
    let error: unknown;
    try {
      parseManifest(manifest);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PackageError);
    expect(String((error as Error).message)).toContain(`${data.path} is 4.00 GiB`);
    data.bytes = 2 ** 32 - 1;
    const parsed = parseManifest(manifest);
    expect(parsed.files.find((f) => f.path === data.path)?.bytes).toBe(2 ** 32 - 1);
  });

  it('the writer reports the biggest initializer, inline or streamed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clef-limit-'));
    try {
      const g = new GraphBuilder({
        name: 'm',
        onnxPath: join(dir, 'm.onnx'),
        inlineBelowBytes: 64,
      });
      g.initializer('small', 1, [4], new Float32Array(4)); // 16 bytes, inline
      g.initializerFromChunks('streamed', 1, [300], [new Float32Array(100), new Float32Array(200)]);
      g.initializer('middle', 1, [50], new Float32Array(50)); // 200 bytes, external
      g.input('x', 1, [1]);
      g.output('x', 'x', 1, [1]);
      expect(g.finish().largestTensor).toEqual({ name: 'streamed', bytes: 1200 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the tiny fixture's manifest records its embedding table as the biggest tensor", () => {
    const m = JSON.parse(readFileSync(join(tiny.dir, 'manifest.json'), 'utf8'));
    // fp32 embedding: vocab × hidden float32, larger than any layer matrix at these sizes.
    const bytes = m.architecture.vocabSize * m.architecture.hiddenSize * 4;
    expect(m.variant.largestTensor).toEqual({ name: 'embed_tokens', bytes });
    // Graphs and their data, with a kv16 graph counted as the graph it replaces (not twice).
    const graphFiles = m.files.filter(
      (f: any) => /^(backbone|head)/.test(f.role) && f.role !== 'backbone-kv16',
    );
    expect(m.files.some((f: any) => f.role === 'backbone-kv16')).toBe(true);
    expect(m.variant.gpuBytes).toBe(graphFiles.reduce((n: number, f: any) => n + f.bytes, 0));
  });

  it('the engine refuses a manifest whose biggest tensor is 4 GiB', () => {
    const manifest = JSON.parse(readFileSync(join(tiny.dir, 'manifest.json'), 'utf8'));
    manifest.variant.largestTensor = { name: 'embed_tokens', bytes: 2 ** 32 };
    expect(() => parseManifest(manifest)).toThrow(/tensor embed_tokens is 4\.00 GiB/);
    manifest.variant.largestTensor = { name: 'embed_tokens', bytes: -1 };
    expect(() => parseManifest(manifest)).toThrow(/variant\.largestTensor/);
  });
});
