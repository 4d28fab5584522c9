/**
 * Seeds for tests that draw fresh random inputs each run. A run's seed is printed, as
 * one line that is also the command's environment for reproducing it, and the test puts it in
 * every assertion message, so a failure reproduces from its log alone:
 *
 *   [seed] prepare-wasm backbones: 48213 (reproduce: CLEF_TEST_SEED=48213)
 *
 * CLEF_TEST_SEED fixes the seed of every such test in the run; unset, each draws its own.
 */
export const SEED_ENV = 'CLEF_TEST_SEED';

/** The seed for `label`: CLEF_TEST_SEED when set (a non-negative integer), else a fresh one. */
export function testSeed(label: string, env: NodeJS.ProcessEnv = process.env): number {
  const fixed = env[SEED_ENV];
  let seed: number;
  if (fixed !== undefined && fixed !== '') {
    if (!/^\d+$/.test(fixed))
      throw new Error(`${SEED_ENV} must be a non-negative integer: ${fixed}`);
    seed = Number(fixed) >>> 0;
  } else {
    seed = Math.floor(Math.random() * 1_000_000);
  }
  console.log(seedLine(label, seed));
  return seed;
}

/** The log line for `seed`: the label, the seed, and how to rerun with it. */
export function seedLine(label: string, seed: number): string {
  return `[seed] ${label}: ${seed} (reproduce: ${SEED_ENV}=${seed})`;
}
