/**
 * The native CPU ceiling: the same package, graphs, ClefRunner and thread count on
 * onnxruntime-node (src/node/engine.ts). Each graph's run time is taken by wrapping
 * InferenceSession.run, so "backbone" here is the backbone graph plus head_memory over the prefix
 * (what the browser's timings.backboneMs covers) and "head" is head_decide alone.
 */
import * as ort from 'onnxruntime-node';
import { loadNodePackage } from '../../src/node/engine.js';
import {
  runInterleaved,
  type DecisionSample,
  type ScenarioBodies,
  type ScenarioRun,
} from './schedule.js';
import { WARMUP_MAX_MS, warmUp } from './warmup.js';

interface GraphTimes {
  backbone: number;
  headMemory: number;
  headDecide: number;
}

let current: GraphTimes | null = null;
let patched = false;

/** Times every session.run by graph (told apart by their inputs). */
function patchRun(): void {
  if (patched) return;
  patched = true;
  // The factory's runtime value is onnxruntime-common's session class: wrap its prototype.
  const proto = (
    ort.InferenceSession as unknown as {
      prototype: { run: (this: ort.InferenceSession, ...args: unknown[]) => Promise<unknown> };
    }
  ).prototype;
  const original = proto.run;
  proto.run = async function (this: ort.InferenceSession, ...args: unknown[]) {
    const t0 = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      if (current) {
        const names = this.inputNames;
        const key: keyof GraphTimes = names.includes('input_ids')
          ? 'backbone'
          : names.includes('past_memory')
            ? 'headMemory'
            : 'headDecide';
        current[key] += performance.now() - t0;
      }
    }
  };
}

export interface NodeRun {
  threads: number;
  loadMs: number;
  /** Latencies of the warm-up decisions after load (ms), first to last. */
  warmupMs: number[];
  scenarios: ScenarioRun[];
  error?: string;
}

export async function benchNode(
  packageDir: string,
  threads: number,
  warmup: object[],
  scenarios: ScenarioBodies[],
  log: (s: string) => void,
  budgetMs = Infinity,
): Promise<NodeRun> {
  patchRun();
  const t0 = performance.now();
  const engine = await loadNodePackage(packageDir, { threads });
  const run: NodeRun = { threads, loadMs: performance.now() - t0, warmupMs: [], scenarios: [] };
  log(`    loaded in ${run.loadMs.toFixed(0)} ms (${threads} threads)`);
  const decide = async (body: object, hit: boolean): Promise<DecisionSample> => {
    const times: GraphTimes = { backbone: 0, headMemory: 0, headDecide: 0 };
    current = times;
    const start = performance.now();
    try {
      const d = await engine.decide(body);
      const wallMs = performance.now() - start;
      const input = d.encoded.inputIds.length;
      return {
        wallMs,
        encodeMs: 0,
        backboneMs: times.backbone + times.headMemory,
        headMs: times.headDecide,
        totalMs: wallMs,
        prefixHit: hit,
        backboneTokens: hit ? input - d.encoded.stateEnd : input,
        inputTokens: input,
        readbackBytes: 0,
      };
    } finally {
      current = null;
    }
  };
  try {
    run.warmupMs = await warmUp((b) => decide(b, false), warmup, WARMUP_MAX_MS);
    log(`    warm-up: ${run.warmupMs.map((t) => t.toFixed(0)).join(', ')} ms`);
    run.scenarios = await runInterleaved(scenarios, { decide, log }, budgetMs);
  } catch (e) {
    run.error = (e as Error).message.split('\n')[0];
  } finally {
    await engine.dispose();
  }
  return run;
}
