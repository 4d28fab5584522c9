/**
 * What a training run (pipeline.ts) is given and gives back, what it needs from where it runs
 * (Node's disk, or the page's files in memory), and the defaults it fills in.
 */
import { basename, dirname, join } from '../host/paths.js';
import type { OptionBand } from '../../calibrate/types.js';
import type { ConvertRuntime } from '../convert/runtime.js';
import type { BaselineReport } from './baseline.js';
import { QWEN_ADDED_TOKENS } from './bpe.js';
import type { HeldOutReport } from './card.js';
import type { TrainedQuestion } from './data.js';
import type { FitPhase, OrderMode } from './fit.js';
import type { FitSettings } from './learner.js';
import type { RepeatReport } from './repeats.js';
import type { TrainPool } from './select.js';

export type TrainPhase =
  'check' | 'tokenizer' | 'fit' | 'release' | 'convert' | 'verify' | 'calibrate' | 'card';

export interface TrainProgress {
  phase: TrainPhase;
  done: number;
  /**
   * In the `fit` phase, the most fits it may still make: counted up front and lowered (never
   * raised) as the trainer rules candidates out, so it equals `done` at the end.
   */
  total: number;
  /**
   * Estimated milliseconds left in this phase, once it can be estimated. In `fit` it counts the
   * fits that run where every trial loses, and rises where one wins (fit-progress.ts FitClock).
   */
  etaMs?: number;
  message?: string;
}

export interface TrainOptions {
  /** The labelled-examples JSONL text (calibrate's format). */
  examples: string;
  /** The package directory to write; must not exist or be empty. */
  out: string;
  /** Where the Clef release is written (default: `<out>-release` beside the package). */
  releaseDir?: string;
  /** The model name requests use (default: the name most examples' requests give). */
  name?: string;
  seed?: number;
  /**
   * Share of the examples held out (stratified by label) for the figures and calibration. Default:
   * none for a file of up to CROSS_FIT_MAX examples (they are cross-fitted instead: every example
   * trains the final model and is judged by a model that did not see it), 0.1 above.
   */
  holdout?: number;
  /** Held-out examples from a file of their own instead of a split (text, same format). */
  heldOutExamples?: string;
  /** Calibration coverage (default 0.9). */
  coverage?: number;
  /** Option-count bands the calibration also fits on their own (`clef-web calibrate --bands`). */
  calibrationBands?: OptionBand[];
  /** BPE vocabulary before the 33 added tokens (default 4,000). */
  vocabSize?: number;
  /** Context length of the model (default 4,096 tokens). */
  contextTokens?: number;
  /** The fit's settings as they are (no selection); default: chosen by cross-fitting. */
  fit?: FitSettings;
  /** Norm dims of the model (learner-setup.ts; default 32). */
  normDims?: number;
  /** The order layer (fit.ts): `auto` (default) keeps it where cross-fitting shows it helps. */
  order?: OrderMode;
  /** Markdown appended to the generated model card (a licence, a data credit). */
  cardNotes?: string;
  /** Random requests the converter checks against the float64 reference (default 2). */
  fidelityRequests?: number;
  onProgress?: (progress: TrainProgress) => void;
}

export interface TrainResult {
  packageDir: string;
  releaseDir: string;
  name: string;
  questions: TrainedQuestion[];
  examples: { train: number; heldOut: number };
  /** How the fit's settings were chosen, and each candidate's out-of-sample figures. */
  selection: FitPhase['selection'] & { settings: FitSettings };
  /**
   * The model's figures on text it did not see: the held-out part, or (a small file) every
   * training example judged by the cross-fit model that did not see it (`evaluatedOn`).
   */
  heldOut: HeldOutReport;
  evaluatedOn: 'held-out' | 'cross-fit';
  /**
   * The baselines to beat, fitted and judged the same way: naive Bayes on word counts, and
   * logistic regression on word and word-pair counts (`logistic` on each question).
   */
  baseline: BaselineReport;
  /** Largest |Δp| between the package (the host's engine) and the fitted function, held out. */
  maxPackageDeltaP: number;
  /** Held-out examples that ran through the package for that comparison. */
  verified: number;
  calibrated: boolean;
  /** Lines whose states read the same: kept together when judged, and labels that disagree. */
  repeats: RepeatReport;
  /** What to tell the user about the file beside the figures (repeats.ts repeatNotes). */
  notes: string[];
  timingsMs: Record<TrainPhase, number>;
}

