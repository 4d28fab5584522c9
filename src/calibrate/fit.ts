/**
 * fitCalibration: per question type, a seeded split of the labelled answers into a fit part and
 * a held-out part; on the fit part a temperature (likelihood) and then a split-conformal
 * threshold on the temperature-scaled probabilities; on the held-out part the figures before
 * (T = 1, a threshold fitted the same way on raw probabilities) and after.
 *
 * The temperature and the threshold share the fit part. Strictly, split conformal wants the
 * score fixed before the calibration scores are taken; one parameter fitted on the same n points
 * moves coverage by O(1/n), and the held-out coverage, measured on untouched points, shows it.
 */
import { conformalThreshold, lacScore, minimumForCoverage } from './conformal.js';
import { CalibrationError, inputError } from './errors.js';
import { evaluate } from './metrics.js';
import { heldOutCount, splitCopies } from './prng.js';
import { scaledSoftmax } from './softmax.js';
import { fitTemperature } from './temperature.js';
import {
  CALIBRATION_FORMAT,
  CALIBRATION_METHOD,
  CALIBRATION_VERSION,
  QUESTION_TYPES,
  type BandCalibration,
  type CalibrationFile,
  type CalibrationRecord,
  type OptionBand,
  type TypeCalibration,
  type Evaluation,
  type HeldOutFigures,
} from './types.js';
import type { QuestionType } from '../protocol/types.js';

export interface FitOptions {
  /** Coverage asked of the prediction sets (1 − α), strictly between 0 and 1. */
  coverage: number;
  /** Share of each type's answers held out for the figures (default 0.25). */
  heldOutFraction?: number;
  /** Seed of the split (default 0); an unsigned 32-bit integer. */
  seed?: number;
  /** Floor on the fit part per type (default 20), raised to what the coverage needs. */
  minPerType?: number;
  /** Floor on the held-out part per type (default 10). */
  minHeldOutPerType?: number;
  /**
   * Option-count bands fitted on their own inside each type (disjoint, within 2..255): a band
   * with enough answers (the same minimum as a type) gets its own temperature and threshold;
   * one with fewer is skipped (its questions use the type's entry) and reported.
   */
  bands?: readonly OptionBand[];
  /**
   * The lowest temperature the fit may give (default: none). `clef-web train` sets 1 on a
   * cross-fitted file: its out-of-fold answers come from lines written like the training file,
   * and a temperature below 1 fitted on them sharpened the model into more confident mistakes on
   * text written apart (docs/benchmarks.md, "A small file's calibration never sharpens").
   */
  minTemperature?: number;
}

const DEFAULT_HELD_OUT_FRACTION = 0.25;
const DEFAULT_MIN_PER_TYPE = 20;
const DEFAULT_MIN_HELD_OUT_PER_TYPE = 10;

export interface Requirement {
  /** Labelled answers a type needs in all. */
  total: number;
  /** Of which fitted on: max(minPerType, minimumForCoverage(coverage)). */
  fit: number;
  heldOut: number;
  /** What the conformal quantile alone needs at this coverage. */
  forCoverage: number;
}

export interface GroupFitReport {
  n: { fit: number; heldOut: number };
  temperature: number;
  /** The likelihood wanted a temperature beyond [0.05, 20]; the fit is clamped there. */
  temperatureAtBound: boolean;
  threshold: number;
  /** The threshold fitted the same way on raw (T = 1) probabilities, for the "before" figures. */
  thresholdBefore: number;
  before: Evaluation;
  after: Evaluation;
}

export interface BandFitReport extends GroupFitReport, OptionBand {}

export interface TypeFitReport extends GroupFitReport {
  type: QuestionType;
  /** Bands fitted on their own, ascending. */
  bands: BandFitReport[];
  /** Bands asked for that had answers, but too few to fit: they use the type's entry. */
  skippedBands: Array<OptionBand & { have: number; need: number }>;
}

export interface FitResult {
  calibration: CalibrationFile;
  /** One per calibrated type, in noul, choice, score order. */
  reports: TypeFitReport[];
}

interface ResolvedOptions {
  coverage: number;
  heldOutFraction: number;
  seed: number;
  minPerType: number;
  minHeldOutPerType: number;
  bands: OptionBand[];
  minTemperature: number;
}

/** A choice question has at most 255 options. */
const MAX_BAND_OPTIONS = 255;

