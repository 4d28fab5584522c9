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
import { heldOutCount, splitIndices } from './prng.js';
import { scaledSoftmax } from './softmax.js';
import { fitTemperature } from './temperature.js';
import {
  CALIBRATION_FORMAT,
  CALIBRATION_METHOD,
  CALIBRATION_VERSION,
  QUESTION_TYPES,
  type CalibrationFile,
  type CalibrationRecord,
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
}

export const DEFAULT_HELD_OUT_FRACTION = 0.25;
export const DEFAULT_MIN_PER_TYPE = 20;
export const DEFAULT_MIN_HELD_OUT_PER_TYPE = 10;

export interface Requirement {
  /** Labelled answers a type needs in all. */
  total: number;
  /** Of which fitted on: max(minPerType, minimumForCoverage(coverage)). */
  fit: number;
  heldOut: number;
  /** What the conformal quantile alone needs at this coverage. */
  forCoverage: number;
}

export interface TypeFitReport {
  type: QuestionType;
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
}

function resolve(options: FitOptions): ResolvedOptions {
  const resolved = {
    coverage: options.coverage,
    heldOutFraction: options.heldOutFraction ?? DEFAULT_HELD_OUT_FRACTION,
    seed: options.seed ?? 0,
    minPerType: options.minPerType ?? DEFAULT_MIN_PER_TYPE,
    minHeldOutPerType: options.minHeldOutPerType ?? DEFAULT_MIN_HELD_OUT_PER_TYPE,
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

/** Per-type seeds differ so the three splits are not the same permutation. */
function typeSeed(seed: number, type: QuestionType): number {
  return (seed + Math.imul(QUESTION_TYPES.indexOf(type) + 1, 0x9e3779b9)) >>> 0;
}

function fitType(
  type: QuestionType,
  records: CalibrationRecord[],
  o: ResolvedOptions,
): TypeFitReport {
  const split = splitIndices(records.length, o.heldOutFraction, typeSeed(o.seed, type));
  const fitPart = split.fit.map((i) => records[i] as CalibrationRecord);
  const heldPart = split.heldOut.map((i) => records[i] as CalibrationRecord);
  const t = fitTemperature(fitPart);
  const threshold = thresholdAt(fitPart, t.temperature, o.coverage);
  const thresholdBefore = thresholdAt(fitPart, 1, o.coverage);
  return {
    type,
    n: { fit: fitPart.length, heldOut: heldPart.length },
    temperature: t.temperature,
    temperatureAtBound: t.atBound,
    threshold,
    thresholdBefore,
    before: evaluate(heldPart, 1, thresholdBefore),
    after: evaluate(heldPart, t.temperature, threshold),
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
  const reports = [...byType].map(([type, rs]) => fitType(type, rs, o));
  const types: CalibrationFile['types'] = {};
  for (const r of reports) {
    types[r.type] = {
      temperature: r.temperature,
      threshold: r.threshold,
      coverage: o.coverage,
      n: { ...r.n },
      heldOut: { before: figuresOf(r.before), after: figuresOf(r.after) },
    };
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
