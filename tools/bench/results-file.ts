/** Where the training benchmarks keep what they measured (dev only). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `body` as bench/results/<today>-<label>.json and says where. */
export function writeResults(label: string, body: unknown): string {
  mkdirSync('bench/results', { recursive: true });
  const file = join('bench/results', `${new Date().toISOString().slice(0, 10)}-${label}.json`);
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  return file;
}
