// The thread benchmarks' guard (tools/bench/source-guard.ts): a digest of the source tree that
// changes with any file's bytes or name, and stays put otherwise, so a benchmark whose worker
// threads would load other code than its main thread stops instead of comparing their bits.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertSourceUnchanged, sourceDigest } from '../../../tools/bench/source-guard.js';

describe('the thread benchmarks’ source guard', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'clef-source-guard-'));
    mkdirSync(join(root, 'build', 'train'), { recursive: true });
    writeFileSync(join(root, 'index.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'build', 'train', 'math.ts'), 'export const LN2_LO = 1.9e-10;\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('gives the same digest for the same tree and passes the check', () => {
    const start = sourceDigest(root);
    expect(sourceDigest(root)).toBe(start);
    expect(() => assertSourceUnchanged(start, 'during the run', root)).not.toThrow();
  });

  it('stops, naming when, where a file deep in the tree changed by one character', () => {
    const start = sourceDigest(root);
    writeFileSync(join(root, 'build', 'train', 'math.ts'), 'export const LN2_LO = 1.8e-10;\n');
    expect(() => assertSourceUnchanged(start, 'before the 2-thread row', root)).toThrow(
      /src\/ changed on disk before the 2-thread row/,
    );
  });

  it('sees a file renamed or added, not only edited', () => {
    const start = sourceDigest(root);
    renameSync(join(root, 'index.ts'), join(root, 'main.ts'));
    const renamed = sourceDigest(root);
    expect(renamed).not.toBe(start);
    writeFileSync(join(root, 'extra.ts'), '');
    expect(sourceDigest(root)).not.toBe(renamed);
  });

  it('reads the repository’s own src/ by default', () => {
    expect(sourceDigest()).toMatch(/^[0-9a-f]{64}$/);
    expect(sourceDigest()).not.toBe(sourceDigest(root));
  });
});