function checkBands(bands: readonly OptionBand[]): OptionBand[] {
  const sorted = [...bands].sort((a, b) => a.minOptions - b.minOptions);
  sorted.forEach((b, i) => {
    const { minOptions: lo, maxOptions: hi } = b;
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo < 2 || hi < lo || hi > 255) {
      throw inputError(`band ${lo}-${hi}: needs integers 2 <= min <= max <= ${MAX_BAND_OPTIONS}`);
    }
    const previous = sorted[i - 1];
    if (previous !== undefined && previous.maxOptions >= lo) {
      throw inputError(
        `bands ${previous.minOptions}-${previous.maxOptions} and ${lo}-${hi} overlap`,
      );
    }
  });
  return sorted.map(({ minOptions, maxOptions }) => ({ minOptions, maxOptions }));
}

function resolve(options: FitOptions): ResolvedOptions {
  const resolved = {
    coverage: options.coverage,
    heldOutFraction: options.heldOutFraction ?? DEFAULT_HELD_OUT_FRACTION,
    seed: options.seed ?? 0,
    minPerType: options.minPerType ?? DEFAULT_MIN_PER_TYPE,
    minHeldOutPerType: options.minHeldOutPerType ?? DEFAULT_MIN_HELD_OUT_PER_TYPE,
    bands: checkBands(options.bands ?? []),
    minTemperature: options.minTemperature ?? 0,
  };
  const { coverage, heldOutFraction, seed, minPerType, minHeldOutPerType } = resolved;
  if (!(coverage > 0 && coverage < 1))
    throw inputError(`coverage must be in (0, 1), got ${coverage}`);
  if (!(heldOutFraction > 0 && heldOutFraction < 1)) {
    throw inputError(`heldOutFraction must be in (0, 1), got ${heldOutFraction}`);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw inputError(`seed must be an unsigned 32-bit integer, got ${seed}`);
  }
  if (!(Number.isFinite(resolved.minTemperature) && resolved.minTemperature >= 0))
    throw inputError(`minTemperature must be a finite number ≥ 0, got ${resolved.minTemperature}`);
  for (const [name, v] of [
    ['minPerType', minPerType],
    ['minHeldOutPerType', minHeldOutPerType],
  ] as const) {
    if (!Number.isInteger(v) || v < 1)
      throw inputError(`${name} must be a positive integer, got ${v}`);
  }
  return resolved;
}

/** The fewest labelled answers a type needs, under the same split rule the fit uses. */
export function requiredAnswers(options: FitOptions): Requirement {
  const { coverage, heldOutFraction: h, minPerType, minHeldOutPerType: m } = resolve(options);
  const forCoverage = minimumForCoverage(coverage);
  const f = Math.max(minPerType, forCoverage);
  // Both parts grow monotonically with N, so the first N meeting both is the least; start the
  // scan from lower bounds of each (round(N·h) ≥ m needs N·h ≥ m − ½, likewise for the fit part).
  let n = Math.max(f + m, Math.ceil((m - 0.5) / h), Math.ceil((f - 0.5) / (1 - h))) - 1;
  while (n - heldOutCount(n, h) < f || heldOutCount(n, h) < m) n++;
  return { total: n, fit: f, heldOut: m, forCoverage };
}

function checkRecord(record: CalibrationRecord, k: number): void {
  const where = record.line !== undefined ? `line ${record.line}, ` : '';
  const name = `record ${k} (${where}question ${record.questionId})`;
  if (!QUESTION_TYPES.includes(record.type))
    throw inputError(`${name}: unknown type ${record.type}`);
  const { logits, optionIds, label } = record;
  if (logits.length < 2 || logits.length !== optionIds.length) {
    throw inputError(`${name}: ${logits.length} logits for ${optionIds.length} options`);
  }
  if (!logits.every(Number.isFinite)) throw inputError(`${name}: a logit is not finite`);
  if (!Number.isInteger(label) || label < 0 || label >= logits.length) {
    throw inputError(`${name}: label ${label} is not an option index`);
  }
}

function figuresOf(e: Evaluation): HeldOutFigures {
  const { n, ece, accuracy, nll, coverage, meanSetSize } = e;
  return { n, ece, accuracy, nll, coverage, meanSetSize };
}

function thresholdAt(records: readonly CalibrationRecord[], temperature: number, coverage: number) {
  const scores = records.map((r) => lacScore(scaledSoftmax(r.logits, temperature), r.label));
  return conformalThreshold(scores, coverage);
}

/** Per-type seeds differ so the three splits are not the same permutation; bands likewise. */
function typeSeed(seed: number, type: QuestionType, band = -1): number {
  const typed = (seed + Math.imul(QUESTION_TYPES.indexOf(type) + 1, 0x9e3779b9)) >>> 0;
  return band < 0 ? typed : (typed + Math.imul(band + 1, 0x85ebca6b)) >>> 0;
}

