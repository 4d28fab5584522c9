// External data files stay under 4 GiB (onnxruntime-web's offsets are 32-bit: one bigger file
// loads without an error and computes NaN). The converter's writer refuses to make one, and the
// engine refuses a manifest that lists one, before downloading anything.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/engine/manifest.js';
import { GraphBuilder, MAX_EXTERNAL_DATA_FILE_BYTES } from '../../src/node/onnx/graph.js';
import { PackageError } from '../../src/wire/errors.js';

describe('the 4 GiB data-file invariant', () => {
  it('the writer refuses a data-file limit of 4 GiB or more', () => {
    const dir = mkdtempSync(join(tmpdir(), 'clef-limit-'));
    try {
      const onnxPath = join(dir, 'm.onnx');
      expect(() => new GraphBuilder({ name: 'm', onnxPath, maxDataFileBytes: 2 ** 32 })).toThrow(
        /4 GiB/,
      );
      expect(
        () =>
          new GraphBuilder({ name: 'm', onnxPath, maxDataFileBytes: MAX_EXTERNAL_DATA_FILE_BYTES }),
      ).not.toThrow();
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
    expect(() => parseManifest(manifest)).not.toThrow();
  });
});
