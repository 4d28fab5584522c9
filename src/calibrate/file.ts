/**
 * The calibration file: JSON, written by the CLI next to the package (and listed in its manifest
 * with a SHA-256), read by the engine. The parser is strict — unknown keys, a wrong format or
 * version, and out-of-range numbers are all refused, every problem named with its path — because
 * a silently misread threshold would serve prediction sets at a coverage nobody fitted.
 */
import { minimumForCoverage } from './conformal.js';
import { CalibrationError } from './errors.js';
import {
  CALIBRATION_FORMAT,
  CALIBRATION_METHOD,
  CALIBRATION_VERSION,
  MAX_TEMPERATURE,
  MIN_TEMPERATURE,
  QUESTION_TYPES,
  type BandCalibration,
  type CalibrationFile,
  type HeldOutFigures,
  type TypeCalibration,
} from './types.js';

type Issues = string[];
type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object at `path` with exactly `keys` (all required), or undefined after noting why not. */
function exactObject(v: unknown, path: string, keys: readonly string[], issues: Issues) {
  if (!isObj(v)) {
    issues.push(`${path}: must be an object`);
    return undefined;
  }
  for (const key of Object.keys(v)) {
    if (!keys.includes(key)) issues.push(`${path}.${key}: unknown field`);
  }
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(v, key)) issues.push(`${path}.${key}: missing`);
  }
  return v;
}

interface Range {
  min: number;
  max: number;
  /** Exclusive bounds (coverage lies strictly between 0 and 1). */
  open?: boolean;
  integer?: boolean;
}

function numberIn(v: unknown, path: string, range: Range, issues: Issues): number {
  const { min, max, open = false, integer = false } = range;
  const ok =
    typeof v === 'number' &&
    Number.isFinite(v) &&
    (open ? v > min && v < max : v >= min && v <= max) &&
    (!integer || Number.isInteger(v));
  // Missing (undefined) was reported by exactObject, or the parent is not an object at all.
  if (!ok && v !== undefined) {
    const interval = open ? `(${min}, ${max})` : `[${min}, ${max}]`;
    const kind = integer ? 'an integer' : 'a number';
    issues.push(`${path}: must be ${kind} in ${interval} (got ${JSON.stringify(v) ?? String(v)})`);
  }
  return typeof v === 'number' ? v : NaN;
}

const FIGURE_KEYS = ['n', 'ece', 'accuracy', 'nll', 'coverage', 'meanSetSize'] as const;
/** A choice question has at most 255 options: no set is larger. */
const MAX_OPTIONS = 255;

function figures(v: unknown, path: string, heldOut: number, issues: Issues): HeldOutFigures {
  const o = exactObject(v, path, FIGURE_KEYS, issues) ?? {};
  const n = numberIn(
    o.n,
    `${path}.n`,
    { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true },
    issues,
  );
  if (Number.isInteger(n) && n !== heldOut)
    issues.push(`${path}.n: ${n} is not n.heldOut (${heldOut})`);
  return {
    n,
    ece: numberIn(o.ece, `${path}.ece`, { min: 0, max: 1 }, issues),
    accuracy: numberIn(o.accuracy, `${path}.accuracy`, { min: 0, max: 1 }, issues),
    nll: numberIn(o.nll, `${path}.nll`, { min: 0, max: Number.MAX_VALUE }, issues),
    coverage: numberIn(o.coverage, `${path}.coverage`, { min: 0, max: 1 }, issues),
    meanSetSize: numberIn(
      o.meanSetSize,
      `${path}.meanSetSize`,
      { min: 1, max: MAX_OPTIONS },
      issues,
    ),
  };
}

const ENTRY_KEYS = ['temperature', 'threshold', 'coverage', 'n', 'heldOut'] as const;
const BAND_KEYS = ['minOptions', 'maxOptions', ...ENTRY_KEYS] as const;
const COUNT = { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true };
const OPTIONS = { min: 2, max: MAX_OPTIONS, integer: true };

/** `bands`, optional: an array of disjoint, ascending option-count bands. */
function bandsOf(v: unknown, path: string, issues: Issues): BandCalibration[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0) {
    issues.push(`${path}: must be a non-empty array`);
    return undefined;
  }
  const bands = v.map((item, i): BandCalibration => {
    const at = `${path}[${i}]`;
    const o = exactObject(item, at, BAND_KEYS, issues) ?? {};
    const minOptions = numberIn(o.minOptions, `${at}.minOptions`, OPTIONS, issues);
    const maxOptions = numberIn(o.maxOptions, `${at}.maxOptions`, OPTIONS, issues);
    if (minOptions > maxOptions) issues.push(`${at}: minOptions exceeds maxOptions`);
    return { minOptions, maxOptions, ...entryCalibration(o, at, issues) };
  });
  bands.forEach((b, i) => {
    const previous = bands[i - 1];
    if (previous !== undefined && !(b.minOptions > previous.maxOptions)) {
      issues.push(`${path}[${i}]: overlaps or precedes the band before it`);
    }
  });
  return bands;
}