function fitGroup(records: CalibrationRecord[], o: ResolvedOptions, seed: number): GroupFitReport {
  const split = splitCopies(
    records.map((r) => r.copyKey),
    o.heldOutFraction,
    seed,
  );
  const fitPart = split.fit.map((i) => records[i] as CalibrationRecord);
  const heldPart = split.heldOut.map((i) => records[i] as CalibrationRecord);
  const fitted = fitTemperature(fitPart);
  const t =
    fitted.temperature < o.minTemperature
      ? { temperature: o.minTemperature, atBound: false }
      : fitted;
  const threshold = thresholdAt(fitPart, t.temperature, o.coverage);
  const thresholdBefore = thresholdAt(fitPart, 1, o.coverage);
  return {
    n: { fit: fitPart.length, heldOut: heldPart.length },
    temperature: t.temperature,
    temperatureAtBound: t.atBound,
    threshold,
    thresholdBefore,
    before: evaluate(heldPart, 1, thresholdBefore),
    after: evaluate(heldPart, t.temperature, threshold),
  };
}

function fitType(
  type: QuestionType,
  records: CalibrationRecord[],
  o: ResolvedOptions,
  need: number,
): TypeFitReport {
  const report: TypeFitReport = {
    type,
    ...fitGroup(records, o, typeSeed(o.seed, type)),
    bands: [],
    skippedBands: [],
  };
  o.bands.forEach((band, k) => {
    const inBand = records.filter(
      (r) => r.logits.length >= band.minOptions && r.logits.length <= band.maxOptions,
    );
    if (inBand.length === 0) return;
    if (inBand.length < need) report.skippedBands.push({ ...band, have: inBand.length, need });
    else report.bands.push({ ...band, ...fitGroup(inBand, o, typeSeed(o.seed, type, k)) });
  });
  return report;
}

function entryOf(r: GroupFitReport, coverage: number): Omit<TypeCalibration, 'bands'> {
  return {
    temperature: r.temperature,
    threshold: r.threshold,
    coverage,
    n: { ...r.n },
    heldOut: { before: figuresOf(r.before), after: figuresOf(r.after) },
  };
}

/**
 * Fits every question type present in `records`. Refuses (`calibration_too_few`, naming each
 * short type, what it has and what it needs) before fitting anything when any type is short.
 */
export function fitCalibration(
  records: readonly CalibrationRecord[],
  options: FitOptions,
): FitResult {
  const o = resolve(options);
  records.forEach(checkRecord);
  const need = requiredAnswers(o);
  const byType = new Map<QuestionType, CalibrationRecord[]>();
  for (const type of QUESTION_TYPES) {
    const ofType = records.filter((r) => r.type === type);
    if (ofType.length > 0) byType.set(type, ofType);
  }
  const why =
    `${need.fit} to fit (the floor of ${o.minPerType}; a ${o.coverage} conformal threshold alone ` +
    `needs ${need.forCoverage}) and ${need.heldOut} held out, with ${o.heldOutFraction} held out`;
  if (byType.size === 0) {
    throw new CalibrationError(
      'calibration_too_few',
      `No labelled answers to calibrate: each question type needs ${need.total} (${why})`,
      { need: need.total, shortfalls: [] },
    );
  }
  const shortfalls = [...byType]
    .filter(([, rs]) => rs.length < need.total)
    .map(([type, rs]) => ({ type, have: rs.length, need: need.total }));
  if (shortfalls.length > 0) {
    const list = shortfalls.map((s) => `${s.type} has ${s.have}, needs ${s.need}`).join('; ');
    throw new CalibrationError(
      'calibration_too_few',
      `Too few labelled answers to calibrate: ${list} (${why})`,
      { need: need.total, shortfalls },
    );
  }
  const reports = [...byType].map(([type, rs]) => fitType(type, rs, o, need.total));
  const types: CalibrationFile['types'] = {};
  for (const r of reports) {
    const bands: BandCalibration[] = r.bands.map((b) => ({
      minOptions: b.minOptions,
      maxOptions: b.maxOptions,
      ...entryOf(b, o.coverage),
    }));
    types[r.type] = { ...entryOf(r, o.coverage), ...(bands.length > 0 ? { bands } : {}) };
  }
  const calibration: CalibrationFile = {
    format: CALIBRATION_FORMAT,
    version: CALIBRATION_VERSION,
    method: { ...CALIBRATION_METHOD },
    split: { seed: o.seed, heldOutFraction: o.heldOutFraction },
    types,
  };
  return { calibration, reports };
}
