/**
 * The bench's warm-up, shared by the browser and onnxruntime-node backends and the quantile the report uses (its own
 * file so the backends and the report do not import each other).
 */
/** The most time spent warming up one backend before its scenarios. */
export const WARMUP_MAX_MS = 120_000;

/** The q-quantile of `values` (the median averages the middle two). */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  if (q === 0.5) {
    const m = s.length >> 1;
    return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  }
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
}

/**
 * Warm-up until latencies settle: V8 first runs onnxruntime-web's wasm on its baseline compiler
 * and tiers hot functions up in the background, so on a busy machine the first tens of decisions
 * after a load can be several times slower than the rest. Runs `bodies` in turn (each a fresh
 * state) until the last three are within 15% of their median (at least four runs), the bodies
 * run out, or `maxMs` is spent. Returns every warm-up latency (the tier-up curve, reported).
 */
export async function warmUp(
  decide: (body: object) => Promise<{ wallMs: number }>,
  bodies: object[],
  maxMs: number,
): Promise<number[]> {
  const times: number[] = [];
  const start = performance.now();
  for (const body of bodies) {
    times.push((await decide(body)).wallMs);
    const last = times.slice(-3);
    const m = quantile(last, 0.5);
    const settled = times.length >= 4 && last.every((t) => Math.abs(t - m) <= 0.15 * m);
    if (settled || performance.now() - start > maxMs) break;
  }
  return times;
}
