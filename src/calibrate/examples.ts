/**
 * The labelled-examples file (JSONL): one `{"request": <System One request>, "labels":
 * {"<question id>": <answer>}}` per line. Every bad line is reported with its number, not just
 * the first, so a user fixes a file in one pass. Labels become option indices in PROMPT order
 * (the order of the head's logits), through the prompt's own `promptOptions`.
 *
 * Lines are parsed losslessly (parseRequestJson: key order kept, numbers as written), so the
 * request sent to the engine is the one written. Validating the request is the caller's job
 * (it knows the served models and limits): it passes `validateRequest`.
 */
import { promptOptions } from '../clef/prompt.js';
import { parseRequestJson } from '../protocol/json.js';
import { isJsonObject, isPyNumber, objectEntries } from '../protocol/json-value.js';
import { renderValue } from '../protocol/render.js';
import type { JsonValue, ValidQuestion, ValidRequest } from '../protocol/types.js';
import { CalibrationError, inputError } from './errors.js';
import type { CalibrationRecord } from './types.js';

export interface LabelledExample {
  /** 1-based line number in the file. */
  line: number;
  /** The request as written (lossless JSON), to send to the engine. */
  request: JsonValue;
  /** The request after the caller's validation: question order and options explicit. */
  valid: ValidRequest;
  /** Question id → index of the right option in prompt order (labelled questions only). */
  labels: Map<string, number>;
}

export interface LineError {
  line: number;
  message: string;
}

export interface ParseExamplesOptions {
  /** The protocol's validateRequest (with the served models); throws on a bad request. */
  validateRequest(body: JsonValue): ValidRequest;
}

/** How many line errors the message lists; details.errors has them all. */
const LISTED_ERRORS = 50;
/** How many option ids a wrong choice label's message lists (a choice may have 255). */
const LISTED_OPTIONS = 12;

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The prompt-order index for one label, or why the label is wrong for its question. */
function labelIndex(question: ValidQuestion, label: JsonValue): number | string {
  const options = promptOptions(question).map(([id]) => id);
  // renderValue writes a top-level string bare (as the prompt does); quote it here.
  const shown = typeof label === 'string' ? JSON.stringify(label) : renderValue(label);
  switch (question.type) {
    case 'noul':
      if (typeof label !== 'boolean') return `noul wants true or false, got ${shown}`;
      return options.indexOf(String(label));
    case 'choice': {
      if (typeof label !== 'string') return `choice wants an option id string, got ${shown}`;
      const index = options.indexOf(label);
      if (index >= 0) return index;
      const listed = options.slice(0, LISTED_OPTIONS).join(', ');
      const more = options.length > LISTED_OPTIONS ? `, ... ${options.length} in all` : '';
      return `${shown} is not one of the options (${listed}${more})`;
    }
    case 'score': {
      const level = isPyNumber(label) && label.isInt ? Number(label.lexeme) : label;
      const range = `0..${options.length - 1}`;
      if (typeof level !== 'number' || !Number.isInteger(level)) {
        return `score wants an integer level index (${range}), got ${shown}`;
      }
      const index = options.indexOf(String(level));
      return index >= 0 ? index : `level ${shown} is out of range (${range})`;
    }
  }
}

/** One line's example, or the reasons it is not one. */
function parseLine(text: string, line: number, options: ParseExamplesOptions) {
  let value: JsonValue;
  try {
    value = parseRequestJson(text);
  } catch (error) {
    return [`not JSON: ${reasonOf(error)}`];
  }
  if (!isJsonObject(value)) return ['must be an object {"request": ..., "labels": ...}'];
  const fields = new Map(objectEntries(value));
  const problems: string[] = [];
  for (const key of fields.keys()) {
    if (key !== 'request' && key !== 'labels') problems.push(`unknown field "${key}"`);
  }
  const request = fields.get('request');
  const labels = fields.get('labels');
  if (request === undefined) problems.push('missing "request"');
  if (labels === undefined) problems.push('missing "labels"');
  else if (!isJsonObject(labels)) problems.push('"labels" must be an object');
  else if (objectEntries(labels).length === 0) problems.push('"labels" is empty');
  if (request === undefined) return problems;

  let valid: ValidRequest;
  try {
    valid = options.validateRequest(request);
  } catch (error) {
    return [...problems, `request: ${reasonOf(error)}`];
  }
  const byIndex = new Map<string, number>();
  if (labels !== undefined && isJsonObject(labels)) {
    for (const [id, label] of objectEntries(labels)) {
      const question = valid.questions.find((q) => q.id === id);
      if (question === undefined) {
        problems.push(`labels.${id}: the request has no question "${id}"`);
        continue;
      }
      const index = labelIndex(question, label);
      if (typeof index === 'string') problems.push(`labels.${id}: ${index}`);
      else byIndex.set(id, index);
    }
  }
  if (problems.length > 0) return problems;
  const example: LabelledExample = { line, request, valid, labels: byIndex };
  return example;
}

