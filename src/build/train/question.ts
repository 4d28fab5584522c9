/**
 * The question a plain file's labels answer: one System One choice question from a file
 * (`{"type": "choice", ...}` or `{"<id>": {...}}`), or a choice made from the labels. Its JSON
 * keeps the file's key order, since the model learns the question as written. Runtime-neutral.
 */
import { promptOptions } from '../../clef/prompt.js';
import { writeJson } from '../../core/record.js';
import { parseRequestJson } from '../../protocol/json.js';
import { isJsonObject, objectEntries } from '../../protocol/json-value.js';
import { CLEF_FLASH_LIMITS, type JsonValue, type ValidQuestion } from '../../protocol/types.js';
import { validateRequest } from '../../protocol/validate.js';
import { TrainError } from './errors.js';

function refuse(file: string, message: string, details: Record<string, unknown> = {}): never {
  throw new TrainError('examples_invalid', `${file}: ${message}`, details);
}

/** A choice question the rows' labels are options of. */
export interface PlainQuestion {
  id: string;
  /** The question's JSON text, key order as written. */
  json: string;
  /** Its option ids (prompt order). */
  options: string[];
  /** Made from the labels (no question file given). */
  generated: boolean;
}

/**
 * The question a file gives: one System One question (`{"type": "choice", ...}`, its id the
 * label column's name) or `{"<id>": {...}}` with one entry. Refused unless it is a valid choice.
 */
export function readQuestion(text: string, file: string, defaultId: string): PlainQuestion {
  let value: JsonValue;
  try {
    value = parseRequestJson(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    refuse(file, `not JSON: ${(e as Error).message}`);
  }
  if (!isJsonObject(value))
    refuse(file, 'must be a System One question, {"type": "choice", "criteria": {...}}');
  const entries = objectEntries(value);
  let id = defaultId;
  let question: JsonValue = value;
  if (!entries.some(([k]) => k === 'type')) {
    const only = entries.length === 1 ? entries[0] : undefined;
    if (only === undefined || !isJsonObject(only[1])) {
      refuse(
        file,
        'must be one System One question, {"type": "choice", ...}, or {"<question id>": {"type": "choice", ...}} with one entry',
      );
    }
    [id, question] = only;
  }
  let valid: ValidQuestion;
  try {
    valid = validateRequest(
      new Map<string, JsonValue>([
        ['model', 'question'],
        ['state', 'text'],
        ['questions', new Map([[id, question]])],
      ]),
    ).questions[0] as ValidQuestion;
  } catch (e) {
    refuse(file, `not a valid System One question: ${(e as Error).message}`);
  }
  if (valid.type !== 'choice') {
    refuse(
      file,
      `question ${JSON.stringify(id)} is ${valid.type}: train learns choice questions only; ask it as a choice (a yes/no gate is a choice with options "yes" and "no", a score a choice over its levels)`,
    );
  }
  return {
    id,
    json: writeJson(question),
    options: promptOptions(valid).map(([o]) => o),
    generated: false,
  };
}

/** A choice over the labels (sorted), no descriptions: what a file without a question gets. */
export function questionFromLabels(
  labels: readonly string[],
  id: string,
  file: string,
): PlainQuestion {
  const options = [...new Set(labels)].sort();
  const max = CLEF_FLASH_LIMITS.maxChoiceOptions;
  if (options.length > max) {
    refuse(
      file,
      `${options.length} different labels: a choice question takes at most ${max} options (is the label column right? The first labels: ${options
        .slice(0, 5)
        .map((o) => JSON.stringify(o))
        .join(', ')})`,
      { labels: options.length },
    );
  }
  if (options.length < 2) {
    refuse(
      file,
      `only one label (${JSON.stringify(options[0] ?? '')}): a choice needs at least 2 options`,
    );
  }
  const criteria = new Map<string, JsonValue>(options.map((o) => [o, null]));
  const json = writeJson(
    new Map<string, JsonValue>([
      ['type', 'choice'],
      ['criteria', criteria],
    ]),
  );
  return { id, json, options, generated: true };
}

/** Why a label is refused: it is none of the question's options. */
export function notAnOption(label: string, question: PlainQuestion): string {
  const listed =
    question.options.slice(0, 12).join(', ') + (question.options.length > 12 ? ', ...' : '');
  return `label ${JSON.stringify(label)} is not an option of question ${JSON.stringify(question.id)} (${listed})`;
}
