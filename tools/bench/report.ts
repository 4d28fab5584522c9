/**
 * Figures from raw samples: per-scenario medians and p90s, the issue's targets (ratios from one
 * run, side by side) with pass/fail, and the printed tables.
 */
import type { BrowserRun } from './browser.js';
import type { DecisionSample, ScenarioRun } from './schedule.js';
import type { NodeRun } from './node-ceiling.js';
import { quantile } from './warmup.js';

export type Backend = 'wasm' | 'webgpu' | 'node';

export interface ScenarioSummary {
  id: string;
  runs: number;
  inputTokens: number;
  backboneTokens: number;
  medianMs: number;
  p90Ms: number;
  backboneMs: number;
  headMs: number;
  /** Median of headMs / totalMs. */
  headShare: number;
  /** Median backbone tokens per second of backbone time (the backbone + head_memory graphs). */
  prefillTokensPerS: number;
  /** Largest per-decision readback (bytes); null on the node backend. */
  readbackBytesMax: number | null;
  /** Renderer + GPU process peak during the scenario (bytes), when measured. */
  peakBytes: number | null;
  wallMs: number[];
  error?: string;
}

export interface TargetResult {
  figure: string;
  target: string;
  backend: Backend;
  value: number | null;
  shown: string;
  verdict: 'pass' | 'FAIL' | 'n/a';
  note?: string;
}

const med = (xs: number[]) => quantile(xs, 0.5);

export function summarize(run: ScenarioRun, backend: Backend): ScenarioSummary {
  const s = run.samples;
  const pick = (f: (x: DecisionSample) => number) => med(s.map(f));
  const peak =
    run.memory.renderer || run.memory.gpu
      ? (run.memory.renderer?.peak ?? 0) + (run.memory.gpu?.peak ?? 0)
      : null;
  return {
    id: run.id,
    runs: s.length,
    inputTokens: pick((x) => x.inputTokens),
    backboneTokens: pick((x) => x.backboneTokens),
    medianMs: pick((x) => x.wallMs),
    p90Ms: quantile(
      s.map((x) => x.wallMs),
      0.9,
    ),
    backboneMs: pick((x) => x.backboneMs),
    headMs: pick((x) => x.headMs),
    headShare: pick((x) => x.headMs / x.totalMs),
    prefillTokensPerS: pick((x) => (x.backboneTokens / x.backboneMs) * 1000),
    readbackBytesMax: backend !== 'webgpu' ? null : Math.max(0, ...s.map((x) => x.readbackBytes)),
    peakBytes: peak,
    wallMs: s.map((x) => Math.round(x.wallMs * 100) / 100),
    ...(run.error ? { error: run.error } : {}),
  };
}

export interface ModelFigures {
  backends: Partial<Record<Backend, ScenarioSummary[]>>;
  browser: Partial<Record<'wasm' | 'webgpu', BrowserRun>>;
  node: NodeRun | null;
  weightBytes: number;
  /** Why the memory target does not apply to this model, or null. */
  longNote: string | null;
}

function find(list: ScenarioSummary[] | undefined, id: string): ScenarioSummary | undefined {
  const s = list?.find((x) => x.id === id);
  return s && s.runs > 0 ? s : undefined;
}

function verdict(value: number | null, ok: (v: number) => boolean): 'pass' | 'FAIL' | 'n/a' {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  return ok(value) ? 'pass' : 'FAIL';
}

