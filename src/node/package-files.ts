/**
 * A package directory's files, checked before the engine uses any (engine.ts): the manifest
 * parses, every path stays inside the directory (no `..`, absolute paths, or symlinks leading
 * out), and every file has the manifest's size and SHA-256. Small files the engine reads itself
 * are read once and their verified bytes kept; large ones are stream-hashed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { IntegrityError, PackageError } from '../wire/errors.js';
import {
  isSafePackagePath,
  MANIFEST_FILE,
  parseManifest,
  type FileRole,
  type ManifestFile,
  type PackageManifest,
} from '../core/manifest.js';

/** Files the engine reads itself: up to this size they are read once and held. */
const IN_MEMORY_MAX_BYTES = 256 * 2 ** 20;
const HELD_ROLES: ReadonlySet<FileRole> = new Set([
  'tokenizer',
  'tokenizer-config',
  'lexicon',
  'calibration',
]);

/** Reads and checks `<dir>/manifest.json`. */
export async function readPackageManifest(dir: string): Promise<PackageManifest> {
  return (await readManifestAndHash(dir)).manifest;
}

/** The manifest and the SHA-256 of the very bytes parsed (what records name the package by). */
export async function readManifestAndHash(
  dir: string,
): Promise<{ manifest: PackageManifest; sha256: string }> {
  const path = join(dir, MANIFEST_FILE);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new PackageError(`${path}: cannot read the manifest (${(e as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new PackageError(`${path}: not JSON (${(e as Error).message})`);
  }
  return {
    manifest: parseManifest(value),
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * 2 ** 20 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/**
 * Resolves a manifest path inside the package; refuses paths that leave it, lexically or
 * through a symlink.
 */
async function packagePath(realDir: string, file: ManifestFile): Promise<string> {
  // Percent-encoded dots and slashes too: a URL resolver (the browser's) reads `%2e%2e/` as
  // `../`, so such a manifest would name different files in the browser and here.
  if (!isSafePackagePath(file.path) || /%(?:2e|2f|5c)/i.test(file.path)) {
    throw new PackageError(`${file.path}: the path points outside the package`, {
      file: file.path,
    });
  }
  const full = resolve(realDir, file.path);
  let real: string;
  try {
    real = await realpath(full);
  } catch {
    throw new PackageError(`${file.path}: missing from the package directory ${realDir}`, {
      file: file.path,
    });
  }
  if (!real.startsWith(realDir + sep)) {
    throw new PackageError(`${file.path}: resolves outside the package (${real})`, {
      file: file.path,
    });
  }
  return real;
}

export interface VerifiedFiles {
  /** Absolute path of each manifest file, by manifest path. */
  paths: Map<string, string>;
  /** Verified bytes of the files small enough to hold, by manifest path. */
  bytes: Map<string, Uint8Array>;
}

/**
 * Checks every manifest file's location, size and SHA-256; throws PackageError (missing, outside
 * the package) or IntegrityError (wrong size, or hash) naming the file.
 */
export async function verifyPackageFiles(
  dir: string,
  manifest: PackageManifest,
): Promise<VerifiedFiles> {
  const realDir = await realpath(dir);
  const paths = new Map<string, string>();
  const bytes = new Map<string, Uint8Array>();
  for (const file of manifest.files) {
    const path = await packagePath(realDir, file);
    const size = (await stat(path)).size;
    if (size !== file.bytes) throw new IntegrityError(file.path, file.bytes, size, 'size');
    let actual: string;
    if (size <= IN_MEMORY_MAX_BYTES && HELD_ROLES.has(file.role)) {
      const data = new Uint8Array(await readFile(path));
      actual = createHash('sha256').update(data).digest('hex');
      bytes.set(file.path, data);
    } else {
      actual = await sha256OfFile(path);
    }
    if (actual !== file.sha256) throw new IntegrityError(file.path, file.sha256, actual);
    paths.set(file.path, path);
  }
  return { paths, bytes };
}