/**
 * Parses the whole file. Blank lines are skipped (a trailing newline is normal); CRLF and a
 * leading BOM are accepted. Throws `examples_invalid` listing every bad line, or when there is
 * no example at all.
 */
export function parseLabelledExamples(
  text: string,
  options: ParseExamplesOptions,
): LabelledExample[] {
  const examples: LabelledExample[] = [];
  const errors: LineError[] = [];
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  lines.forEach((raw, i) => {
    const lineText = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (lineText.trim() === '') return;
    const result = parseLine(lineText, i + 1, options);
    if (Array.isArray(result)) {
      for (const message of result) errors.push({ line: i + 1, message });
    } else examples.push(result);
  });
  if (errors.length > 0) {
    const badLines = [...new Set(errors.map((e) => e.line))];
    const listed = errors.slice(0, LISTED_ERRORS).map((e) => `  line ${e.line}: ${e.message}`);
    const more =
      errors.length > LISTED_ERRORS ? [`  ... and ${errors.length - LISTED_ERRORS} more`] : [];
    const message =
      `Labelled examples: ${badLines.length} bad line${badLines.length === 1 ? '' : 's'}:\n` +
      [...listed, ...more].join('\n');
    throw new CalibrationError('examples_invalid', message, { errors, lines: badLines });
  }
  if (examples.length === 0) {
    throw new CalibrationError('examples_invalid', 'Labelled examples: the file holds no example', {
      errors: [],
      lines: [],
    });
  }
  return examples;
}

/**
 * Punctuation at a word's edge: a trailing "!" or ".", a comma between clauses, brackets and
 * quotes round a word. Not inside a word ("3.5", "don't", "e-mail"), and not before a digit
 * ("-5", ".5"), where it changes what the line says.
 */
const EDGE_PUNCTUATION = /(?<=^|\s)\p{P}+(?!\p{N})|\p{P}+(?=\s|$)/gu;

/**
 * A text as a reader compares two lines: Unicode form, case, spacing and punctuation at a word's
 * edge aside ("Refund please!" and "refund, please" are one text). A text that is nothing but
 * punctuation keeps it.
 */
export function textKey(text: string): string {
  const spaced = text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  const bare = spaced.replace(EDGE_PUNCTUATION, ' ').replace(/\s+/g, ' ').trim();
  return bare === '' ? spaced : bare;
}

/**
 * A request's state as a reader compares two lines (textKey). Lines with the same key are
 * copies, judged together wherever a file is split (a calibration's held-out part here;
 * `clef-web train`'s folds, src/build/train/repeats.ts): their features differ by a punctuation
 * mark at most, so a model fitted on one has as good as seen the other.
 */
export function stateKey(example: LabelledExample): string {
  return textKey(renderValue(example.valid.state));
}

/**
 * The example's labelled questions as records, given the engine's logits for its request
 * (`DecisionWire.logits`: one row per question in request order, options in prompt order).
 */
export function labelledRecords(
  example: LabelledExample,
  logits: ReadonlyArray<ArrayLike<number>>,
): CalibrationRecord[] {
  const { questions } = example.valid;
  if (logits.length !== questions.length) {
    throw inputError(
      `line ${example.line}: ${logits.length} logit rows for ${questions.length} questions`,
      { line: example.line },
    );
  }
  const records: CalibrationRecord[] = [];
  questions.forEach((question, k) => {
    const label = example.labels.get(question.id);
    if (label === undefined) return;
    const optionIds = promptOptions(question).map(([id]) => id);
    const row = Array.from(logits[k] as ArrayLike<number>);
    if (row.length !== optionIds.length || !row.every(Number.isFinite)) {
      throw inputError(
        `line ${example.line}: question ${question.id} has ${row.length} logits ` +
          `(finite: ${row.every(Number.isFinite)}) for ${optionIds.length} options`,
        { line: example.line, question: question.id },
      );
    }
    records.push({
      questionId: question.id,
      type: question.type,
      optionIds,
      logits: row,
      label,
      line: example.line,
      copyKey: stateKey(example),
    });
  });
  return records;
}
