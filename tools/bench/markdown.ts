/**
 * Renders committed bench results as the markdown tables of docs/benchmarks.md, so the doc shows
 * what the JSON says rather than numbers copied by hand:
 *
 *   npx tsx tools/bench/markdown.ts bench/results/<file>.json [more.json ...] [--targets-only]
 */
import { readFileSync } from 'node:fs';
import {
  SCENARIO_HEADER,
  scenarioRows,
  table,
  type Backend,
  type ScenarioSummary,
  type TargetResult,
} from './report.js';

interface ResultsFile {
  date: string;
  command: string;
  machine: { loadAverage?: { start: number[] | null; end: number[] | null } };
  browser: { version: string };
  device: { webgpuAdapter: string | null };
  notes: string[];
  results: Array<{
    model: string;
    browser: Partial<
      Record<
        'wasm' | 'webgpu',
        { info?: { loadMs?: Record<string, number> }; warmupMs?: number[]; error?: string }
      >
    >;
    node: { loadMs: number; warmupMs?: number[] } | null;
    scenarios: Partial<Record<Backend, ScenarioSummary[]>>;
    targets: TargetResult[];
  }>;
}

const args = process.argv.slice(2);
const targetsOnly = args.includes('--targets-only');
for (const file of args.filter((a) => !a.startsWith('--'))) {
  const r = JSON.parse(readFileSync(file, 'utf8')) as ResultsFile;
  const load = r.machine.loadAverage;
  console.log(`### \`${file}\`\n`);
  console.log(
    `\`${r.command}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC; Chromium ` +
      `${r.browser.version || '—'}; WebGPU adapter: ${r.device.webgpuAdapter ?? 'none'}; ` +
      `load average ${load?.start?.[0] ?? '?'} at start, ${load?.end?.[0] ?? '?'} at end.\n`,
  );
  if (!targetsOnly) {
    const loadRows: string[][] = [];
    for (const m of r.results) {
      for (const [device, b] of Object.entries(m.browser)) {
        const l = b?.info?.loadMs;
        const f = (k: string) => (l && Number.isFinite(l[k]) ? (l[k] as number).toFixed(0) : '—');
        loadRows.push([m.model, device, f('download'), f('verify'), f('compile'), f('total')]);
      }
      if (m.node) loadRows.push([m.model, 'node', '—', '—', '—', m.node.loadMs.toFixed(0)]);
    }
    console.log('Load (ms):\n');
    console.log(table(['model', 'backend', 'download', 'verify', 'compile', 'total'], loadRows));
    const warm: string[][] = [];
    for (const m of r.results) {
      const runs = [...Object.entries(m.browser), ['node', m.node] as const];
      for (const [backend, b] of runs) {
        const w = b?.warmupMs;
        if (!w?.length) continue;
        warm.push([m.model, backend, String(w.length), w.map((t) => t.toFixed(0)).join(', ')]);
      }
    }
    if (warm.length) {
      console.log('\nWarm-up after load (256-token states, 2 questions; ms per decision):\n');
      console.log(table(['model', 'backend', 'decisions', 'latencies'], warm));
    }
    console.log('\nDecisions:\n');
    const rows = r.results.flatMap((m) =>
      (Object.entries(m.scenarios) as Array<[Backend, ScenarioSummary[]]>).flatMap(([b, list]) =>
        scenarioRows(m.model, b, list),
      ),
    );
    console.log(table(SCENARIO_HEADER, rows));
    console.log('');
  }
  console.log('Targets:\n');
  console.log(
    table(
      ['model', 'backend', 'figure', 'target', 'measured', 'verdict'],
      r.results.flatMap((m) =>
        m.targets.map((t) => [m.model, t.backend, t.figure, t.target, t.shown, t.verdict]),
      ),
    ),
  );
  if (r.notes.length) console.log(`\n${r.notes.map((n) => `- ${n}`).join('\n')}`);
  console.log('');
}
