/**
 * onnxruntime's profile (Chrome trace events, the same format from onnxruntime-node's file and
 * onnxruntime-web's console) reduced to op type → kernel time over the last prefill. Used by
 * tools/bench/op-profile.ts.
 */

export interface ProfileEvent {
  cat: string;
  name: string;
  ts: number;
  dur: number;
  args?: { op_name?: string; provider?: string };
}

export interface Prefill {
  /** Kernel µs per op type, summed over the last prefill's runs. */
  opUs: Record<string, number>;
  /** Kernel calls per op type in the last prefill. */
  opCalls: Record<string, number>;
  /** The profiler's model_run µs over the last prefill. */
  modelRunUs: number;
  /** Wall ms of each run of each prefill (warm-ups first), timed around session.run. */
  runMs: number[][];
}

export function collectProfile(
  events: ProfileEvent[],
  runMs: number[][],
  runsPerPrefill: number,
): Prefill {
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run');
  const last = runs.slice(-runsPerPrefill);
  if (last.length < runsPerPrefill) {
    throw new Error(`${runs.length} model_run events, expected at least ${runsPerPrefill}`);
  }
  const inLast = (e: ProfileEvent) => last.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  const opUs: Record<string, number> = {};
  const opCalls: Record<string, number> = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !inLast(e)) continue;
    const op = e.args?.op_name ?? '?';
    opUs[op] = (opUs[op] ?? 0) + e.dur;
    opCalls[op] = (opCalls[op] ?? 0) + 1;
  }
  return { opUs, opCalls, modelRunUs: last.reduce((a, r) => a + r.dur, 0), runMs };
}

export interface OpRow {
  op: string;
  calls: number;
  wasmMs: number | null;
  nodeMs: number | null;
  wasmShare: number | null;
  nodeShare: number | null;
  /** wasm ms / node ms: how many times slower WASM runs this op type. */
  ratio: number | null;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

export function opTable(
  wasm: Prefill | null,
  node: Prefill | null,
): { rows: OpRow[]; markdown: string } {
  const ops = new Set([...Object.keys(wasm?.opUs ?? {}), ...Object.keys(node?.opUs ?? {})]);
  const wTotal = wasm ? sum(wasm.opUs) : 0;
  const nTotal = node ? sum(node.opUs) : 0;
  const rows: OpRow[] = [...ops].map((op) => {
    const w = wasm ? (wasm.opUs[op] ?? 0) / 1000 : null;
    const n = node ? (node.opUs[op] ?? 0) / 1000 : null;
    return {
      op,
      calls: wasm?.opCalls[op] ?? node?.opCalls[op] ?? 0,
      wasmMs: w,
      nodeMs: n,
      wasmShare: w === null ? null : w / (wTotal / 1000),
      nodeShare: n === null ? null : n / (nTotal / 1000),
      ratio: w !== null && n ? w / n : null,
    };
  });
  rows.sort((a, b) => (b.wasmMs ?? b.nodeMs ?? 0) - (a.wasmMs ?? a.nodeMs ?? 0));
  const f = (x: number | null, d = 1) => (x === null ? '—' : x.toFixed(d));
  const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
  const lines = [
    '| op type | calls | WASM ms | share | node ms | share | WASM / node |',
    '| ------- | ----- | ------- | ----- | ------- | ----- | ----------- |',
    ...rows.map(
      (r) =>
        `| ${r.op} | ${r.calls} | ${f(r.wasmMs)} | ${pct(r.wasmShare)} | ${f(r.nodeMs)} | ${pct(r.nodeShare)} | ${f(r.ratio, 2)}× |`,
    ),
  ];
  const wall = (p: Prefill | null) =>
    p ? (p.runMs.at(-1) ?? []).reduce((a, b) => a + b, 0) : null;
  const wRun = wasm ? wasm.modelRunUs / 1000 : null;
  const nRun = node ? node.modelRunUs / 1000 : null;
  lines.push(
    `| **kernels** | | ${f(wasm ? wTotal / 1000 : null)} | | ${f(node ? nTotal / 1000 : null)} | | ${f(wasm && node ? wTotal / nTotal : null, 2)}× |`,
    `| model_run (profiler) | | ${f(wRun)} | | ${f(nRun)} | | ${f(wRun !== null && nRun ? wRun / nRun : null, 2)}× |`,
    `| session.run wall (last prefill) | | ${f(wall(wasm))} | | ${f(wall(node))} | | ${f(wasm && node ? wall(wasm)! / wall(node)! : null, 2)}× |`,
  );
  return { rows, markdown: lines.join('\n') };
}
