/** Load progress as words and a percentage, for the element and the playground. */
import type { LoadProgress } from '../../wire/wire.js';

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

export function progressText(p: LoadProgress | null): string {
  if (!p) return 'Starting the engine…';
  switch (p.phase) {
    case 'manifest':
      return 'Reading the package manifest…';
    case 'download': {
      const where = p.fromCache ? 'Reading from the local cache' : 'Downloading';
      const of =
        p.totalBytes > 0 ? ` · ${megabytes(p.loadedBytes)} of ${megabytes(p.totalBytes)}` : '';
      return `${where}${p.file ? ` ${p.file}` : ''}${of}`;
    }
    case 'verify':
      return `Checking integrity${p.file ? ` of ${p.file}` : ''}…`;
    case 'compile':
      return 'Preparing the model…';
    case 'ready':
      return 'Ready';
  }
}

/** 0-100 while bytes are counted; undefined (indeterminate) otherwise. */
export function progressPercent(p: LoadProgress | null): number | undefined {
  if (!p || p.totalBytes <= 0) return undefined;
  if (p.phase !== 'download' && p.phase !== 'verify') return undefined;
  return Math.min(100, Math.round((p.loadedBytes / p.totalBytes) * 100));
}
