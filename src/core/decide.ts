/**
 * One decision, the same in the worker and in Node: validate the body against the package's
 * names and limits, encode it, run it (the caller's runtime), and build the answer exactly as
 * the contract says, with calibrated answers beside it when asked for.
 */
import { encodeRequest, type EncodedRequest, type TextTokenizer } from '../clef/prompt.js';
import {
  calibratedDecision,
  type CalibratedDecision,
  type CalibrationAsk,
  type CalibrationFile,
} from '../calibrate/index.js';
import { buildResponse, serializeResponse } from '../protocol/answers.js';
import type { ModelLimits, SystemOneResponse, ValidRequest } from '../protocol/types.js';
import { validateRequest } from '../protocol/validate.js';
import type { TrainingSummary } from '../wire/telemetry.js';
import type { PackageManifest } from './manifest.js';
import { untrainedParts, type UntrainedPart } from './untrained.js';

/** What a decision needs from a loaded package. */
export interface DecisionModel {
  /** Model names a request may use: the package's name, then its aliases. */
  readonly models: readonly string[];
  readonly limits: Partial<ModelLimits>;
  /** The longest input the package takes, in tokens. */
  readonly contextTokens: number;
  readonly tokenizer: TextTokenizer;
  /** The package's verified calibration file, or null when it ships none. */
  readonly calibration: CalibrationFile | null;
  /** What `clef-web train` trained the package on (manifest `training`), or null. */
  readonly training: TrainingSummary | null;
}

export function decisionModel(
  manifest: PackageManifest,
  tokenizer: TextTokenizer,
  calibration: CalibrationFile | null,
): DecisionModel {
  return {
    models: [manifest.model.name, ...manifest.model.aliases],
    limits: { ...manifest.limits, contextTokens: manifest.contextTokens },
    contextTokens: manifest.contextTokens,
    tokenizer,
    calibration,
    training: manifest.training ?? null,
  };
}

/** Refuses calibrated answers the package cannot give (no calibration file), before any work. */
export function checkCalibrationAsk(model: DecisionModel, ask: CalibrationAsk | null): void {
  if (ask !== null) calibratedDecision(model.calibration, [], [], ask);
}

export interface Decided<R> {
  request: ValidRequest;
  encoded: EncodedRequest;
  response: SystemOneResponse;
  /** The response as the wire carries it (Python-exact JSON). */
  json: string;
  /** One array per question (request order), one logit per option in encoded order. */
  logits: Float32Array[];
  /** Validation and encoding (ms). */
  encodeMs: number;
  /** What the runtime's run returned. */
  run: R;
  /** Only when asked for: beside the body, never inside it. */
  calibrated?: CalibratedDecision;
  /** What the request asks that the package was not trained on (untrained.ts); absent: nothing. */
  untrained?: UntrainedPart[];
}

/**
 * Validates (SystemOneError 422 on a bad body), encodes (max_tokens_exceeded past the
 * package's context), runs, and answers.
 */
export async function decide<R extends { logits: Float32Array[] }>(
  model: DecisionModel,
  body: unknown,
  run: (encoded: EncodedRequest) => Promise<R>,
  ask: CalibrationAsk | null = null,
): Promise<Decided<R>> {
  const t0 = performance.now();
  const request = validateRequest(body, { models: model.models, limits: model.limits });
  const encoded = encodeRequest(model.tokenizer, request, { maxTokens: model.contextTokens });
  const encodeMs = performance.now() - t0;
  const out = await run(encoded);
  const response = buildResponse(request, encoded, out.logits, request.model);
  const untrained = untrainedParts(model.training, request);
  const decided = {
    request,
    encoded,
    response,
    json: serializeResponse(request, response),
    logits: out.logits,
    encodeMs,
    run: out,
    ...(untrained.length > 0 ? { untrained } : {}),
  };
  if (ask === null) return decided;
  const calibrated = calibratedDecision(model.calibration, encoded.questions, out.logits, ask);
  return { ...decided, calibrated };
}
