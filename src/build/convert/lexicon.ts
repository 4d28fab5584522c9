/**
 * Writes the lm_head rows file (format: src/clef/lexicon.ts) from a release's `lm_head.weight`,
 * streaming a block of rows at a time: the real table is 248,320 × 4,096 (2 GB in bf16), and
 * peak memory here is one block (`rowsPerBlock` rows as float32 plus their encoded records).
 */
import { closeSync, openSync, writeSync } from '../host/files.js';
import {
  encodeLexiconHeader,
  encodeLexiconRow,
  lexiconFileBytes,
  lexiconRowStride,
  type LexiconDtype,
} from '../../clef/lexicon.js';
import { TEXT_PREFIX, openRelease } from '../release.js';

export const LEXICON_FILE = 'lm_head_rows.bin';

export interface LexiconOptions {
  /** int8 rows with an fp32 scale each (default), or fp16 rows. */
  dtype?: LexiconDtype;
  /** Rows read and encoded per step (default 1024). */
  rowsPerBlock?: number;
}

export interface WrittenLexicon {
  path: string;
  bytes: number;
  vocab: number;
  hidden: number;
  dtype: LexiconDtype;
  /** The release tensor the rows came from. */
  tensor: string;
}

export function buildLexicon(
  releaseDir: string,
  outPath: string,
  options: LexiconOptions = {},
): WrittenLexicon {
  const dtype = options.dtype ?? 'int8';
  const block = options.rowsPerBlock ?? 1024;
  const release = openRelease(releaseDir);
  try {
    // Clef's lm_head is untied; a tied checkpoint would keep its rows in the embedding.
    const tied = `${TEXT_PREFIX}embed_tokens.weight`;
    const tensor = release.has('lm_head.weight')
      ? 'lm_head.weight'
      : release.text.tie_word_embeddings && release.has(tied)
        ? tied
        : null;
    if (tensor === null) throw new Error(`${releaseDir}: no lm_head.weight`);
    const [vocab, hidden] = release.info(tensor).shape as [number, number];
    const stride = lexiconRowStride(dtype, hidden);
    const fd = openSync(outPath, 'w');
    try {
      writeAll(fd, encodeLexiconHeader(dtype, vocab, hidden));
      for (let start = 0; start < vocab; start += block) {
        const count = Math.min(block, vocab - start);
        const rows = release.readRows(tensor, start, count);
        const records = new Uint8Array(count * stride);
        for (let r = 0; r < count; r++) {
          records.set(
            encodeLexiconRow(dtype, rows.subarray(r * hidden, (r + 1) * hidden)),
            r * stride,
          );
        }
        writeAll(fd, records);
      }
    } finally {
      closeSync(fd);
    }
    return {
      path: outPath,
      bytes: lexiconFileBytes(dtype, vocab, hidden),
      vocab,
      hidden,
      dtype,
      tensor,
    };
  } finally {
    release.close();
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) {
    done += writeSync(fd, bytes, done, bytes.length - done);
  }
}
