/**
 * One calibration run from labelled-examples text: parse (every bad line numbered), run each
 * request through the caller's engine for its logits, fit. Shared by `clef-web calibrate` (the
 * Node engine) and the playground (the page's engine), so the two fit the same way.
 */
import { labelledRecords, parseLabelledExamples, type LabelledExample } from './examples.js';
import { fitCalibration, type FitOptions, type FitResult } from './fit.js';
import type { CalibrationRecord } from './types.js';
import type { JsonValue, ValidRequest } from '../protocol/types.js';

export interface CalibrateRunOptions extends FitOptions {
  /** The protocol's validateRequest, with the package's models and limits. */
  validateRequest(body: JsonValue): ValidRequest;
  /** The head's raw logits for a request: one row per question, request order, prompt order. */
  logits(request: JsonValue): Promise<ReadonlyArray<ArrayLike<number>>>;
  /** Called after each example's forward. */
  onProgress?(done: number, total: number): void;
}

export interface CalibrateRunResult extends FitResult {
  examples: number;
  records: CalibrationRecord[];
}

export async function calibrateFromExamples(
  text: string,
  options: CalibrateRunOptions,
): Promise<CalibrateRunResult> {
  const examples: LabelledExample[] = parseLabelledExamples(text, options);
  const records: CalibrationRecord[] = [];
  for (const [i, example] of examples.entries()) {
    records.push(...labelledRecords(example, await options.logits(example.request)));
    options.onProgress?.(i + 1, examples.length);
  }
  return { ...fitCalibration(records, options), examples: examples.length, records };
}
