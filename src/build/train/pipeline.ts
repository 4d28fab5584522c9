/**
 * The training pipeline: labelled System One examples in, a browser package out. Phases, each
 * reported with progress: check (every bad line at once, before any work), tokenizer, fit,
 * release (the Clef release the weights are written as), convert (the project's converter, whose
 * fidelity pass checks the package against the float64 reference forward), verify (every held-out
 * example through the package, against the fitted function), calibrate (on the held-out part),
 * card. Everything is written under a temporary name and renamed at the end: a failure leaves
 * no half-written package. One seed gives the same bytes.
 *
 * Runtime-neutral: Node runs it on the disk (src/node/train/train.ts); the playground's train
 * worker runs it on files in memory (../host/files.ts), verifying through the page's own engine.
 * What differs between the two is the TrainHost.
 */
import { SCOPE_WORDS } from './scope.js';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from '../host/files.js';
import { basename, dirname, join, relative, resolve } from '../host/paths.js';
import { parseLabelledExamples, type LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import { calibrateFromExamples, type CalibrateRunResult } from '../../calibrate/run.js';
import { serializeCalibration } from '../../calibrate/file.js';
import { scaledSoftmax } from '../../calibrate/softmax.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import type { OptionBand } from '../../calibrate/types.js';
import { validateRequest } from '../../protocol/validate.js';
import type { JsonValue } from '../../protocol/types.js';
import { requiredAnswers } from '../../calibrate/fit.js';
import { convertRelease } from '../convert/package.js';
import type { ConvertRuntime } from '../convert/runtime.js';
import { writeCalibratedPackage } from '../calibrate/write.js';
import { Rng } from '../../calibrate/prng.js';
import { baselineFigures, baselineVerdict, type BaselineReport } from './baseline.js';
import { writeModelCard, heldOutFigures, type HeldOutReport } from './card.js';
import { RMS_EPS, writeRelease } from './construct.js';
import { checkExamples, encodeExamples, prepareTokenizer, type TrainedQuestion } from './data.js';
import {
  CROSS_FIT_MAX,
  fitPhase,
  ORDER_MODES,
  orderConsidered,
  type FitPhase,
  type OrderMode,
} from './fit.js';
import { DEFAULT_PAIR_SHAPE } from './pairs.js';
import { QWEN_ADDED_TOKENS } from './bpe.js';
import { hiddenOf, type FitSettings } from './learner.js';
import { hiddenLayout, modelLogits, type ModelExample, type ModelParams } from './model.js';
import { TrainError } from './errors.js';
import { checkModelNames } from './model-names.js';
import type { ShardPool } from './shards.js';

export type TrainPhase =
  'check' | 'tokenizer' | 'fit' | 'release' | 'convert' | 'verify' | 'calibrate' | 'card';

export interface TrainProgress {
  phase: TrainPhase;
  done: number;
  total: number;
  /** Estimated milliseconds left in this phase, once it can be estimated. */
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
  /** Norm dims of the model (learner.ts; default 32). */
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
  /** Naive Bayes on word counts, fitted and judged the same way (the baseline to beat). */
  baseline: BaselineReport;
  /** Largest |Δp| between the package (the host's engine) and the fitted function, held out. */
  maxPackageDeltaP: number;
  /** Held-out examples that ran through the package for that comparison. */
  verified: number;
  calibrated: boolean;
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
  /** The directory the card names the release's place relative to. */
  cwd: string;
  /** Names this run's temporary directories (two runs side by side never share one). */
  runTag: string;
  /** Whether the converter also writes the WASM-prepared graphs (needs onnxruntime-node). */
  wasmGraphs: boolean;
  /** The converter's runtime (onnxruntime-node, the Node engine); the page's asks for neither. */
  convertRuntime?: ConvertRuntime;
  /**
   * Threads the fit's shards run on (Node: worker threads, shard-pool.ts); without one, this
   * thread runs them. The same bytes either way (shards.ts).
   */
  shardPool?: ShardPool;
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

function mostCommon(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return sorted[0]?.[0] ?? 'clef-trained';
}

export function parse(text: string, what: string): LabelledExample[] {
  try {
    return parseLabelledExamples(text, {
      validateRequest: (body: JsonValue) => validateRequest(body),
    });
  } catch (e) {
    if (isCalibrationError(e)) {
      throw new TrainError('examples_invalid', `${what}: ${e.message}`, e.details);
    }
    throw e;
  }
}

/** Stratified by each example's first labelled answer, seeded: every option keeps its share. */
export function splitHoldout(examples: readonly LabelledExample[], fraction: number, seed: number) {
  const groups = new Map<string, LabelledExample[]>();
  for (const e of examples) {
    const [first] = e.labels.entries();
    const key = first === undefined ? '' : `${first[0]}\u0000${first[1]}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(e);
  }
  const rng = new Rng(seed ^ 0x2545f491);
  const held = new Set<LabelledExample>();
  for (const key of [...groups.keys()].sort()) {
    const pool = [...(groups.get(key) as LabelledExample[])];
    const take = Math.round(pool.length * fraction);
    for (let i = 0; i < take; i++)
      held.add(pool.splice(rng.int(pool.length), 1)[0] as LabelledExample);
  }
  return {
    train: examples.filter((e) => !held.has(e)),
    heldOut: examples.filter((e) => held.has(e)),
  };
}

function checkOut(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new TrainError(
      'train_options_invalid',
      `${dir} exists and is not empty: give a new directory (nothing was written)`,
    );
  }
}

export async function runTraining(options: TrainOptions, host: TrainHost): Promise<TrainResult> {
  const out = resolve(options.out);
  const releaseDir = resolve(options.releaseDir ?? `${out}-release`);
  const seed = options.seed ?? 1;
  const contextTokens = options.contextTokens ?? DEFAULT_CONTEXT;
  const coverage = options.coverage ?? 0.9;
  const progress = options.onProgress ?? (() => {});
  const timings = {} as Record<TrainPhase, number>;
  let phaseStart = Date.now();
  const endPhase = (phase: TrainPhase): void => {
    timings[phase] = Date.now() - phaseStart;
    phaseStart = Date.now();
  };
  if (
    options.heldOutExamples === undefined &&
    options.holdout !== undefined &&
    !(options.holdout >= 0 && options.holdout <= 0.5)
  ) {
    throw new TrainError(
      'train_options_invalid',
      `holdout must be in [0, 0.5], got ${options.holdout}`,
    );
  }
  if (options.order !== undefined && !ORDER_MODES.includes(options.order)) {
    throw new TrainError(
      'train_options_invalid',
      `order must be 'auto', 'on' or 'off', got ${JSON.stringify(options.order)}`,
    );
  }
  checkOut(out);
  checkOut(releaseDir);

  const prepared = prepare(options, seed, contextTokens, coverage, progress, endPhase);
  const { questions, data, name } = prepared;
  const split = { heldOut: prepared.heldOutExamples, train: prepared.trainExamples };

  const fitStart = Date.now();
  const fitted = await fitPhase(
    data,
    questions,
    { examples: split.train, encoded: prepared.train },
    { examples: split.heldOut, encoded: prepared.heldOut },
    {
      settings: options.fit,
      normDims: options.normDims,
      order: options.order,
      seed,
      rmsEps: RMS_EPS,
      pool: host.shardPool,
      onFit: (done, total, iteration) => {
        const per = done === 0 ? 0 : (Date.now() - fitStart) / done;
        progress({
          phase: 'fit',
          done,
          total,
          etaMs: done === 0 ? undefined : per * (total - done),
          message:
            done === total
              ? undefined
              : `fit ${done + 1} of ${total}${iteration === undefined ? '' : `, iteration ${iteration}`}`,
        });
      },
    },
  );
  const params = fitted.model.params;
  endPhase('fit');

  // Judged on text it did not see: the held-out part when it is large enough to calibrate on,
  // else every training example, out of fold.
  const judged =
    fitted.outOfFold !== null && split.heldOut.length < prepared.needAnswers
      ? {
          on: 'cross-fit' as const,
          examples: split.train,
          logits: fitted.outOfFold,
          lines: prepared.trainLines,
        }
      : {
          on: 'held-out' as const,
          examples: split.heldOut,
          logits: prepared.heldOut.map((e) => modelLogits(params, e)),
          lines: prepared.heldOutLines,
        };

  const partial = partialDir(out, host.runTag);
  const partialRelease = partialDir(releaseDir, host.runTag);
  mkdirSync(dirname(out), { recursive: true });
  mkdirSync(dirname(releaseDir), { recursive: true });
  rmSync(partial, { recursive: true, force: true });
  rmSync(partialRelease, { recursive: true, force: true });
  host.writing?.([partial, partialRelease]);
  try {
    progress({ phase: 'release', done: 0, total: 1 });
    writeRelease(partialRelease, params, {
      contextTokens,
      tokenizerJson: data.files.tokenizerJson,
      tokenizerConfig: data.files.tokenizerConfig,
      markers: data.markers,
    });
    endPhase('release');

    const fidelityRequests = options.fidelityRequests ?? DEFAULT_FIDELITY_REQUESTS;
    progress({
      phase: 'convert',
      done: 0,
      total: 1,
      message: `fidelity against the float64 reference on ${fidelityRequests} random requests`,
    });
    await convertRelease(
      partialRelease,
      partial,
      {
        dtype: 'fp32',
        name,
        description: `${name}: a decision model trained by clef-web train (see README.md)`,
        releaseDate: TRAINED_RELEASE_DATE,
        fidelityRequests,
        fidelityThreads: 1,
        wasmGraphs: host.wasmGraphs,
        log: () => {},
      },
      host.convertRuntime,
    );
    endPhase('convert');

    // The package against the fitted function: on the held-out part, else on training examples.
    const verifyOn =
      split.heldOut.length > 0
        ? { examples: split.heldOut, encoded: prepared.heldOut }
        : { examples: split.train, encoded: prepared.train };
    const { maxDelta, verified } = await verifyPackage(
      await host.openPackage(partial),
      verifyOn.examples,
      verifyOn.encoded,
      params,
      prepared.trained,
      progress,
    );
    endPhase('verify');

    progress({ phase: 'calibrate', done: 0, total: 1 });
    let calibration: CalibrateRunResult | null = null;
    let calibrationSkipped: string | null = null;
    try {
      // The judged lines as written (lossless), and their logits in the same order.
      const text = judged.examples.map((e) => judged.lines.get(e.line) as string).join('\n');
      let next = 0;
      calibration = await calibrateFromExamples(text, {
        coverage,
        bands: options.calibrationBands,
        seed,
        validateRequest: (body: JsonValue) => validateRequest(body),
        logits: async () =>
          fullRows(
            judged.examples[next] as LabelledExample,
            judged.logits[next++] as Float64Array[],
            prepared.trained,
          ),
      });
      const manifest = JSON.parse(readFileSync(join(partial, 'manifest.json'), 'utf8'));
      writeCalibratedPackage(
        partial,
        manifest,
        serializeCalibration(calibration.calibration),
        partial,
      );
    } catch (e) {
      if (!isCalibrationError(e) || e.code !== 'calibration_too_few') throw e;
      calibrationSkipped = e.message;
    }
    endPhase('calibrate');

    progress({ phase: 'card', done: 0, total: 1 });
    const logitsByLine = new Map<number, ReadonlyArray<ArrayLike<number>>>();
    judged.examples.forEach((e, i) =>
      logitsByLine.set(e.line, fullRows(e, judged.logits[i] as Float64Array[], prepared.trained)),
    );
    const report = heldOutFigures(judged.examples, logitsByLine, questions);
    const figures = baselineFigures(
      questions,
      split.train,
      judged.on === 'held-out' ? split.heldOut : null,
      fitted.folds,
    );
    const baseline: BaselineReport = {
      ...figures,
      questions: figures.questions.map((b) => ({
        ...b,
        verdict: baselineVerdict(
          report.questions.find((q) => q.id === b.id)?.accuracy ?? NaN,
          b.accuracy,
        ),
      })),
    };
    const selection = { ...fitted.selection, settings: fitted.model.settings };
    const layout = hiddenLayout(params.shape);
    writeModelCard(partial, {
      name,
      questions,
      examples: { train: split.train.length, heldOut: split.heldOut.length },
      evaluatedOn: judged.on,
      heldOut: report,
      baseline,
      selection,
      seed,
      shape: { ...params.shape, hidden: layout.hidden, classDims: fitted.setup.classWidth },
      calibration,
      calibrationSkipped,
      maxPackageDeltaP: maxDelta,
      verified,
      verifiedOn: host.engineName,
      fidelityRequests,
      releaseDir: relative(host.cwd, releaseDir) || '.',
      notes: options.cardNotes ?? null,
    });
    endPhase('card');

    // Both were checked empty at the start; an empty directory made since is replaced.
    rmSync(releaseDir, { recursive: true, force: true });
    renameSync(partialRelease, releaseDir);
    rmSync(out, { recursive: true, force: true });
    renameSync(partial, out);
    return {
      packageDir: out,
      releaseDir,
      name,
      questions,
      examples: { train: split.train.length, heldOut: split.heldOut.length },
      selection,
      heldOut: report,
      evaluatedOn: judged.on,
      baseline,
      maxPackageDeltaP: maxDelta,
      verified,
      calibrated: calibration !== null,
      timingsMs: timings,
    };
  } finally {
    rmSync(partial, { recursive: true, force: true });
    rmSync(partialRelease, { recursive: true, force: true });
  }
}

/** The model's rows for every question of a request: zeros for the questions it was not trained on. */
function fullRows(
  example: LabelledExample,
  rows: readonly Float64Array[],
  trained: ReadonlySet<string>,
): Float64Array[] {
  let k = 0;
  return example.valid.questions.map((q) =>
    trained.has(q.id) ? (rows[k++] as Float64Array) : new Float64Array(promptOptions(q).length),
  );
}

/** A fixed date: the manifest must not change with the day a model is trained. */
const TRAINED_RELEASE_DATE = '2026-12-01';

/**
 * check and tokenizer: every problem with the file before any work, then the tokenizer and the
 * encoded examples. A function of its own so that the parsed training examples (the biggest
 * thing a run holds: CLINC150's 15,100 requests of 151 options) are garbage once it returns.
 */
function prepare(
  options: TrainOptions,
  seed: number,
  contextTokens: number,
  coverage: number,
  progress: (p: TrainProgress) => void,
  endPhase: (phase: TrainPhase) => void,
) {
  progress({ phase: 'check', done: 0, total: 1 });
  const all = parse(options.examples, 'examples');
  const holdout = options.holdout ?? (all.length <= CROSS_FIT_MAX ? 0 : DEFAULT_HOLDOUT);
  const split =
    options.heldOutExamples !== undefined
      ? { train: all, heldOut: parse(options.heldOutExamples, 'held-out examples') }
      : holdout > 0
        ? splitHoldout(all, holdout, seed)
        : { train: all, heldOut: [] };
  const needAnswers = requiredAnswers({ coverage }).total;
  const questions = checkExamples(split.train, needAnswers);
  const name = options.name ?? mostCommon(all.map((e) => e.valid.model));
  checkModelNames(split.train.concat(split.heldOut), name);
  // The lines as written (lossless), for the calibration's own parse.
  const linesOf = (text: string, examples: readonly LabelledExample[]) => {
    const lines = text.replace(/^\uFEFF/, '').split('\n');
    const byLine = new Map<number, string>();
    for (const e of examples) {
      const line = lines[e.line - 1] as string;
      byLine.set(e.line, line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    return byLine;
  };
  const heldOutLines = linesOf(options.heldOutExamples ?? options.examples, split.heldOut);
  const trainLines = linesOf(options.examples, split.train);
  progress({ phase: 'check', done: 1, total: 1, message: `${all.length} examples` });
  endPhase('check');

  progress({ phase: 'tokenizer', done: 0, total: 1 });
  const classes = questions.reduce((n, q) => n + q.options.length, 0);
  const data = prepareTokenizer(
    split.train,
    options.vocabSize ??
      defaultVocab(
        hiddenOf(
          classes,
          options.normDims,
          orderConsidered(options.order ?? 'auto', split.train.length) ? DEFAULT_PAIR_SHAPE.m : 0,
        ),
      ),
    // The scope layer's cue words, kept whole, where `auto` may try it (fit.ts).
    (options.order ?? 'auto') === 'auto' && orderConsidered('auto', split.train.length)
      ? SCOPE_WORDS
      : [],
  );
  const trained = new Set(questions.map((q) => q.id));
  const train = encodeExamples(split.train, data, contextTokens, trained);
  const heldOut = encodeExamples(split.heldOut, data, contextTokens, trained);
  progress({
    phase: 'tokenizer',
    done: 1,
    total: 1,
    message: `${data.files.vocabSize} tokens`,
  });
  endPhase('tokenizer');
  return {
    questions,
    name,
    data,
    trained,
    train,
    heldOut,
    trainExamples: split.train,
    heldOutExamples: split.heldOut,
    trainLines,
    heldOutLines,
    needAnswers,
  };
}

/** Held-out examples run through the package in the verify phase, at most (evenly spread). */
export const VERIFY_EXAMPLES = 500;

/**
 * Examples through the package (all of them up to VERIFY_EXAMPLES, else that many evenly
 * spread), each compared with the fitted function; a difference over PACKAGE_TOLERANCE stops the
 * run (a 151-option request costs ~50-100 ms in the package and microseconds in the function).
 */
async function verifyPackage(
  engine: PackageDecider,
  examples: readonly LabelledExample[],
  encoded: readonly ModelExample[],
  params: ModelParams,
  trained: ReadonlySet<string>,
  progress: (p: TrainProgress) => void,
) {
  const step = Math.max(1, Math.ceil(examples.length / VERIFY_EXAMPLES));
  const sample = examples.map((_, i) => i).filter((i) => i % step === 0);
  let maxDelta = 0;
  try {
    const start = Date.now();
    for (const [n, i] of sample.entries()) {
      const example = examples[i] as LabelledExample;
      const fitted = fullRows(example, modelLogits(params, encoded[i] as ModelExample), trained);
      const decision = await engine.decide(example.request);
      if (decision.logits === undefined) throw new Error('the engine gave no logits');
      example.valid.questions.forEach((q, qi) => {
        if (!trained.has(q.id)) return;
        const got = (decision.logits as ReadonlyArray<ArrayLike<number>>)[qi] as ArrayLike<number>;
        maxDelta = Math.max(maxDelta, maxAbsDeltaP(got, fitted[qi] as Float64Array));
      });
      if ((n + 1) % 50 === 0 || n + 1 === sample.length) {
        const per = (Date.now() - start) / (n + 1);
        progress({
          phase: 'verify',
          done: n + 1,
          total: sample.length,
          etaMs: per * (sample.length - n - 1),
        });
      }
    }
  } finally {
    await engine.dispose();
  }
  if (!(maxDelta <= PACKAGE_TOLERANCE)) {
    throw new TrainError(
      'train_verification_failed',
      `the package's probabilities differ from the fitted model's by ${maxDelta} (> ${PACKAGE_TOLERANCE}): a bug in clef-web's construction; please report it`,
      { maxAbsDeltaP: maxDelta },
    );
  }
  return { maxDelta, verified: sample.length };
}

/** Largest |Δp| between two logit rows' softmaxes. */
export function maxAbsDeltaP(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  const pb = scaledSoftmax(b);
  return Math.max(...scaledSoftmax(a).map((v, i) => Math.abs(v - (pb[i] as number))));
}
