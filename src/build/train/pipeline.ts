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
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from '../host/files.js';
import { dirname, join, relative, resolve } from '../host/paths.js';
import type { LabelledExample } from '../../calibrate/examples.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import type { JsonValue } from '../../protocol/types.js';
import { calibrateFromExamples, type CalibrateRunResult } from '../../calibrate/run.js';
import { serializeCalibration } from '../../calibrate/file.js';
import { validateRequest } from '../../protocol/validate.js';
import { convertRelease } from '../convert/package.js';
import { writeCalibratedPackage } from '../calibrate/write.js';
import {
  baselineFigures,
  baselineVerdict,
  logisticVerdict,
  type BaselineReport,
} from './baseline.js';
import { writeModelCard, heldOutFigures, modelAnsweredRight } from './card.js';
import { logisticFigures } from './logistic.js';
import { RMS_EPS, writeRelease } from './construct.js';
import { fitPhase, ORDER_MODES } from './fit.js';
import { hiddenLayout } from './model.js';
import { modelLogits } from './readout.js';
import { TrainError } from './errors.js';
import {
  DEFAULT_CONTEXT,
  DEFAULT_FIDELITY_REQUESTS,
  partialDir,
  type TrainHost,
  type TrainOptions,
  type TrainPhase,
  type TrainResult,
} from './options.js';
import { prepare } from './prepare.js';
import { repeatNotes } from './repeats.js';
import { FitClock } from './fit-progress.js';
import { fullRows, verifyPackage } from './verify.js';

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

  const clock = new FitClock();
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
      onFit: (report) => {
        const { done, total, iteration, settled } = report;
        const etaMs = clock.read(report);
        progress({
          phase: 'fit',
          done,
          total,
          etaMs,
          message:
            done === total
              ? undefined
              : `fit ${done + 1} of ${settled ? '' : 'at most '}${total}${iteration === undefined ? '' : `, iteration ${iteration}`}`,
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
        // Out-of-fold answers are lines written like the training file: fitted on them, a
        // temperature below 1 sharpened nearly every small file's model into more confident mistakes
        // on text written apart (docs/benchmarks.md, "A small file's calibration never sharpens").
        ...(judged.on === 'cross-fit' ? { minTemperature: 1 } : {}),
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
    const modelRight = modelAnsweredRight(logitsByLine);
    const figures = baselineFigures(
      questions,
      split.train,
      judged.on === 'held-out' ? split.heldOut : null,
      fitted.folds,
      modelRight,
    );
    const logistic = await logisticFigures(
      questions,
      split.train,
      judged.on === 'held-out' ? split.heldOut : null,
      fitted.folds,
      modelRight,
      (done, total) => progress({ phase: 'card', done, total: total + 1 }),
    );
    const modelAccuracy = (id: string) =>
      report.questions.find((q) => q.id === id)?.accuracy ?? NaN;
    const baseline: BaselineReport = {
      ...figures,
      questions: figures.questions.map((b) => {
        const lr = logistic.questions.get(b.id) ?? null;
        return {
          ...b,
          verdict: baselineVerdict(modelAccuracy(b.id), b.accuracy),
          logistic:
            lr === null
              ? null
              : { ...lr, verdict: logisticVerdict(modelAccuracy(b.id), lr.accuracy) },
        };
      }),
      ...(logistic.logisticSkipped === undefined
        ? {}
        : { logisticSkipped: logistic.logisticSkipped }),
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
      // Where the release is from the package (the card is read there): the same bytes wherever
      // `train` ran.
      releaseDir: relative(out, releaseDir),
      repeats: prepared.repeats,
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
      repeats: prepared.repeats,
      notes: repeatNotes(prepared.repeats),
      timingsMs: timings,
    };
  } finally {
    rmSync(partial, { recursive: true, force: true });
    rmSync(partialRelease, { recursive: true, force: true });
  }
}

/** A fixed date: the manifest must not change with the day a model is trained. */
const TRAINED_RELEASE_DATE = '2026-12-01';
