/**
 * What the browser suites (Playwright in Chromium, Vitest with puppeteer in Firefox) share about
 * the page's answers, free of either runner: a page-side helper's outcome unwrapped, and how far a
 * trained package's logits may stray from the float64 reference.
 */
import type { Outcome } from '../browser/pages/engine-page.js';

/** The outcome's value, or an Error naming what failed and the page's error. */
export function must<T>(out: Outcome<T>, what: string): T {
  if (!out.ok) throw new Error(`${what} failed: ${JSON.stringify(out.error)}`);
  return out.value;
}

/**
 * fp32 against the float64 reference, a trained package's logits. They are a cosine times ~100
 * over pooling scores of ~140 (train-construct.test.ts), so float32 rounds them more than the tiny
 * fixtures': on WASM, seeds 1-11 and 24532, 6.9e-5 to 1.63e-4 (the planted package) and 4.5e-5 to
 * 1.39e-4 (the negation one), the same to three digits with the converter's sparse layers as
 * without, against the fixtures' 5e-5 bound; the draws of seed 961577 reach 2.03e-4 on the
 * planted package. 3e-4 in logit is 7.5e-5 in probability at most.
 */
export const TRAINED_LOGIT_TOLERANCE = 3e-4;