function typeCalibration(v: unknown, path: string, issues: Issues): TypeCalibration {
  const o = exactObject(v, path, [...ENTRY_KEYS, 'bands'], issues) ?? {};
  const { bands: rawBands, ...rest } = o;
  // `bands` is optional: exactObject reported it missing, which it may be.
  if (rawBands === undefined) {
    const at = issues.indexOf(`${path}.bands: missing`);
    if (at >= 0) issues.splice(at, 1);
  }
  const entry = entryCalibration(rest, path, issues);
  const bands = bandsOf(rawBands, `${path}.bands`, issues);
  return bands === undefined ? entry : { ...entry, bands };
}

/** The fields of one entry (a type's or a band's), whose keys the caller has checked. */
function entryCalibration(o: Obj, path: string, issues: Issues): Omit<TypeCalibration, 'bands'> {
  const temperature = numberIn(
    o.temperature,
    `${path}.temperature`,
    { min: MIN_TEMPERATURE, max: MAX_TEMPERATURE },
    issues,
  );
  const threshold = numberIn(o.threshold, `${path}.threshold`, { min: 0, max: 1 }, issues);
  const coverage = numberIn(o.coverage, `${path}.coverage`, { min: 0, max: 1, open: true }, issues);
  const n = exactObject(o.n, `${path}.n`, ['fit', 'heldOut'], issues) ?? {};
  const fit = numberIn(n.fit, `${path}.n.fit`, COUNT, issues);
  const heldOut = numberIn(n.heldOut, `${path}.n.heldOut`, COUNT, issues);
  // A fit below this count could not have produced a threshold: the coverage was edited.
  if (coverage > 0 && coverage < 1 && Number.isInteger(fit) && fit < minimumForCoverage(coverage)) {
    issues.push(
      `${path}.n.fit: ${fit} answers cannot give coverage ${coverage} (needs ${minimumForCoverage(coverage)})`,
    );
  }
  const h = exactObject(o.heldOut, `${path}.heldOut`, ['before', 'after'], issues) ?? {};
  return {
    temperature,
    threshold,
    coverage,
    n: { fit, heldOut },
    heldOut: {
      before: figures(h.before, `${path}.heldOut.before`, heldOut, issues),
      after: figures(h.after, `${path}.heldOut.after`, heldOut, issues),
    },
  };
}

/** Checks a parsed value against the format; throws `calibration_invalid` naming every issue. */
export function validateCalibration(value: unknown): CalibrationFile {
  const issues: Issues = [];
  const root =
    exactObject(value, 'calibration', ['format', 'version', 'method', 'split', 'types'], issues) ??
    {};
  if (root.format !== CALIBRATION_FORMAT) {
    issues.push(`calibration.format: must be "${CALIBRATION_FORMAT}"`);
  }
  if (root.version !== CALIBRATION_VERSION) {
    issues.push(
      `calibration.version: must be ${CALIBRATION_VERSION} (got ${JSON.stringify(root.version)})`,
    );
  }
  const method = exactObject(
    root.method,
    'calibration.method',
    Object.keys(CALIBRATION_METHOD),
    issues,
  );
  if (method !== undefined) {
    for (const [key, expected] of Object.entries(CALIBRATION_METHOD)) {
      if (key in method && method[key] !== expected) {
        issues.push(`calibration.method.${key}: must be ${JSON.stringify(expected)}`);
      }
    }
  }
  const split =
    exactObject(root.split, 'calibration.split', ['seed', 'heldOutFraction'], issues) ?? {};
  const seed = numberIn(
    split.seed,
    'calibration.split.seed',
    { min: 0, max: 0xffffffff, integer: true },
    issues,
  );
  const heldOutFraction = numberIn(
    split.heldOutFraction,
    'calibration.split.heldOutFraction',
    { min: 0, max: 1, open: true },
    issues,
  );
  const types: CalibrationFile['types'] = {};
  if (!isObj(root.types)) issues.push('calibration.types: must be an object');
  else {
    const keys = Object.keys(root.types);
    if (keys.length === 0)
      issues.push('calibration.types: must calibrate at least one question type');
    for (const key of keys) {
      const type = QUESTION_TYPES.find((t) => t === key);
      if (type === undefined) issues.push(`calibration.types.${key}: not a question type`);
      else types[type] = typeCalibration(root.types[key], `calibration.types.${key}`, issues);
    }
  }
  if (issues.length > 0) {
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new CalibrationError(
      'calibration_invalid',
      `Invalid calibration file: ${issues[0]}${more}`,
      {
        issues,
      },
    );
  }
  return {
    format: CALIBRATION_FORMAT,
    version: CALIBRATION_VERSION,
    method: { ...CALIBRATION_METHOD },
    split: { seed, heldOutFraction },
    types,
  };
}

/** Parses and validates a calibration file's text. */
export function parseCalibration(text: string): CalibrationFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CalibrationError(
      'calibration_invalid',
      `Invalid calibration file: not JSON (${reason})`,
      {
        issues: [`not JSON: ${reason}`],
      },
    );
  }
  return validateCalibration(value);
}

/** The file's text: 2-space JSON, types in noul, choice, score order, a final newline. */
export function serializeCalibration(calibration: CalibrationFile): string {
  const checked = validateCalibration(calibration);
  const types: CalibrationFile['types'] = {};
  for (const type of QUESTION_TYPES) {
    const entry = checked.types[type];
    if (entry !== undefined) types[type] = entry;
  }
  return `${JSON.stringify({ ...checked, types }, null, 2)}\n`;
}
