/**
 * Decision records (docs/records.md): one JSON object per decision, enough to reproduce it later
 * — which package answered (model name, manifest SHA-256), which calibration and thresholds were
 * in force, what was asked and what was answered. Every surface that records (the page's
 * createClef, `<clef-decide>`, the playground, `clef-web serve` and `decide`) builds its records
 * with `buildRecord` below, and `clef-web replay` reads them with `parseRecord`: pure code, no
 * runtime, no storage. Where a record goes is the surface's business.
 */
import type { CalibratedDecision } from '../calibrate/index.js';
import { parseRequestJson } from '../protocol/json.js';
import { isPyNumber } from '../protocol/json-value.js';
import type { SystemOneResponse } from '../protocol/types.js';

export const RECORD_FORMAT = 'clef-web.decision-record';
export const RECORD_VERSION = 1;

/**
 * clef-web's version (package.json's; test/unit/node/record/records.test.ts keeps the two equal).
 */
export const ENGINE_VERSION = '0.1.0';

/** Which surface made the decision. */
export type RecordSurface = 'page' | 'element' | 'playground' | 'serve' | 'decide' | 'teacher';

export interface RecordTimings {
  /** From the request's arrival to its answer (ms). */
  total_ms: number;
  encode_ms?: number;
  backbone_ms?: number;
  head_ms?: number;
  prefix_hit?: boolean;
}

export interface DecisionRecord {
  format: typeof RECORD_FORMAT;
  version: typeof RECORD_VERSION;
  /** When the answer was ready, ISO 8601 UTC. */
  time: string;
  surface: RecordSurface;
  package: {
    /** The package's model name (manifest model.name). */
    model: string;
    /**
     * SHA-256 of manifest.json's bytes, which pins every file's SHA-256 (the weights too); null
     * for a remote server's answer (`clef-web train --teacher`), which does not say.
     */
    manifest_sha256: string | null;
    /** SHA-256 of the package's calibration file, or null when it ships none. */
    calibration_sha256: string | null;
    /** The server that answered, for a remote answer (surface `teacher`). */
    url?: string;
  };
  engine: {
    name: 'clef-web';
    version: string;
    /** 'webgpu', 'wasm' or 'js' in the page; 'cpu' (onnxruntime-node) or 'js' in Node. */
    device: string;
    /** The runtime: 'onnxruntime-web/wasm', 'onnxruntime-node', 'clef-web js' ... */
    runtime: string;
  };
  /**
   * Calibrated answers asked for: the thresholds in force (`abstain_below` as asked, the
   * coverage each calibrated question's set was fitted for); null when not asked.
   */
  thresholds: { abstain_below: number | null; coverage: number[] } | null;
  /**
   * The request body as received (a body parsed from text keeps its key order and number
   * lexemes in the file); absent when only its hash is kept (requestSha256Only).
   */
  request?: unknown;
  /** SHA-256 of the request's JSON text as the record writes it (`writeJson`), UTF-8. */
  request_sha256: string;
  response: SystemOneResponse;
  /** Present only when calibrated answers were asked for. */
  calibrated?: CalibratedDecision;
  timings: RecordTimings;
}

/** What a surface knows about the package and engine that answered (fixed per loaded engine). */
export interface RecordSource {
  surface: RecordSurface;
  model: string;
  manifestSha256: string | null;
  calibrationSha256: string | null;
  /** A remote server's URL (its answers name no package). */
  url?: string;
  device: string;
  runtime: string;
}

export interface RecordInput {
  source: RecordSource;
  /** The request body as received (a parsed JSON value). */
  request: unknown;
  /** SHA-256 (hex) of writeJson(request): `requestSha256` computes it. */
  requestSha256: string;
  /** Keep only the request's hash, not the request (privacy). */
  requestSha256Only: boolean;
  response: SystemOneResponse;
  /** The abstainBelow asked for, or null; undefined: calibrated answers were not asked for. */
  abstainBelow?: number | null;
  calibrated?: CalibratedDecision;
  timings: RecordTimings;
  time: Date;
}

/** The record of one decision: the one function every surface builds records with. */
export function buildRecord(input: RecordInput): DecisionRecord {
  const { source, calibrated } = input;
  const asked = input.abstainBelow !== undefined || calibrated !== undefined;
  const coverage = calibrated
    ? [...new Set(calibrated.questions.flatMap((q) => ('coverage' in q ? [q.coverage] : [])))].sort(
        (a, b) => a - b,
      )
    : [];
  return {
    format: RECORD_FORMAT,
    version: RECORD_VERSION,
    time: input.time.toISOString(),
    surface: source.surface,
    package: {
      model: source.model,
      manifest_sha256: source.manifestSha256,
      calibration_sha256: source.calibrationSha256,
      ...(source.url === undefined ? {} : { url: source.url }),
    },
    engine: {
      name: 'clef-web',
      version: ENGINE_VERSION,
      device: source.device,
      runtime: source.runtime,
    },
    thresholds: asked
      ? { abstain_below: input.abstainBelow ?? calibrated?.abstainBelow ?? null, coverage }
      : null,
    ...(input.requestSha256Only ? {} : { request: input.request }),
    request_sha256: input.requestSha256,
    response: input.response,
    ...(calibrated ? { calibrated } : {}),
    timings: input.timings,
  };
}

