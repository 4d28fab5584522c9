/**
 * Request validation for the System One call (docs/system-one.md, "Request body" and
 * "Errors"). Takes either a plain JS object (a page script's call) or the lossless parser's
 * output (objects as `Map`s, numbers as `PyNumber`s) and returns the request with its question
 * order made explicit.
 *
 * Order of checks: a body that is not an object is a 400; then every schema violation is
 * collected and thrown as one 422 (issue strings: ./validate-types.ts); only a request that
 * passes the schema is checked against the served models (400 `Unknown model: x`).
 */
import { notJsonBodyError, unknownModelError, validationError } from './errors.js';
import { isPyNumber } from './json-value.js';
import {
  CLEF_FLASH_LIMITS,
  type Description,
  type JsonValue,
  type ModelLimits,
  type QuestionType,
  type ValidQuestion,
  type ValidRequest,
  type ValidationIssue,
} from './types.js';
import {
  issue,
  QUESTION_ID_MAX_LENGTH,
  QUESTION_ID_PATTERN,
  QUESTION_ID_PATTERN_TEXT,
  type IssueLoc,
} from './validate-types.js';

export interface ValidateOptions {
  /** Overrides of the Clef-flash limits (questions, options, levels). */
  limits?: Partial<ModelLimits>;
  /** The served model names and aliases; when given, `model` must be one of them. */
  models?: readonly string[];
}

const TOP_FIELDS: readonly string[] = ['model', 'state', 'questions'];
const QUESTION_FIELDS: readonly string[] = ['type', 'instructions', 'criteria'];
const QUESTION_TYPES: readonly string[] = ['noul', 'choice', 'score'];
const NOUL_CRITERIA_KEYS: readonly string[] = ['true', 'false'];
/** RFC 8259's number grammar: what a PyNumber's lexeme must be. */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

type Issues = ValidationIssue[];
/** An object's entries; a JS `Map` may have non-string keys, which the callers report. */
type Entries = Array<[unknown, unknown]>;

