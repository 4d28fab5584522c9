// Key-bounded chunks in the runner, for long states: with a small score budget the
// backbone runs follow the plan (every run's tokens × keys within the budget, chunks shrinking
// as the state grows) and decide as the default chunking does, within float tolerance: the
// backbone is chunk-invariant up to rounding (the state carries everything across chunks).
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { buildTinyPackage, type TinyPackage } from '../support/tiny-package.js';

const BUDGET = 48 * 512;
/** fp32 chunk-invariance on the tiny model: probabilities agree far closer than this. */
const TOLERANCE = 1e-4;

let tiny: TinyPackage;
let fixed: NodeEngine;
let bounded: NodeEngine;
/** input_ids lengths and past lengths of every backbone run, while recording. */
let runs: Array<{ tokens: number; past: number }> | null = null;

beforeAll(async () => {
  // The factory's runtime value is onnxruntime-common's session class: wrap its prototype.
  const proto = (ort.InferenceSession as any).prototype as {
    run: (feeds: Record<string, ort.Tensor>, ...rest: unknown[]) => Promise<unknown>;
  };
  const run = proto.run;
  proto.run = function (this: unknown, feeds, ...rest) {
    const ids = feeds.input_ids;
    const key = Object.entries(feeds).find(([name]) => name.startsWith('past_key.'))?.[1];
    if (runs && ids) runs.push({ tokens: ids.dims[1]!, past: key ? key.dims[2]! : 0 });
    return run.call(this, feeds, ...rest);
  };
  tiny = await buildTinyPackage('long-context-', 4096);
  fixed = await loadNodePackage(tiny.dir);
  bounded = await loadNodePackage(tiny.dir, { scoreBudget: BUDGET });
}, 60_000);
afterAll(async () => {
  await fixed?.dispose();
  await bounded?.dispose();
  tiny?.remove();
});

describe('a score budget', () => {
  it('bounds every run and decides as the fixed chunks do', async () => {
    const state = Array.from({ length: 300 }, (_, i) => `word${i % 37} and more`).join(' ');
    const request = {
      model: fixed.models[0],
      state,
      questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
    };
    runs = [];
    const a = await bounded.decide(request);
    const seen = runs;
    runs = null;
    const b = await fixed.decide(request);
    const stateEnd = a.encoded.stateEnd;
    expect(stateEnd).toBeGreaterThan(1000);
    // Every run within the budget (the floor of 16 tokens aside), covering the input once.
    for (const r of seen) {
      if (r.tokens > 16) expect(r.tokens * (r.past + r.tokens)).toBeLessThanOrEqual(BUDGET);
    }
    expect(seen.reduce((n, r) => n + r.tokens, 0)).toBe(a.encoded.inputIds.length);
    // Chunks shrink as the state grows: the last prefix run is smaller than the first.
    expect(seen.at(-2)!.tokens).toBeLessThan(seen[0]!.tokens);
    for (const [name, answer] of Object.entries(b.response.answers)) {
      const got = a.response.answers[name] as unknown as Record<string, number>;
      for (const [k, v] of Object.entries(answer as unknown as Record<string, unknown>)) {
        if (typeof v === 'number') expect(Math.abs((got[k] as number) - v)).toBeLessThan(TOLERANCE);
      }
    }
    a.logits.forEach((row, q) =>
      row.forEach((x, i) => expect(Math.abs(x - b.logits[q]![i]!)).toBeLessThan(1e-3)),
    );
  });
});
