// A manifest cannot point outside its package directory, in Node. Each hostile path
// names a file outside the package that holds exactly the bytes (size and SHA-256) the manifest
// claims, so following the path would pass every other check: the load must still fail with a
// typed PackageError from the path check, naming the file. A tampered file inside the package is
// refused by its SHA-256 (IntegrityError) before it is used.
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrityError, PackageError } from '../../../src/wire/errors.js';
import { loadNodePackage } from '../../../src/node/engine.js';
import { MANIFEST_FILE } from '../../../src/core/manifest.js';
import { buildTinyPackage, type TinyPackage } from '../support/tiny-package.js';

let tiny: TinyPackage;
let work: string;
let tokenizerBytes: Buffer;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-traversal-');
  work = mkdtempSync(join(tmpdir(), 'clef-traversal-cases-'));
  tokenizerBytes = readFileSync(join(tiny.dir, 'tokenizer.json'));
}, 60_000);

afterAll(() => {
  tiny?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface ManifestShape {
  files: Array<{ path: string; role: string }>;
}

/**
 * A copy of the package in `<case>/pkg/` whose manifest names the tokenizer `hostilePath`, and a
 * valid copy of the tokenizer at every place the path could lead: `<case>/x`, `<case>/outside/x`
 * and, for the percent-encoded form, `pkg/%2e%2e/x` (where a non-decoding reader would go).
 */
function packageCase(
  name: string,
  hostilePath: (root: string) => string,
): { dir: string; path: string } {
  const root = join(work, name);
  const dir = join(root, 'pkg');
  cpSync(tiny.dir, dir, { recursive: true });
  mkdirSync(join(root, 'outside'));
  mkdirSync(join(dir, '%2e%2e'));
  for (const at of [join(root, 'x'), join(root, 'outside', 'x'), join(dir, '%2e%2e', 'x')]) {
    writeFileSync(at, tokenizerBytes);
  }
  symlinkSync(join(root, 'outside', 'x'), join(dir, 'link-to-file'));
  symlinkSync(join(root, 'outside'), join(dir, 'link-to-dir'));
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ManifestShape;
  const path = hostilePath(root);
  manifest.files.find((f) => f.role === 'tokenizer')!.path = path;
  writeFileSync(manifestPath, JSON.stringify(manifest));
  return { dir, path };
}

const HOSTILE: Array<[string, (root: string) => string]> = [
  ['parent', () => '../x'],
  ['absolute', (root) => join(root, 'x')],
  ['dot-dot-inside', () => 'a/../../x'],
  ['deep-dot-dot', () => 'a/b/../../../outside/x'],
  ['percent-encoded-dots', () => '%2e%2e/x'],
  ['percent-encoded-dots-upper', () => '%2E%2E/x'],
  ['percent-encoded-slash', () => '..%2fx'],
  ['backslash', () => '..\\x'],
  ['backslash-inside', () => 'a\\..\\..\\x'],
  ['file-url', (root) => `file://${join(root, 'x')}`],
  ['dot-segment', () => './tokenizer.json'],
  ['symlink-to-file', () => 'link-to-file'],
  ['symlink-to-dir', () => 'link-to-dir/x'],
];

describe('loadNodePackage refuses manifest paths that leave the package', () => {
  for (const [name, hostile] of HOSTILE) {
    it(`refuses ${name}`, async () => {
      const { dir, path } = packageCase(name, hostile);
      const error = await loadNodePackage(dir, { threads: 1 }).then(
        (engine) => {
          void engine.dispose();
          return new Error('loaded');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PackageError);
      const e = error as PackageError;
      expect(e.code).toBe('package_invalid');
      // The path check, not a later one (size, hash, a missing file) refused it.
      expect(e.message).toMatch(/points outside the package|resolves outside the package/);
      expect(e.message).toContain(JSON.stringify(path).slice(1, -1).slice(0, 8));
    });
  }

  it('refuses a path with a NUL byte (Node cannot open it: a typed error, not a TypeError)', async () => {
    const { dir } = packageCase('nul-byte', () => 'tokenizer.json\u0000../x');
    const error = await loadNodePackage(dir, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageError);
  });

  it('loads the same package when its paths are its own (the cases differ only in the path)', async () => {
    const { dir } = packageCase('control', () => 'tokenizer.json');
    const engine = await loadNodePackage(dir, { threads: 1 });
    expect(engine.models.length).toBeGreaterThan(0);
    await engine.dispose();
  });

  it('refuses a file whose bytes changed (same size) with an IntegrityError naming it', async () => {
    const { dir } = packageCase('tampered', () => 'tokenizer.json');
    const file = join(dir, 'tokenizer.json');
    const bytes = readFileSync(file);
    bytes[100] = bytes[100]! ^ 1;
    writeFileSync(file, bytes);
    const error = await loadNodePackage(dir, { threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntegrityError);
    expect((error as IntegrityError).details['file']).toBe('tokenizer.json');
  });
});