/**
 * A plain object: its prototype is null or some realm's Object.prototype. Class instances
 * (Date, typed arrays, ...) are not: `JSON.stringify` would write them in ways no one meant.
 */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || isPyNumber(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** A JSON object in either form. */
function isObjectValue(v: unknown): v is Map<unknown, unknown> | Record<string, unknown> {
  return v instanceof Map || isPlainObject(v);
}

/**
 * Entries in the object's order: written order for a Map; for a plain object JS's own order,
 * which puts integer-like keys ("2", "10") first in ascending order, then the rest as written.
 * That reordering is why the HTTP route parses bodies to Maps: question order reaches the model.
 */
function entriesOf(v: Map<unknown, unknown> | Record<string, unknown>): Entries {
  return v instanceof Map ? [...v.entries()] : Object.entries(v);
}

function isValidPyNumber(v: unknown): boolean {
  if (!isPyNumber(v) || typeof v.lexeme !== 'string' || !JSON_NUMBER.test(v.lexeme)) return false;
  return v.isInt === !/[.eE]/.test(v.lexeme);
}

/** Why a value is not JSON at its own level (nested values aside), or undefined if it is. */
function notJsonReason(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      return Number.isFinite(v) ? undefined : v > 0 ? 'Infinity' : '-Infinity';
    case 'undefined':
      return 'undefined';
    case 'function':
      return 'a function';
    case 'bigint':
      return 'a bigint';
    case 'symbol':
      return 'a symbol';
  }
  if (v === null || Array.isArray(v) || isObjectValue(v)) return undefined;
  if (isPyNumber(v)) return isValidPyNumber(v) ? undefined : 'a malformed number';
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name} object` : 'a non-plain object';
}

/**
 * Pushes a json_invalid issue for every non-JSON value inside `v` (itself included). `open`
 * holds the containers on the current path, to catch cycles. Returns whether `v` is JSON.
 */
function checkJson(v: unknown, loc: IssueLoc, issues: Issues, open = new Set<object>()): boolean {
  const reason = notJsonReason(v);
  if (reason !== undefined) {
    issues.push(issue.notJson(loc, reason));
    return false;
  }
  if (typeof v !== 'object' || v === null || isPyNumber(v)) return true;
  if (open.has(v)) {
    issues.push(issue.notJson(loc, 'a circular reference'));
    return false;
  }
  open.add(v);
  let ok = true;
  if (Array.isArray(v)) {
    // An index loop, not forEach: holes must be seen (they read as undefined).
    for (let i = 0; i < v.length; i++) ok = checkJson(v[i], [...loc, i], issues, open) && ok;
  } else {
    for (const [key, value] of entriesOf(v as Map<unknown, unknown> | Record<string, unknown>)) {
      if (typeof key !== 'string') {
        issues.push(issue.notJson([...loc, String(key)], 'a non-string object key'));
        ok = false;
      }
      ok = checkJson(value, [...loc, String(key)], issues, open) && ok;
    }
  }
  open.delete(v);
  return ok;
}

/** instructions and descriptions: a string, an object, an array or null. */
function checkDescription(v: unknown, loc: IssueLoc, issues: Issues): void {
  if (
    notJsonReason(v) === undefined &&
    (typeof v === 'number' || typeof v === 'boolean' || isPyNumber(v))
  ) {
    issues.push(issue.descriptionType(loc));
    return;
  }
  checkJson(v, loc, issues);
}

function checkState(v: unknown, loc: IssueLoc, issues: Issues): void {
  if (
    notJsonReason(v) === undefined &&
    (typeof v === 'number' || typeof v === 'boolean' || isPyNumber(v) || v === null)
  ) {
    issues.push(issue.stateType(loc));
    return;
  }
  checkJson(v, loc, issues);
}

/** The object at `loc`, or undefined after reporting why it is not one. */
function expectObject(v: unknown, loc: IssueLoc, issues: Issues): Entries | undefined {
  const reason = notJsonReason(v);
  if (reason !== undefined) issues.push(issue.notJson(loc, reason));
  else if (!isObjectValue(v)) issues.push(issue.dictType(loc));
  else return entriesOf(v);
  return undefined;
}

function checkCount(
  loc: IssueLoc,
  container: 'Dictionary' | 'List',
  count: number,
  min: number,
  max: number,
  issues: Issues,
): void {
  if (count < min) issues.push(issue.tooShort(loc, container, min, count));
  else if (count > max) issues.push(issue.tooLong(loc, container, max, count));
}

/** A question id's first failing constraint, in pydantic's order: length, then pattern. */
function checkQuestionId(id: string, loc: IssueLoc, issues: Issues): void {
  // Python counts code points, not UTF-16 units.
  const length = [...id].length;
  if (length < 1) issues.push(issue.stringTooShort(loc, 1));
  else if (length > QUESTION_ID_MAX_LENGTH)
    issues.push(issue.stringTooLong(loc, QUESTION_ID_MAX_LENGTH));
  else if (!QUESTION_ID_PATTERN.test(id))
    issues.push(issue.patternMismatch(loc, QUESTION_ID_PATTERN_TEXT));
}

function noulCriteria(v: unknown, loc: IssueLoc, issues: Issues): Array<[string, Description]> {
  if (v === null) return [];
  const entries = expectObject(v, loc, issues);
  if (entries === undefined) return [];
  const kept: Array<[string, Description]> = [];
  const extras: IssueLoc[] = [];
  for (const [key, value] of entries) {
    if (typeof key === 'string' && NOUL_CRITERIA_KEYS.includes(key)) {
      checkDescription(value, [...loc, key], issues);
      kept.push([key, value as Description]);
    } else extras.push([...loc, String(key)]);
  }
  for (const extra of extras) issues.push(issue.extraForbidden(extra));
  return kept;
}

function choiceCriteria(
  v: unknown,
  loc: IssueLoc,
  limits: ModelLimits,
  issues: Issues,
): Array<[string, Description]> {
  const entries = expectObject(v, loc, issues);
  if (entries === undefined) return [];
  checkCount(
    loc,
    'Dictionary',
    entries.length,
    limits.minChoiceOptions,
    limits.maxChoiceOptions,
    issues,
  );
  // Option names: any string, "" included; system-one.md sets no rule on them.
  for (const [key, value] of entries) {
    if (typeof key !== 'string') issues.push(issue.stringType([...loc, String(key)]));
    checkDescription(value, [...loc, String(key)], issues);
  }
  return entries.map(([key, value]) => [String(key), value as Description]);
}

function scoreCriteria(
  v: unknown,
  loc: IssueLoc,
  limits: ModelLimits,
  issues: Issues,
): Array<[string, Description]> {
  const reason = notJsonReason(v);
  if (reason !== undefined) {
    issues.push(issue.notJson(loc, reason));
    return [];
  }
  if (!Array.isArray(v)) {
    issues.push(issue.listType(loc));
    return [];
  }
  checkCount(loc, 'List', v.length, limits.minScoreLevels, limits.maxScoreLevels, issues);
  const levels: Array<[string, Description]> = [];
  for (let i = 0; i < v.length; i++) {
    checkDescription(v[i], [...loc, i], issues);
    levels.push([String(i), v[i] as Description]);
  }
  return levels;
}

function validateQuestion(
  id: string,
  q: unknown,
  limits: ModelLimits,
  issues: Issues,
): ValidQuestion | undefined {
  const loc: IssueLoc = ['body', 'questions', id];
  const entries = expectObject(q, loc, issues);
  if (entries === undefined) return undefined;
  const fields = new Map(entries.filter((e): e is [string, unknown] => typeof e[0] === 'string'));

  let type: QuestionType | undefined;
  if (!fields.has('type')) issues.push(issue.missing([...loc, 'type']));
  else {
    const t = fields.get('type');
    const reason = notJsonReason(t);
    if (reason !== undefined) issues.push(issue.notJson([...loc, 'type'], reason));
    else if (typeof t !== 'string' || !QUESTION_TYPES.includes(t)) {
      issues.push(issue.questionType([...loc, 'type']));
    } else type = t as QuestionType;
  }

  if (fields.has('instructions'))
    checkDescription(fields.get('instructions'), [...loc, 'instructions'], issues);

  // Criteria rules depend on the type; with no valid type there is nothing to check them against.
  const criteriaLoc: IssueLoc = [...loc, 'criteria'];
  const rawCriteria = fields.get('criteria');
  let criteria: Array<[string, Description]> = [];
  if (type === 'noul') {
    // Optional: absent or null means no descriptions.
    if (fields.has('criteria')) criteria = noulCriteria(rawCriteria, criteriaLoc, issues);
  } else if (type !== undefined) {
    if (!fields.has('criteria')) issues.push(issue.missing(criteriaLoc));
    else if (type === 'choice') criteria = choiceCriteria(rawCriteria, criteriaLoc, limits, issues);
    else criteria = scoreCriteria(rawCriteria, criteriaLoc, limits, issues);
  }

  for (const [key] of entries) {
    if (typeof key !== 'string' || !QUESTION_FIELDS.includes(key)) {
      issues.push(issue.extraForbidden([...loc, String(key)]));
    }
  }
  if (type === undefined) return undefined;
  return { id, type, instructions: fields.get('instructions') as JsonValue | undefined, criteria };
}

function validateQuestions(v: unknown, limits: ModelLimits, issues: Issues): ValidQuestion[] {
  const loc: IssueLoc = ['body', 'questions'];
  const entries = expectObject(v, loc, issues);
  if (entries === undefined) return [];
  checkCount(loc, 'Dictionary', entries.length, 1, limits.maxQuestions, issues);
  const questions: ValidQuestion[] = [];
  for (const [key, value] of entries) {
    const id = String(key);
    if (typeof key !== 'string') issues.push(issue.stringType([...loc, id]));
    else checkQuestionId(key, [...loc, id], issues);
    const question = validateQuestion(id, value, limits, issues);
    if (question !== undefined) questions.push(question);
  }
  return questions;
}

function mergeLimits(overrides: Partial<ModelLimits> | undefined): ModelLimits {
  const limits: ModelLimits = { ...CLEF_FLASH_LIMITS };
  for (const [key, value] of Object.entries(overrides ?? {}) as Array<
    [keyof ModelLimits, unknown]
  >) {
    if (typeof value === 'number') limits[key] = value;
  }
  return limits;
}

function describeNonObject(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (isPyNumber(v)) return 'a number';
  if (typeof v === 'object') return notJsonReason(v) ?? 'an object';
  return typeof v === 'undefined' ? 'nothing' : `a ${typeof v}`;
}

/**
 * Validates a System One request body. Throws a SystemOneError: 400 (`api_usage_error`) for a
 * body that is not a JSON object, 422 listing every schema violation, 400 `Unknown model: x`
 * when `options.models` is given and does not hold `model`.
 */
export function validateRequest(body: unknown, options: ValidateOptions = {}): ValidRequest {
  if (!isObjectValue(body)) {
    throw notJsonBodyError(
      `The request body must be a JSON object, not ${describeNonObject(body)}`,
    );
  }
  const limits = mergeLimits(options.limits);
  const issues: Issues = [];
  const entries = entriesOf(body);
  const fields = new Map(entries.filter((e): e is [string, unknown] => typeof e[0] === 'string'));

  // Fields in declared order, then unknown fields in body order (pydantic's order).
  const model = fields.get('model');
  if (!fields.has('model')) issues.push(issue.missing(['body', 'model']));
  else if (notJsonReason(model) !== undefined) {
    issues.push(issue.notJson(['body', 'model'], notJsonReason(model)!));
  } else if (typeof model !== 'string') issues.push(issue.stringType(['body', 'model']));

  if (!fields.has('state')) issues.push(issue.missing(['body', 'state']));
  else checkState(fields.get('state'), ['body', 'state'], issues);

  let questions: ValidQuestion[] = [];
  if (!fields.has('questions')) issues.push(issue.missing(['body', 'questions']));
  else questions = validateQuestions(fields.get('questions'), limits, issues);

  for (const [key] of entries) {
    if (typeof key !== 'string' || !TOP_FIELDS.includes(key)) {
      issues.push(issue.extraForbidden(['body', String(key)]));
    }
  }
  if (issues.length > 0) throw validationError(issues);

  const modelName = model as string;
  if (options.models !== undefined && !options.models.includes(modelName)) {
    throw unknownModelError(modelName);
  }
  return { model: modelName, state: fields.get('state') as JsonValue, questions };
}
