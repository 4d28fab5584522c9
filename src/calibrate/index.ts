/**
 * The calibration core: pure TypeScript (no DOM, no Node API, no ML runtime), shared by the
 * `clef-web calibrate` CLI, the engine's opt-in calibrated answers and the playground.
 */
export * from './errors.js';
export * from './types.js';
export * from './prng.js';
export * from './softmax.js';
export * from './temperature.js';
export * from './conformal.js';
export * from './metrics.js';
export * from './file.js';
export * from './examples.js';
export * from './fit.js';
export * from './apply.js';
export * from './decision.js';
export * from './run.js';
export * from './report.js';
export * from './chart.js';