/**
 * Compact JSON text, losslessly for bodies parsed from text: a `Map` in its written key order,
 * a `PyNumber` as its lexeme (JSON.stringify would write `{}` for both).
 */
export function writeJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${value} is not a JSON number`);
    return JSON.stringify(value);
  }
  if (isPyNumber(value)) return value.lexeme;
  if (Array.isArray(value)) return `[${value.map((v) => writeJson(v ?? null)).join(',')}]`;
  if (value instanceof Map) {
    const parts = [...value].map(([k, v]) => `${JSON.stringify(String(k))}:${writeJson(v)}`);
    return `{${parts.join(',')}}`;
  }
  if (typeof value === 'object') {
    const parts = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`);
    return `{${parts.join(',')}}`;
  }
  throw new TypeError(`a ${typeof value} is not JSON`);
}

/** One JSONL line (no newline): the record's JSON text. */
export function recordLine(record: DecisionRecord): string {
  return writeJson(record);
}

/** A decision as every engine reports it: the response, its timings, the calibrated part. */
export interface RecordedDecision {
  response: SystemOneResponse;
  calibrated?: CalibratedDecision;
  timings: {
    totalMs: number;
    encodeMs: number;
    backboneMs: number;
    headMs: number;
    prefixHit: boolean;
  };
}

/**
 * The record of `decision`, the answer to `request` (buildRecord with the request's hash and the
 * timings filled in): what the page's and Node's recorders both call.
 */
export async function recordDecision(
  source: RecordSource,
  request: unknown,
  decision: RecordedDecision,
  ask: { abstainBelow?: number } | null,
  requestSha256Only: boolean,
): Promise<DecisionRecord> {
  const t = decision.timings;
  return buildRecord({
    source,
    request,
    requestSha256: await requestSha256(request),
    requestSha256Only,
    response: decision.response,
    ...(ask ? { abstainBelow: ask.abstainBelow ?? null } : {}),
    ...(decision.calibrated ? { calibrated: decision.calibrated } : {}),
    timings: {
      total_ms: t.totalMs,
      encode_ms: t.encodeMs,
      backbone_ms: t.backboneMs,
      head_ms: t.headMs,
      prefix_hit: t.prefixHit,
    },
    time: new Date(),
  });
}

/** SHA-256 (hex) of writeJson(request) as UTF-8, by Web Crypto (browsers and Node). */
export async function requestSha256(request: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(writeJson(request));
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** A line that is not a record this version reads; `reason` says why. */
export class RecordFormatError extends Error {
  override get name(): string {
    return 'RecordFormatError';
  }
}

const SHA256 = /^[0-9a-f]{64}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses one JSONL line into a record, checking what replay relies on; throws
 * RecordFormatError naming the first problem.
 */
export function parseRecord(line: string): DecisionRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    throw new RecordFormatError(`not JSON (${(e as Error).message})`);
  }
  if (!isObject(value)) throw new RecordFormatError('not a JSON object');
  if (value.format !== RECORD_FORMAT) {
    throw new RecordFormatError(`format is ${JSON.stringify(value.format)}, not ${RECORD_FORMAT}`);
  }
  if (value.version !== RECORD_VERSION) {
    throw new RecordFormatError(
      `version ${JSON.stringify(value.version)}: this clef-web reads version ${RECORD_VERSION}`,
    );
  }
  const pkg = value.package;
  if (!isObject(pkg) || typeof pkg.model !== 'string') {
    throw new RecordFormatError('package.model is missing');
  }
  const manifest = pkg.manifest_sha256;
  const remote = value.surface === 'teacher' && manifest === null;
  if (!remote && !(typeof manifest === 'string' && SHA256.test(manifest))) {
    throw new RecordFormatError('package.manifest_sha256 is not a SHA-256');
  }
  const cal = pkg.calibration_sha256;
  if (cal !== null && !(typeof cal === 'string' && SHA256.test(cal))) {
    throw new RecordFormatError('package.calibration_sha256 is neither null nor a SHA-256');
  }
  if (typeof value.request_sha256 !== 'string' || !SHA256.test(value.request_sha256)) {
    throw new RecordFormatError('request_sha256 is not a SHA-256');
  }
  const response = value.response;
  if (!isObject(response) || !isObject(response.answers)) {
    throw new RecordFormatError('response.answers is missing');
  }
  const t = value.thresholds;
  if (
    t !== null &&
    !(isObject(t) && (t.abstain_below === null || typeof t.abstain_below === 'number'))
  ) {
    throw new RecordFormatError('thresholds is neither null nor { abstain_below, coverage }');
  }
  if ('request' in value) {
    // The request as written: key order and number lexemes, as the engine first saw it.
    const lossless = parseRequestJson(line);
    if (lossless instanceof Map) value.request = lossless.get('request');
  }
  return value as unknown as DecisionRecord;
}
