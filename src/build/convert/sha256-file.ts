import { createHash } from '../host/sha256.js';
import { closeSync, openSync, readSync } from '../host/files.js';

/** SHA-256 of a file, read in 8 MiB pieces. */
export function sha256File(path: string): string {
  const hash = createHash('sha256');
  const buffer = new Uint8Array(8 * 1024 * 1024);
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