export function targets(f: ModelFigures): TargetResult[] {
  const out: TargetResult[] = [];
  const miss1 = 's2048-q1-o2-miss';
  const miss8 = 's2048-q8-o2-miss';
  const hit1 = 's2048-q1-o2-hit';
  const nodeMiss = find(f.backends.node, miss1);
  for (const backend of ['wasm', 'webgpu'] as const) {
    const list = f.backends[backend];
    if (!list) continue;
    const m1 = find(list, miss1);
    const m8 = find(list, miss8);
    const h1 = find(list, hit1);
    const ratio = (a?: ScenarioSummary, b?: ScenarioSummary) =>
      a && b ? a.medianMs / b.medianMs : null;
    const r81 = ratio(m8, m1);
    out.push({
      figure: '8 questions vs 1 question on the same state (2,048 tokens, cold)',
      target: '≤ 1.3×',
      backend,
      value: r81,
      shown: r81 === null ? '—' : `${r81.toFixed(2)}×`,
      verdict: verdict(r81, (v) => v <= 1.3),
    });
    const rh = ratio(h1, m1);
    out.push({
      figure: 'prefix-cache hit vs miss, 2,048-token state',
      target: '≤ 0.15×',
      backend,
      value: rh,
      shown: rh === null ? '—' : `${rh.toFixed(3)}×`,
      verdict: verdict(rh, (v) => v <= 0.15),
    });
    const rp = m1 && nodeMiss ? m1.prefillTokensPerS / nodeMiss.prefillTokensPerS : null;
    out.push({
      figure: `${backend === 'wasm' ? 'WASM' : 'WebGPU'} prefill tokens/s vs onnxruntime-node, same threads`,
      target: backend === 'wasm' ? '≥ 0.5×' : '(info)',
      backend,
      value: rp,
      shown:
        rp === null || !m1 || !nodeMiss
          ? '—'
          : `${rp.toFixed(2)}× (${m1.prefillTokensPerS.toFixed(0)} vs ${nodeMiss.prefillTokensPerS.toFixed(0)} tok/s)`,
      verdict: backend === 'wasm' ? verdict(rp, (v) => v >= 0.5) : 'n/a',
    });
    const hs = m1 ? m1.headShare : null;
    out.push({
      figure: 'head share of decision time at 2,048 tokens (cold)',
      target: '≤ 10%',
      backend,
      value: hs,
      shown:
        hs === null
          ? '—'
          : `${(hs * 100).toFixed(1)}%${h1 ? ` (hit: ${(h1.headShare * 100).toFixed(0)}%)` : ''}`,
      verdict: verdict(hs, (v) => v <= 0.1),
    });
    if (backend === 'webgpu') {
      const ran = list.filter((s) => s.runs > 0).map((s) => s.readbackBytesMax ?? 0);
      // No scenario ran (e.g. the warm-up outlasted the time limit): nothing to show.
      const rb = ran.length ? Math.max(...ran) : null;
      const worst = list.find((s) => s.readbackBytesMax === rb)?.id ?? '';
      out.push({
        figure: 'bytes read back from the GPU per decision (worst scenario)',
        target: '≤ 64 KB',
        backend,
        value: rb,
        shown: rb === null ? '—' : `${(rb / 1024).toFixed(1)} KB (${worst})`,
        verdict: verdict(rb, (v) => v <= 64 * 1024),
      });
    }
    const run = f.browser[backend];
    // The longest state that actually ran (a time budget may have cut the longest planned).
    const long = list
      .filter((s) => s.runs > 0 && s.id.endsWith('-miss'))
      .sort((a, b) => b.inputTokens - a.inputTokens)[0];
    const idle = run ? (run.memory.idle.renderer?.rss ?? 0) + (run.memory.idle.gpu?.rss ?? 0) : 0;
    const mem =
      long?.peakBytes != null && idle > 0 ? (long.peakBytes - idle) / f.weightBytes : null;
    out.push({
      figure: 'peak memory at the longest state vs weights alone',
      target: '≤ 1.25×',
      backend,
      value: mem,
      shown:
        mem === null || !long
          ? '—'
          : `${mem.toFixed(2)}× at ${long.id} (${mib(long.peakBytes! - idle)} above the idle page, weights ${mib(f.weightBytes)})`,
      verdict: f.longNote ? 'n/a' : verdict(mem, (v) => v <= 1.25),
      ...(f.longNote ? { note: f.longNote } : {}),
    });
  }
  return out;
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MiB`;
}

function pad(cells: string[], widths: number[]): string {
  return `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
}

/** A markdown table (also readable on a terminal). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [
    pad(header, widths),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map((r) => pad(r, widths)),
  ].join('\n');
}

const ms = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : '—');

export function scenarioRows(model: string, backend: Backend, list: ScenarioSummary[]): string[][] {
  return list.map((s) => [
    model,
    backend,
    s.id,
    Number.isFinite(s.inputTokens) ? String(s.inputTokens) : '—',
    String(s.runs),
    ms(s.medianMs),
    ms(s.p90Ms),
    ms(s.backboneMs),
    ms(s.headMs),
    Number.isFinite(s.headShare) ? `${(s.headShare * 100).toFixed(0)}%` : '—',
    Number.isFinite(s.prefillTokensPerS) ? s.prefillTokensPerS.toFixed(0) : '—',
    s.readbackBytesMax === null ? '—' : (s.readbackBytesMax / 1024).toFixed(1),
    s.peakBytes === null ? '—' : mib(s.peakBytes),
    s.error ? `error: ${s.error.slice(0, 60)}` : '',
  ]);
}

export const SCENARIO_HEADER = [
  'model',
  'backend',
  'scenario',
  'tokens',
  'n',
  'median ms',
  'p90 ms',
  'backbone ms',
  'head ms',
  'head %',
  'tok/s',
  'readback KB',
  'peak (rend.+gpu)',
  'note',
];
