/**
 * What `--record` costs: appending decision records through src/node/record/log.ts (write +
 * fdatasync, group commit) one at a time (each waits for its sync, as one client in turn would)
 * and 32 at once (as concurrent requests would), against a clef-nano decision's time.
 *
 *   npx tsx tools/bench/record-log.ts [N=200]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRecordLog } from '../../src/node/record/log.js';
import { parseRecord } from '../../src/core/record.js';

const n = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), 'clef-record-bench-'));
// A realistic record: one clef-nano decision (3-option choice and a noul).
const sample = parseRecord(
  JSON.stringify({
    format: 'clef-web.decision-record',
    version: 1,
    time: new Date().toISOString(),
    surface: 'serve',
    package: { model: 'clef-nano', manifest_sha256: 'a'.repeat(64), calibration_sha256: null },
    engine: { name: 'clef-web', version: '0.1.0', device: 'cpu', runtime: 'onnxruntime-node' },
    thresholds: null,
    request: {
      model: 'clef-nano',
      state: 'two charges on my card I never made',
      questions: { route: { type: 'choice', criteria: { a: null, b: null, c: null } } },
    },
    request_sha256: 'b'.repeat(64),
    response: {
      model: 'clef-nano',
      answers: {
        route: {
          type: 'choice',
          choice: 'a',
          confidence: 0.9,
          probabilities: { a: 0.9, b: 0.05, c: 0.05 },
        },
      },
      usage: { input_tokens: 221, output_tokens: 0 },
    },
    timings: { total_ms: 140 },
  }),
);

async function run(label: string, batch: number): Promise<number> {
  const file = join(dir, `${label}.jsonl`);
  const log = await openRecordLog(file);
  const t0 = performance.now();
  for (let i = 0; i < n; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, n - i) }, () => log.append(sample)));
  }
  const ms = (performance.now() - t0) / n;
  await log.close();
  const lines = readFileSync(file, 'utf8').split('\n').length - 1;
  console.log(`${label}: ${n} records, ${ms.toFixed(3)} ms per record (${lines} lines written)`);
  return ms;
}

try {
  const one = await run('one-at-a-time', 1);
  const group = await run('32-concurrent', 32);
  console.log(`group commit: ${(one / group).toFixed(1)}x less time per record than one sync each`);
  console.log('a clef-nano decision on this machine takes ~70-140 ms (decide --record above)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
