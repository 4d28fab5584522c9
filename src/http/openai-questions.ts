/**
 * OpenAI Decisions questions → System One questions, and the mapping that turns the answers back.
 *
 * Questions (in order; the System One `questions` is a Map, so order survives any id):
 * - `predicate` → `noul` (no criteria: Clef's default yes/no descriptions);
 *   `choice` → `choice`, one option per choice; `score` → `score`, one level per level.
 * - Question ids: a question's `name` when it is a valid System One id (1–100 characters of
 *   `A-Z a-z 0-9 _ . -`) and no earlier question has it; otherwise `q<index>` (its position in
 *   `questions`, 0-based), `q<index>_<k>` if a name already takes that. Unnamed questions, names
 *   Clef cannot use as an id, and repeated names thus get stable ids; answers carry each
 *   question's `name` as sent (or null), in question order.
 * - More questions than the model answers (64 for Clef), fewer than 1, more than 255 or fewer
 *   than 2 choices, more than 10 or fewer than 2 levels: 400 (array_above/below_*_length).
 *
 * Choice values are typed (`"true"` and `true` are different options) and Clef reads each
 * option's id, so the id is the value's text: a string as it is, a boolean as `true` / `false`.
 * When a string and a boolean in the same question have the same text, every string value of
 * that question is written as its JSON literal instead (`"true"` with its quotes), so the model
 * reads `"true"` beside `true`: all ids stay distinct and each says which it is. Numbers, null,
 * objects as values: 400 invalid_type (the SDK types values as string | boolean). The same
 * value twice (same type, same text): 400 invalid_value at the second one.
 *
 * A choice's `description` is its option's description (none: null). A level is read as its
 * `label`, or `{"label","description"}` when it has a description, so the model sees both.
 */
import { type JsonMap, type JsonValue, type ModelLimits } from '../protocol/types.js';
import { QUESTION_ID_MAX_LENGTH, QUESTION_ID_PATTERN } from '../protocol/validate-types.js';
import { at, Checker, index, type Fields } from './openai-check.js';
import { instructionsValue } from './openai-input.js';

export type ChoiceValue = string | boolean;

export interface PredicateMapping {
  type: 'predicate';
  id: string;
  name: string | null;
}
export interface ChoiceMapping {
  type: 'choice';
  id: string;
  name: string | null;
  /** In the request's choices order: the System One option id of each typed value. */
  options: Array<{ id: string; value: ChoiceValue }>;
}
export interface ScoreMapping {
  type: 'score';
  id: string;
  name: string | null;
  /** Level labels; level i is System One's option `"i"`. */
  labels: string[];
}
export type QuestionMapping = PredicateMapping | ChoiceMapping | ScoreMapping;

const TYPES = ['predicate', 'choice', 'score'] as const;
const SYSTEM_ONE_TYPE = { predicate: 'noul', choice: 'choice', score: 'score' } as const;

/** System One option ids for a choice question's typed values (see the header). */
export function optionIds(values: readonly ChoiceValue[]): string[] {
  const strings = new Set(values.filter((v): v is string => typeof v === 'string'));
  const clash = values.some((v) => typeof v === 'boolean' && strings.has(String(v)));
  return values.map((v) => (typeof v === 'boolean' ? String(v) : clash ? JSON.stringify(v) : v));
}

function isUsableId(name: string | undefined): name is string {
  return (
    name !== undefined &&
    [...name].length <= QUESTION_ID_MAX_LENGTH &&
    QUESTION_ID_PATTERN.test(name)
  );
}

/** Question ids for the questions' names (see the header). */
export function questionIds(names: ReadonlyArray<string | undefined>): string[] {
  const reserved = new Set(names.filter(isUsableId));
  const used = new Set<string>();
  return names.map((name, i) => {
    const named = isUsableId(name) && !used.has(name);
    let id = named ? name : `q${i}`;
    for (let k = 1; !named && (reserved.has(id) || used.has(id)); k++) id = `q${i}_${k}`;
    used.add(id);
    return id;
  });
}

function countCheck(
  length: number,
  min: number,
  max: number,
  what: string,
  param: string,
  c: Checker,
): void {
  if (length < min) {
    c.add(
      param,
      'array_below_min_length',
      `Invalid '${param}': expected at least ${min} ${what}, but got ${length}.`,
    );
  } else if (length > max) {
    c.add(
      param,
      'array_above_max_length',
      `Invalid '${param}': this model answers at most ${max} ${what}, but got ${length}.`,
    );
  }
}

