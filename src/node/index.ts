/**
 * `clef-web/node`: the Node product as a library. The engine (onnxruntime-node, an optional peer
 * dependency: install it to decide in Node), the System One server, batch decisions, the
 * converter and the verifier, the same code the `clef-web` CLI runs.
 */
export {
  loadNodePackage,
  type NodeDecision,
  type NodeEngine,
  type NodeEngineOptions,
} from './engine.js';
export { readPackageManifest, verifyPackageFiles } from './package-files.js';
export {
  startServer,
  nodeEngineBackend,
  ServeConfigError,
  type RunningServer,
  type ServeEngine,
  type ServeOptions,
} from './serve/server.js';
export { decideFile, type DecideFileOptions, type DecideSummary } from './decide/cli.js';
export { convertRelease, measureFidelity } from './build-runtime.js';
export type { ConvertOptions } from '../build/convert/package.js';
export type { FidelityOptions, FidelityReport } from '../build/verify/fidelity.js';
export { bundledModelDir } from './bundled.js';
export { MissingDependencyError, ORT_NODE_VERSION } from './missing-dependency.js';
// loadNodePackage's refusal of a graph the js device cannot run (runtime 'js').
export { UnsupportedOpError } from '../graph/program.js';
export { main } from './cli.js';
export { trainDecisionModel } from './train/train.js';
export type {
  TrainOptions,
  TrainProgress,
  TrainPhase,
  TrainResult,
} from '../build/train/options.js';
export type { TrainInput } from '../build/train/input.js';
export type { TeacherOptions, TeacherProgress } from '../build/train/teacher-options.js';
export { TrainError, isTrainError, type TrainErrorCode } from '../build/train/errors.js';