/** A package the verify phase runs the held-out examples through. */
export interface PackageDecider {
  decide(request: unknown): Promise<{ logits?: ReadonlyArray<ArrayLike<number>> }>;
  dispose(): Promise<void>;
}

/** What the pipeline needs from where it runs. */
export interface TrainHost {
  /** Opens the written package (a directory of the file system the pipeline writes to). */
  openPackage(dir: string): Promise<PackageDecider>;
  /** Names this run's temporary directories (two runs side by side never share one). */
  runTag: string;
  /** Whether the converter also writes the WASM-prepared graphs (needs onnxruntime-node). */
  wasmGraphs: boolean;
  /** The converter's runtime (onnxruntime-node, the Node engine); the page's asks for neither. */
  convertRuntime?: ConvertRuntime;
  /**
   * Threads the fit's shards run on (thread-pool.ts: Node's worker threads, the Train panel's
   * thread workers), and a small file's cross-fits at once; without one, this thread runs them.
   * The same bytes either way (shards.ts, select.ts FoldRunner).
   */
  shardPool?: TrainPool;
  /** The engine openPackage runs, as the model card names it. */
  engineName: string;
  /** Told the temporary folders before the first is written (Node removes them on SIGINT). */
  writing?(partials: string[]): void;
}

/** The temporary folder a run writes `dir` under: beside it, hidden, named by the run's tag. */
export function partialDir(dir: string, runTag: string): string {
  return join(dirname(dir), `.${basename(dir)}.partial-${runTag}`);
}

export const DEFAULT_HOLDOUT = 0.1;
export const DEFAULT_VOCAB = 4000;
/** What a package made with the default vocabulary may take at most. */
export const PACKAGE_BUDGET = 4 * 2 ** 20;
/** The package's files besides the backbone's weights and the lm_head rows (the head's weights,
 * tokenizer, graphs, card, calibration, manifest): 313 KB measured on CLINC150's package
 * (4,234,664 bytes at 1,603 tokens: 1% over); a margin over it. */
const PACKAGE_OVERHEAD = 384 * 2 ** 10;

/**
 * The default vocabulary for a model whose residual stream is `hidden` dims wide: DEFAULT_VOCAB
 * unless the package would outgrow PACKAGE_BUDGET. Besides the two vocabulary-sized float32
 * tables (the embedding and the lm_head rows: 8 bytes a token a dim), the two attention layers
 * hold about five hidden × hidden float32 matrices each (q with its gate, k, v, o: 1.43 MB of
 * CLINC150's 3.32 MB of backbone weights, hidden 190). CLINC150's 151 options get about 1,500
 * tokens.
 */
export function defaultVocab(hidden: number): number {
  const layers = 2 * 5 * hidden * hidden * 4;
  const tables = PACKAGE_BUDGET - PACKAGE_OVERHEAD - layers;
  const fits = Math.floor(tables / (2 * 4 * hidden)) - QWEN_ADDED_TOKENS.length;
  return Math.max(MIN_VOCAB, Math.min(DEFAULT_VOCAB, fits));
}
const MIN_VOCAB = 1024;
export const DEFAULT_CONTEXT = 4096;
export const DEFAULT_FIDELITY_REQUESTS = 2;
/** The package must give the fitted function's probabilities to within this (float32 rounding). */
export const PACKAGE_TOLERANCE = 1e-3;
