/**
 * `trainDecisionModel` in Node: the pipeline (pipeline.ts) on the disk, the package verified on
 * onnxruntime-node, WASM-prepared graphs written.
 */
import { loadNodePackage } from '../engine.js';
import { runTraining, type TrainOptions, type TrainResult } from './pipeline.js';

export function trainDecisionModel(options: TrainOptions): Promise<TrainResult> {
  return runTraining(options, {
    openPackage: (dir) => loadNodePackage(dir, { threads: 1 }),
    cwd: process.cwd(),
    runTag: String(process.pid),
    wasmGraphs: true,
    engineName: 'onnxruntime-node',
  });
}
