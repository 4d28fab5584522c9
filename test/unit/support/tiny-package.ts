/**
 * A tiny Clef package for the server and CLI tests, built into a temporary directory from the
 * committed fixture generator (public/models is generated and may be absent in a fresh clone).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertRelease } from '../../../src/node/build-runtime.js';
import { writeTinyFixture } from '../../../tools/fixture/cli.js';

export const TINY_MODEL = 'clef-tiny';
export const TINY_ALIAS = 'clef-tiny-alias';
/** Small, so an over-long request is cheap to build. */
export const TINY_CONTEXT = 1024;

export interface TinyPackage {
  dir: string;
  remove(): void;
}

export async function buildTinyPackage(
  prefix: string,
  contextTokens = TINY_CONTEXT,
): Promise<TinyPackage> {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const release = join(work, 'release');
  const dir = join(work, 'package');
  writeTinyFixture(release, { dtype: 'fp32' });
  await convertRelease(release, dir, {
    dtype: 'fp32',
    name: TINY_MODEL,
    aliases: [TINY_ALIAS],
    contextTokens,
    fidelityRequests: 0,
    // Served and run by onnxruntime-node, which never reads the WASM-prepared graphs.
    wasmGraphs: false,
  });
  return { dir, remove: () => rmSync(work, { recursive: true, force: true }) };
}