function choices(v: unknown, limits: ModelLimits, param: string, c: Checker) {
  const list = c.array(v, param);
  if (list === undefined) return undefined;
  countCheck(list.length, limits.minChoiceOptions, limits.maxChoiceOptions, 'choices', param, c);
  const values: ChoiceValue[] = [];
  const descriptions: Array<string | null> = [];
  const seen = new Map<string, number>();
  list.forEach((item, j) => {
    const p = index(param, j);
    const f = c.object(item, p);
    if (f === undefined) return;
    c.keys(f, ['value', 'description'], p);
    descriptions.push(c.optionalString(f, 'description', p) ?? null);
    if (!c.required(f, 'value', p)) return;
    const value = f.get('value');
    if (typeof value !== 'string' && typeof value !== 'boolean') {
      c.invalidType(at(p, 'value'), 'a string or a boolean', value);
      return;
    }
    const key = `${typeof value}:${String(value)}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      c.invalidValue(
        at(p, 'value'),
        `each choice must be unique, and ${JSON.stringify(value)} is also ${index(param, earlier)}`,
      );
    } else seen.set(key, j);
    values.push(value);
  });
  return { values, descriptions };
}

function levels(v: unknown, limits: ModelLimits, param: string, c: Checker) {
  const list = c.array(v, param);
  if (list === undefined) return undefined;
  countCheck(list.length, limits.minScoreLevels, limits.maxScoreLevels, 'levels', param, c);
  const labels: string[] = [];
  const read: JsonValue[] = [];
  list.forEach((item, j) => {
    const p = index(param, j);
    const f = c.object(item, p);
    if (f === undefined) return;
    c.keys(f, ['label', 'description'], p);
    const description = c.optionalString(f, 'description', p);
    if (!c.required(f, 'label', p) || !c.string(f.get('label'), at(p, 'label'))) return;
    const label = f.get('label') as string;
    labels.push(label);
    read.push(
      description === undefined
        ? label
        : new Map([
            ['label', label],
            ['description', description],
          ]),
    );
  });
  return { labels, read };
}

interface Checked {
  name: string | undefined;
  question: JsonMap;
  mapping: (id: string, name: string | null) => QuestionMapping;
}

function question(v: unknown, limits: ModelLimits, param: string, c: Checker): Checked | undefined {
  const f: Fields | undefined = c.object(v, param);
  if (f === undefined || !c.required(f, 'type', param)) return undefined;
  const type = f.get('type');
  if (typeof type !== 'string' || !(TYPES as readonly string[]).includes(type)) {
    c.invalidValue(at(param, 'type'), "expected 'predicate', 'choice' or 'score'");
    return undefined;
  }
  const t = type as (typeof TYPES)[number];
  c.keys(
    f,
    [
      'type',
      'name',
      'instructions',
      ...(t === 'choice' ? ['choices'] : t === 'score' ? ['levels'] : []),
    ],
    param,
  );
  const name = c.optionalString(f, 'name', param);
  const instructions = c.required(f, 'instructions', param)
    ? instructionsValue(f.get('instructions'), at(param, 'instructions'), c)
    : undefined;
  const out: JsonMap = new Map<string, JsonValue>([['type', SYSTEM_ONE_TYPE[t]]]);
  if (instructions !== undefined) out.set('instructions', instructions);
  if (t === 'predicate')
    return { name, question: out, mapping: (id, n) => ({ type: t, id, name: n }) };
  if (t === 'choice') {
    const got = c.required(f, 'choices', param)
      ? choices(f.get('choices'), limits, at(param, 'choices'), c)
      : undefined;
    if (got === undefined) return undefined;
    const ids = optionIds(got.values);
    out.set('criteria', new Map(ids.map((id, j) => [id, got.descriptions[j] ?? null])));
    const options = ids.map((id, j) => ({ id, value: got.values[j]! }));
    return { name, question: out, mapping: (id, n) => ({ type: t, id, name: n, options }) };
  }
  const got = c.required(f, 'levels', param)
    ? levels(f.get('levels'), limits, at(param, 'levels'), c)
    : undefined;
  if (got === undefined) return undefined;
  out.set('criteria', got.read);
  return {
    name,
    question: out,
    mapping: (id, n) => ({ type: t, id, name: n, labels: got.labels }),
  };
}

/** System One questions (a Map, in order) and their mapping, or undefined after reporting. */
export function toQuestions(
  v: unknown,
  limits: ModelLimits,
  c: Checker,
): { questions: JsonMap; mapping: QuestionMapping[] } | undefined {
  const list = c.array(v, 'questions');
  if (list === undefined) return undefined;
  countCheck(list.length, 1, limits.maxQuestions, 'questions per request', 'questions', c);
  const before = c.problems.length;
  const checked = list.map((q, i) => question(q, limits, index('questions', i), c));
  if (c.problems.length !== before) return undefined;
  const ids = questionIds(checked.map((q) => q!.name));
  const questions: JsonMap = new Map();
  const mapping = checked.map((q, i) => {
    questions.set(ids[i]!, q!.question);
    return q!.mapping(ids[i]!, q!.name ?? null);
  });
  return { questions, mapping };
}
