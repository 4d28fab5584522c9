/**
 * `train` on one thread and on more, on a cross-fitted file whose layers `auto` tries (the planted
 * status task of tools/train/planted.ts: "the north is down, but the omega is fine"; a bag of words
 * cannot tell which of the two is at fault): the whole run's wall time, the fit phase's, the
 * process's CPU time (every thread) and the load beside each, with the first row's time over
 * each row's; and whether the packages are the same bytes on every thread count (they must be).
 *
 *   npx tsx tools/bench/train-threads.ts [--examples 1000] [--threads 1,2] [--seed 1] [--label NAME]
 *
 * Writes JSON to bench/results. Run it on an otherwise idle machine: the wall times are what the
 * process got.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { trainDecisionModel } from '../../src/node/train/train.js';
import { statusJsonl } from '../train/planted.js';
import { writeResults } from './results-file.js';
import { assertSourceUnchanged, sourceDigest } from './source-guard.js';

const { values } = parseArgs({
  options: {
    examples: { type: 'string', default: '1000' },
    threads: { type: 'string', default: '1,2' },
    seed: { type: 'string', default: '1' },
    label: { type: 'string', default: 'train-threads' },
  },
});
const count = Number(values.examples);
const threadCounts = (values.threads as string).split(',').map(Number);
const examples = statusJsonl(count, Number(values.seed));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const seconds = (ms: number) => (ms / 1000).toFixed(1);

interface Row {
  threads: number;
  wallMs: number;
  fitMs: number;
  cpuMs: number;
  loadBefore: string;
  loadAfter: string;
  /** The package's files (its manifest: path and SHA-256), the card aside. */
  files: string;
  layer: string;
  outOfFold: number;
}

const source = sourceDigest();
const rows: Row[] = [];
const root = mkdtempSync(join(tmpdir(), 'clef-train-threads-'));
try {
  for (const threads of threadCounts) {
    assertSourceUnchanged(source, `before the ${threads}-thread row`);
    const out = join(root, `t${threads}-${rows.length}`);
    const loadBefore = load();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let phase: string | null = null;
    let fitStarted = 0;
    let fitMs = 0;
    const result = await trainDecisionModel({
      examples,
      out,
      threads,
      onProgress: (p) => {
        if (p.phase === phase) return;
        if (p.phase === 'fit') fitStarted = performance.now();
        if (phase === 'fit') fitMs = performance.now() - fitStarted;
        phase = p.phase;
      },
    });
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
      files: Array<{ path: string; sha256: string }>;
    };
    const s = result.selection;
    const layer = s.order
      ? 'the order layer'
      : [s.scope ? 'the scope layer' : '', s.pointer ? 'the pointer' : '']
          .filter(Boolean)
          .join(' and ') || 'plain';
    const row: Row = {
      threads,
      wallMs,
      fitMs,
      cpuMs: (used.user + used.system) / 1000,
      loadBefore,
      loadAfter: load(),
      files: manifest.files
        .filter((f) => f.path !== 'README.md')
        .map((f) => `${f.path} ${f.sha256}`)
        .join('\n'),
      layer,
      outOfFold: result.heldOut.questions[0]?.accuracy ?? NaN,
    };
    rows.push(row);
    const first = rows[0] as Row;
    console.log(
      `threads ${threads}: ${seconds(wallMs)} s wall (${(first.wallMs / wallMs).toFixed(2)}× the first row's speed), ` +
        `fit phase ${seconds(fitMs)} s (${(first.fitMs / fitMs).toFixed(2)}×), ${seconds(row.cpuMs)} s CPU; ` +
        `kept: ${layer}, ${(100 * row.outOfFold).toFixed(1)}% out of fold; load ${loadBefore} → ${row.loadAfter}`,
    );
    rmSync(out, { recursive: true, force: true });
    rmSync(result.releaseDir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
assertSourceUnchanged(source, 'during the run');
const same = rows.every((r) => r.files === rows[0]?.files);
console.log(`the same package bytes on every thread count: ${same ? 'yes' : 'NO'}`);
writeResults(values.label as string, {
  command: `npx tsx tools/bench/train-threads.ts --examples ${count} --threads ${values.threads} --seed ${values.seed}`,
  examples: count,
  samePackageBytes: same,
  rows: rows.map(({ files, ...r }) => ({ ...r, files: files.split('\n').length })),
});
if (!same) process.exitCode = 1;
