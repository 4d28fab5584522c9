/**
 * The fixed settings of the fit's search (layer-search.ts, fit.ts): iteration limits, the
 * strongest penalty, the layers' own penalties and the clause weights tried. Each was chosen by a
 * measurement, written beside it (docs/benchmarks.md has the figures).
 */
import type { FitSettings } from './learner.js';
import { DEFAULT_SETTINGS } from './select.js';

/** L-BFGS iterations per fit at most (the fits here stop at 60-300). */
export const MAX_ITERATIONS = 400;
/** A long fit reports its progress every this many iterations. */
export const ITERATION_REPORT = 20;

/**
 * The order layer's L2 penalty relative to λ (pairLambda). On the planted order task (480 draws,
 * 400 fresh ones) 10⁻² gives ≥ 99% on all 53 seeds tried with pairs.ts DEFAULT_PAIR_SHAPE; on the
 * bank before it, 10⁻⁴ missed on one seed of 14, 10⁻¹ gave 98.5% on average and λ chance. On the
 * project's hand-written files, where no example shows an order, 10⁻⁴ let the layer learn the
 * lines' word sequences (cross-entropy 3–11 on a held fold, the plain model's 0.5–0.9).
 */
export const ORDER_PAIR_LAMBDA = 1e-2;

/**
 * The settings the order layer is tried and fitted at: the defaults' λ with its own penalty, the
 * settings its figures were measured at. Not the plain search's λ: where the words say nothing
 * (the planted order task) that search ends at its strongest, λ 100, and the layer fitted there
 * answered the task at chance with its own penalty, and at 98.0% with the pointer's
 * (docs/benchmarks.md, "The order layer's own settings").
 */
export const ORDER_SETTINGS: Readonly<FitSettings> = Object.freeze({
  ...DEFAULT_SETTINGS,
  pairLambda: ORDER_PAIR_LAMBDA,
});

/** The order layer's settings: ORDER_SETTINGS, or the ones given (with its penalty if they lack one). */
export function orderSettings(given: FitSettings | undefined): FitSettings {
  return given === undefined
    ? ORDER_SETTINGS
    : { ...given, pairLambda: given.pairLambda ?? ORDER_PAIR_LAMBDA };
}

/**
 * The strongest L2 penalty a cross-fitted file may get. The grid (select.ts CANDIDATES) ends at 1;
 * where 1 wins, 10 and then 100 are tried. On the project's ops questions (80-160 lines) 1 won
 * every time and 10 predicts better still out of fold (docs/benchmarks.md, "The penalty's grid
 * extended where its end wins").
 */
export const LAMBDA_MAX = 100;

/**
 * The pointer's L2 penalty relative to λ (pairLambda). On failing (160 lines, λ 10) 10⁻⁴ gave a
 * lower out-of-fold cross-entropy than 10⁻⁵ (tools/bench/pointer-product.ts, docs/benchmarks.md).
 */
export const POINTER_PAIR_LAMBDA = 1e-4;

/**
 * The most options (over every trained question) the pointer is tried with: its heads carry one
 * channel per option, and every linear layer of the release gets as many.
 */
export const POINTER_MAX_OPTIONS = 32;

/**
 * The clause weights tried on the scope layer (model.ts clauseWeight), in nats: the first,
 * then doubled while it predicts better out of fold, up to the last. On the project's ops
 * questions the out-of-fold optimum lay between 0.25 and 0.75, and gate's at 0
 * (docs/benchmarks.md, "The later clause").
 */
export const CLAUSE_WEIGHTS: readonly number[] = Object.freeze([0.25, 0.5, 1, 2]);

/** `auto` leaves the order layer out where the plain model's out-of-fold accuracy is this high. */
export const ORDER_UNNEEDED_ACCURACY = 0.99;
