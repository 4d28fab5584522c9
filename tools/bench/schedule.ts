/**
 * The order of a backend's timed decisions: round-robin over the scenarios (round r runs every
 * scenario's r-th body), so slow drift (V8 tiering up onnxruntime-web's wasm, other work on a
 * shared machine) lands on every scenario alike and the ratios compare like with like. A hit
 * scenario's first body only puts its state in the prefix cache (not timed).
 */
import type { ProcMemory } from './proc.js';

export interface ScenarioBodies {
  id: string;
  hit: boolean;
  bodies: object[];
}

export interface DecisionSample {
  /** Page-side latency of clef.decide(), ms (includes the worker round trip). */
  wallMs: number;
  encodeMs: number;
  backboneMs: number;
  headMs: number;
  totalMs: number;
  prefixHit: boolean;
  backboneTokens: number;
  inputTokens: number;
  /** Bytes the engine's graphs handed to the CPU for this decision (GPU readback on WebGPU). */
  readbackBytes: number;
}

export interface ScenarioRun {
  id: string;
  samples: DecisionSample[];
  /** Process memory after the scenario's last decision; peaks: the largest over its decisions. */
  memory: ProcMemory;
  error?: string;
}

export interface ScheduleHooks {
  /** Runs one decision; `hit` is true when the state should already be cached. */
  decide(body: object, hit: boolean): Promise<DecisionSample>;
  /** Before each decision (e.g. resetting memory peaks). */
  before?(): void;
  /** Memory after a decision, folded into its scenario's figures. */
  memory?(): ProcMemory;
  /** An error after which nothing more can run on this backend (e.g. a page left busy). */
  fatal?(e: unknown): boolean;
  log(line: string): void;
}

const maxOf = (a: ProcMemory[keyof ProcMemory], b: ProcMemory[keyof ProcMemory]) =>
  a && b ? { rss: b.rss, peak: Math.max(a.peak, b.peak) } : (b ?? a);

/**
 * Runs every scenario's bodies interleaved. Once `budgetMs` is spent, no new round starts after
 * every scenario has a timed run (or an error); the cut is said in each scenario's `error`.
 */
export async function runInterleaved(
  scenarios: ScenarioBodies[],
  hooks: ScheduleHooks,
  budgetMs = Infinity,
): Promise<ScenarioRun[]> {
  const runs: ScenarioRun[] = scenarios.map((s) => ({
    id: s.id,
    samples: [],
    memory: { renderer: null, gpu: null },
  }));
  const start = performance.now();
  const rounds = Math.max(0, ...scenarios.map((s) => s.bodies.length));
  let stopped = false;
  for (let r = 0; r < rounds && !stopped; r++) {
    const everyoneTimed = runs.every((run) => run.samples.length > 0 || run.error);
    if (r > 0 && everyoneTimed && performance.now() - start > budgetMs) break;
    for (let i = 0; i < scenarios.length && !stopped; i++) {
      const s = scenarios[i]!;
      const out = runs[i]!;
      if (r >= s.bodies.length || out.error) continue;
      hooks.before?.();
      try {
        const sample = await hooks.decide(s.bodies[r]!, s.hit && r > 0);
        if (!(s.hit && r === 0)) out.samples.push(sample);
      } catch (e) {
        out.error = (e as Error).message.split('\n')[0];
        hooks.log(`    ${s.id}: ${out.error}`);
        if (hooks.fatal?.(e)) stopped = true;
      }
      if (hooks.memory) {
        const m = hooks.memory();
        out.memory = {
          renderer: maxOf(out.memory.renderer, m.renderer),
          gpu: maxOf(out.memory.gpu, m.gpu),
        };
      }
    }
  }
  const elapsed = ((performance.now() - start) / 1000).toFixed(0);
  for (let i = 0; i < scenarios.length; i++) {
    const s = scenarios[i]!;
    const out = runs[i]!;
    const planned = s.bodies.length - (s.hit ? 1 : 0);
    if (!out.error && out.samples.length < planned) {
      out.error = `time budget: ${out.samples.length} of ${planned} runs`;
    }
    const walls = out.samples.map((x) => x.wallMs).sort((a, b) => a - b);
    const m = walls.length ? walls[walls.length >> 1]! : NaN;
    hooks.log(`    ${s.id}: ${walls.length} runs, median ${m.toFixed(1)} ms`);
  }
  hooks.log(`    (${elapsed} s, scenarios interleaved)`);
  return runs;
}
