/**
 * The training pipeline: labelled System One examples in, a browser package out. Phases, each
 * reported with progress: check (every bad line at once, before any work), tokenizer, fit,
 * release (the Clef release the weights are written as), convert (the project's converter, whose
 * fidelity pass checks the package against the float64 reference forward), verify (every held-out
 * example through the package, against the fitted function), calibrate (on the held-out part),
 * card. Everything is written under a temporary name and renamed at the end: a failure leaves
 * no half-written package. One seed gives the same bytes.
 *
 * Runtime-neutral apart from `node:fs`/`node:path`: Node runs it on the disk (train.ts); the
 * playground's train worker runs it on an in-memory file system (src/train-web), verifying
 * through the page's own engine. What differs between the two is the TrainHost.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseLabelledExamples, type LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import { calibrateFromExamples, type CalibrateRunResult } from '../../calibrate/run.js';
import { serializeCalibration } from '../../calibrate/file.js';
import { scaledSoftmax } from '../../calibrate/softmax.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import type { OptionBand } from '../../calibrate/types.js';
import { validateRequest } from '../../protocol/validate.js';
import type { JsonValue } from '../../protocol/types.js';
import { convertRelease } from '../convert/package.js';
import { writeCalibratedPackage } from '../calibrate/write.js';
import { Rng } from '../rng.js';
import { writeModelCard, heldOutFigures, type HeldOutReport } from './card.js';
import { RMS_EPS, writeRelease } from './construct.js';
import { checkExamples, encodeExamples, prepareTokenizer, type TrainedQuestion } from './data.js';
import { DEFAULT_FIT, fitMatcher, type EpochReport, type FitSettings } from './fit.js';
import {
  hiddenLayout,
  initParams,
  matcherLogits,
  type MatcherExample,
  type MatcherParams,
} from './matcher.js';
import { TrainError } from './errors.js';
import { checkModelNames } from './model-names.js';

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
  /** Share of the examples held out for selection, verification and calibration (default 0.1). */
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
  /** Pooling heads and values per head (default 2 × 24: hidden 104). */
  heads?: number;
  headDim?: number;
  fit?: Partial<FitSettings>;
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
  best: EpochReport;
  heldOut: HeldOutReport;
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
  const holdout = options.holdout ?? DEFAULT_HOLDOUT;
  const contextTokens = options.contextTokens ?? DEFAULT_CONTEXT;
  const progress = options.onProgress ?? (() => {});
  const timings = {} as Record<TrainPhase, number>;
  let phaseStart = Date.now();
  const endPhase = (phase: TrainPhase): void => {
    timings[phase] = Date.now() - phaseStart;
    phaseStart = Date.now();
  };
  if (options.heldOutExamples === undefined && !(holdout > 0 && holdout <= 0.5)) {
    throw new TrainError('train_options_invalid', `holdout must be in (0, 0.5], got ${holdout}`);
  }
  checkOut(out);
  checkOut(releaseDir);

  const prepared = prepare(options, holdout, seed, contextTokens, progress, endPhase);
  const { questions, data, train, heldOut, trained, name } = prepared;
  const split = { heldOut: prepared.heldOutExamples, trainCount: prepared.trainCount };
  const heldOutLines = prepared.heldOutLines;

  const shape = {
    heads: options.heads ?? 2,
    headDim: options.headDim ?? 24,
    vocab: data.files.vocabSize,
  };
  const bagTokens = new Set<number>();
  // A set, not a list: CLINC150's 151-option questions repeat the same option tokens ~30M times.
  const optionTokens = new Set<number>();
  for (const e of train) {
    for (const t of e.bag) bagTokens.add(t);
    for (const q of e.questions) for (const o of q.options) for (const t of o) optionTokens.add(t);
  }
  const settings: FitSettings = { ...DEFAULT_FIT, seed, ...options.fit };
  const initial = initParams(shape, optionTokens, bagTokens, data.markers, seed, RMS_EPS);
  const fitStart = Date.now();
  const fitted = fitMatcher(initial, train, heldOut, settings, (r) => {
    const perEpoch = (Date.now() - fitStart) / r.epoch;
    progress({
      phase: 'fit',
      done: r.epoch,
      total: settings.epochs,
      etaMs: perEpoch * (settings.epochs - r.epoch),
      message: `held-out accuracy ${(100 * r.heldOutAccuracy).toFixed(1)}%, loss ${r.heldOutLoss.toFixed(3)}`,
    });
  });
  endPhase('fit');

  const partial = partialDir(out, host.runTag);
  const partialRelease = partialDir(releaseDir, host.runTag);
  mkdirSync(dirname(out), { recursive: true });
  mkdirSync(dirname(releaseDir), { recursive: true });
  rmSync(partial, { recursive: true, force: true });
  rmSync(partialRelease, { recursive: true, force: true });
  host.writing?.([partial, partialRelease]);
  try {
    progress({ phase: 'release', done: 0, total: 1 });
    writeRelease(partialRelease, fitted.params, {
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
    await convertRelease(partialRelease, partial, {
      dtype: 'fp32',
      name,
      description: `${name}: a decision model trained by clef-web train (see README.md)`,
      releaseDate: TRAINED_RELEASE_DATE,
      fidelityRequests,
      fidelityThreads: 1,
      wasmGraphs: host.wasmGraphs,
      log: () => {},
    });
    endPhase('convert');

    const { logitsByLine, maxDelta, verified } = await verifyPackage(
      await host.openPackage(partial),
      split.heldOut,
      heldOut,
      fitted.params,
      trained,
      progress,
    );
    endPhase('verify');

    progress({ phase: 'calibrate', done: 0, total: 1 });
    let calibration: CalibrateRunResult | null = null;
    let calibrationSkipped: string | null = null;
    try {
      // The held-out lines as written (lossless), and their logits in the same order.
      const text = split.heldOut.map((e) => heldOutLines.get(e.line) as string).join('\n');
      let next = 0;
      calibration = await calibrateFromExamples(text, {
        coverage: options.coverage ?? 0.9,
        bands: options.calibrationBands,
        seed,
        validateRequest: (body: JsonValue) => validateRequest(body),
        logits: async () => logitsByLine.get((split.heldOut[next++] as LabelledExample).line) ?? [],
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
    const report = heldOutFigures(split.heldOut, logitsByLine, questions);
    writeModelCard(partial, {
      name,
      questions,
      examples: { train: split.trainCount, heldOut: split.heldOut.length },
      heldOut: report,
      best: fitted.best,
      settings,
      shape: { ...shape, hidden: hiddenLayout(shape).hidden },
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
      examples: { train: split.trainCount, heldOut: split.heldOut.length },
      best: fitted.best,
      heldOut: report,
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

/** A fixed date: the manifest must not change with the day a model is trained. */
const TRAINED_RELEASE_DATE = '2026-12-01';

/**
 * check and tokenizer: every problem with the file before any work, then the tokenizer and the
 * encoded examples. A function of its own so that the parsed training examples (the biggest
 * thing a run holds: CLINC150's 15,100 requests of 151 options) are garbage once it returns.
 */
function prepare(
  options: TrainOptions,
  holdout: number,
  seed: number,
  contextTokens: number,
  progress: (p: TrainProgress) => void,
  endPhase: (phase: TrainPhase) => void,
) {
  progress({ phase: 'check', done: 0, total: 1 });
  const all = parse(options.examples, 'examples');
  const split =
    options.heldOutExamples === undefined
      ? splitHoldout(all, holdout, seed)
      : { train: all, heldOut: parse(options.heldOutExamples, 'held-out examples') };
  const questions = checkExamples(split.train);
  if (split.heldOut.length === 0) {
    throw new TrainError(
      'train_options_invalid',
      'no held-out example: give more examples or a larger --holdout',
    );
  }
  const name = options.name ?? mostCommon(all.map((e) => e.valid.model));
  checkModelNames(split.train.concat(split.heldOut), name);
  // The held-out lines as written (lossless), for the calibration's own parse.
  const lines = (options.heldOutExamples ?? options.examples).replace(/^\uFEFF/, '').split('\n');
  const heldOutLines = new Map<number, string>();
  for (const e of split.heldOut) {
    const line = lines[e.line - 1] as string;
    heldOutLines.set(e.line, line.endsWith('\r') ? line.slice(0, -1) : line);
  }
  progress({ phase: 'check', done: 1, total: 1, message: `${all.length} examples` });
  endPhase('check');

  progress({ phase: 'tokenizer', done: 0, total: 1 });
  const data = prepareTokenizer(split.train, options.vocabSize ?? DEFAULT_VOCAB);
  const trained = new Set(questions.map((q) => q.id));
  const train = encodeExamples(split.train, data, contextTokens, trained, new Rng(seed ^ 0x51ed));
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
    heldOutExamples: split.heldOut,
    heldOutLines,
    trainCount: split.train.length,
  };
}

/** Held-out examples run through the package in the verify phase, at most (evenly spread). */
export const VERIFY_EXAMPLES = 500;

/**
 * Held-out examples through the package (all of them up to VERIFY_EXAMPLES, else that many
 * evenly spread), each compared with the fitted function; a difference over PACKAGE_TOLERANCE
 * stops the run. Returns every held-out example's logits for the calibration and the card: the
 * package's where it ran, the fitted function's elsewhere (equal to within the measured |Δp|),
 * since a 151-option request costs ~50-100 ms in the package and microseconds in the function.
 */
async function verifyPackage(
  engine: PackageDecider,
  examples: readonly LabelledExample[],
  encoded: readonly MatcherExample[],
  params: MatcherParams,
  trained: ReadonlySet<string>,
  progress: (p: TrainProgress) => void,
) {
  const logitsByLine = new Map<number, ReadonlyArray<ArrayLike<number>>>();
  const rows = examples.map((example, i) => {
    const fitted = matcherLogits(params, encoded[i] as MatcherExample);
    let k = 0;
    return example.valid.questions.map((q) =>
      trained.has(q.id) ? (fitted[k++] as Float64Array) : new Float64Array(promptOptions(q).length),
    );
  });
  examples.forEach((e, i) => logitsByLine.set(e.line, rows[i] as Float64Array[]));
  const step = Math.max(1, Math.ceil(examples.length / VERIFY_EXAMPLES));
  const sample = examples.map((_, i) => i).filter((i) => i % step === 0);
  let maxDelta = 0;
  try {
    const start = Date.now();
    for (const [n, i] of sample.entries()) {
      const example = examples[i] as LabelledExample;
      const decision = await engine.decide(example.request);
      if (decision.logits === undefined) throw new Error('the engine gave no logits');
      logitsByLine.set(example.line, decision.logits);
      example.valid.questions.forEach((q, qi) => {
        if (!trained.has(q.id)) return;
        const got = (decision.logits as ReadonlyArray<ArrayLike<number>>)[qi] as ArrayLike<number>;
        const want = (rows[i] as Float64Array[])[qi] as Float64Array;
        maxDelta = Math.max(maxDelta, maxAbsDeltaP(got, want));
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
  return { logitsByLine, maxDelta, verified: sample.length };
}

/** Largest |Δp| between two logit rows' softmaxes. */
export function maxAbsDeltaP(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  const pb = scaledSoftmax(b);
  return Math.max(...scaledSoftmax(a).map((v, i) => Math.abs(v - (pb[i] as number))));
}
