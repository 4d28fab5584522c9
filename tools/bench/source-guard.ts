/**
 * A digest of the trainer's source, taken when a benchmark starts and checked again before it
 * starts worker threads and when it ends. A worker thread imports the source files as they are on
 * disk when it starts, while the main thread keeps what it imported at the start: a file edited
 * in between gives the threads other code than the main thread, and so other bits on N threads
 * than on 1 (shown by editing `portable-math.ts` during a CLINC150 run of train-objective.ts:
 * each thread count agreed with itself, and 1 and 2 threads differed). A comparison of bits
 * across thread counts means nothing then, so the benchmark stops and says so.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A path, not a URL's pathname: a checkout under a folder with a space or a non-ASCII name.
const SOURCE = fileURLToPath(new URL('../../src/', import.meta.url));

/** sha256 over every file under `root` (default src/), its path and its bytes, in sorted order. */
export function sourceDigest(root = SOURCE): string {
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash.update(file.slice(root.length)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/** Throws where src/ (or `root`) differs from `atStart` (from `sourceDigest()`), naming `when`. */
export function assertSourceUnchanged(atStart: string, when: string, root?: string): void {
  if (sourceDigest(root) === atStart) return;
  throw new Error(
    `src/ changed on disk ${when}: worker threads would run other code than the main thread, ` +
      'so bits compared across thread counts would mean nothing. Run the benchmark again with src/ left alone.',
  );
}
