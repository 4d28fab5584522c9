/**
 * The lexicon's rows (lm_head_rows.bin) for a session: held in memory, or read row by row from
 * Cache Storage when the file is big. Shared by every device's session (clef-session.ts,
 * js-session.ts).
 */
import { Lexicon, RangeLexicon } from '../clef/lexicon.js';
import type { SpanMeanSource } from '../clef/head-inputs.js';
import type { ManifestFile } from '../core/manifest.js';
import type { PackageSource } from './package-fetch.js';

/**
 * Rows files from this size on are read row by row from their cached copy (Chromium keeps Cache
 * Storage bodies on disk) instead of being held in the worker: Clef-flash's is ~1 GB, of which a
 * request reads a few rows. Smaller ones (clef-nano's is 1.2 MB) stay in memory.
 */
export const LEXICON_IN_MEMORY_BELOW_BYTES = 64 * 2 ** 20;

/** The lexicon from memory, or from Cache Storage when it is big and cached (loan released). */
export async function openLexicon(
  pkg: PackageSource,
  file: ManifestFile,
  inMemoryBelowBytes: number,
): Promise<{
  lexicon: SpanMeanSource;
  lexiconLoan: { release(): void } | null;
  lexiconSource: 'memory' | 'cache-storage';
}> {
  // Fetched (and verified, and cached) either way: a corrupt file is refused here.
  const loan = await pkg.fetchFiles([file]);
  const blob = file.bytes >= inMemoryBelowBytes ? await pkg.cachedBlob(file) : null;
  if (blob && blob.size === file.bytes) {
    loan.release();
    const lexicon = await RangeLexicon.open((start, end) => blob.slice(start, end).arrayBuffer());
    return { lexicon, lexiconLoan: null, lexiconSource: 'cache-storage' };
  }
  // Caching off or refused (quota): the rows stay in memory, as for small files.
  return { lexicon: new Lexicon(loan.read(file)), lexiconLoan: loan, lexiconSource: 'memory' };
}
