/**
 * The question builder's model: a form state that turns into the exact request JSON text, and
 * back when a raw request fits the form. Pure (no DOM), unit-tested.
 */
import { parseRequestJson } from '../protocol/json.js';
import type { QuestionType } from '../protocol/types.js';

export interface FormOption {
  name: string;
  description: string;
}

export interface FormQuestion {
  id: string;
  type: QuestionType;
  instructions: string;
  /** choice: option name → description. */
  options: FormOption[];
  /** score: level descriptions, level 0 first. */
  levels: string[];
  /** noul: optional descriptions of yes and no ('' = the model's default). */
  yes: string;
  no: string;
}

export interface FormState {
  model: string;
  /** 'text': the state is the string as typed; 'json': the text is a JSON object or array. */
  stateMode: 'text' | 'json';
  stateText: string;
  questions: FormQuestion[];
}

export function newQuestion(type: QuestionType, id: string): FormQuestion {
  return {
    id,
    type,
    instructions: '',
    options:
      type === 'choice'
        ? [
            { name: 'yes', description: '' },
            { name: 'no', description: '' },
          ]
        : [],
    levels: type === 'score' ? ['low', 'medium', 'high'] : [],
    yes: '',
    no: '',
  };
}

/** An id not used yet: `choice_2`, ... */
export function freshId(questions: FormQuestion[], base: string): string {
  const used = new Set(questions.map((q) => q.id));
  for (let i = 1; ; i++) {
    const id = i === 1 ? base : `${base}_${i}`;
    if (!used.has(id)) return id;
  }
}

const description = (text: string): string | null => (text.trim() === '' ? null : text);

function questionJson(q: FormQuestion): Record<string, unknown> {
  const out: Record<string, unknown> = { type: q.type };
  if (q.instructions.trim() !== '') out.instructions = q.instructions;
  if (q.type === 'choice') {
    out.criteria = Object.fromEntries(q.options.map((o) => [o.name, description(o.description)]));
  } else if (q.type === 'score') {
    out.criteria = q.levels.map(description);
  } else if (q.yes.trim() !== '' || q.no.trim() !== '') {
    const criteria: Record<string, string> = {};
    if (q.yes.trim() !== '') criteria.true = q.yes;
    if (q.no.trim() !== '') criteria.false = q.no;
    out.criteria = criteria;
  }
  return out;
}

function indent(text: string, by: string): string {
  return text.replace(/\n/g, `\n${by}`);
}

/**
 * The request as JSON text, in the form's order. A JSON state is embedded as typed (after a
 * syntax check), so its number lexemes and key order reach the model unchanged. Question ids
 * are written one by one: a JavaScript object would move integer-like ids first.
 * Throws a SyntaxError when the JSON state does not parse.
 */
export function formToRequestText(form: FormState): string {
  let state: string;
  if (form.stateMode === 'json') {
    parseRequestJson(form.stateText); // throws JsonSyntaxError with a position
    state = indent(form.stateText.trim(), '  ');
  } else {
    state = JSON.stringify(form.stateText);
  }
  const questions = form.questions.map(
    (q) =>
      `    ${JSON.stringify(q.id)}: ${indent(JSON.stringify(questionJson(q), null, 2), '    ')}`,
  );
  return [
    '{',
    `  "model": ${JSON.stringify(form.model)},`,
    `  "state": ${state},`,
    questions.length === 0
      ? '  "questions": {}'
      : `  "questions": {\n${questions.join(',\n')}\n  }`,
    '}',
  ].join('\n');
}

type Parsed = Record<string, unknown>;

function isRecord(v: unknown): v is Parsed {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const asText = (v: unknown): string | null => (v === null ? '' : typeof v === 'string' ? v : null);

/**
 * The form for a raw request, or a reason it does not fit (descriptions that are objects, an
 * unknown type, ...): then the request stays raw JSON. Integer-like question ids keep their
 * written order (parsed losslessly).
 */
export function requestTextToForm(text: string): { form: FormState } | { reason: string } {
  let lossless: unknown;
  try {
    lossless = parseRequestJson(text);
  } catch (e) {
    return { reason: (e as Error).message };
  }
  if (!(lossless instanceof Map)) return { reason: 'the request is not a JSON object' };
  const plain = JSON.parse(text) as Parsed;
  const model = plain.model;
  if (typeof model !== 'string') return { reason: '"model" is not a string' };
  const questionsMap = lossless.get('questions');
  if (!(questionsMap instanceof Map)) return { reason: '"questions" is not an object' };
  const questions: FormQuestion[] = [];
  for (const id of questionsMap.keys()) {
    const q = (plain.questions as Parsed)[id];
    if (!isRecord(q)) return { reason: `question ${id} is not an object` };
    const type = q.type;
    if (type !== 'noul' && type !== 'choice' && type !== 'score') {
      return { reason: `question ${id} has type ${JSON.stringify(type)}` };
    }
    const instructions = q.instructions === undefined ? '' : asText(q.instructions);
    if (instructions === null) return { reason: `question ${id}: instructions are not text` };
    const fq = newQuestion(type, id);
    fq.instructions = instructions;
    const criteria = q.criteria;
    if (type === 'choice') {
      if (!isRecord(criteria)) return { reason: `question ${id}: criteria is not an object` };
      const names = [
        ...(
          (questionsMap.get(id) as Map<string, unknown>).get('criteria') as Map<string, unknown>
        ).keys(),
      ];
      fq.options = [];
      for (const name of names) {
        const d = asText(criteria[name]);
        if (d === null)
          return { reason: `question ${id}: option ${name} has a non-text description` };
        fq.options.push({ name, description: d });
      }
    } else if (type === 'score') {
      if (!Array.isArray(criteria)) return { reason: `question ${id}: criteria is not an array` };
      const levels = criteria.map(asText);
      if (levels.some((l) => l === null)) return { reason: `question ${id}: a level is not text` };
      fq.levels = levels as string[];
    } else if (criteria !== undefined && criteria !== null) {
      if (!isRecord(criteria)) return { reason: `question ${id}: criteria is not an object` };
      const yes = criteria.true === undefined ? '' : asText(criteria.true);
      const no = criteria.false === undefined ? '' : asText(criteria.false);
      if (yes === null || no === null) return { reason: `question ${id}: criteria are not text` };
      fq.yes = yes;
      fq.no = no;
    }
    questions.push(fq);
  }
  const state = plain.state;
  if (typeof state === 'string') {
    return { form: { model, stateMode: 'text', stateText: state, questions } };
  }
  const stateText = rawStateText(text);
  return {
    form: {
      model,
      stateMode: 'json',
      stateText: stateText ?? JSON.stringify(state, null, 2),
      questions,
    },
  };
}

/**
 * The state's JSON text exactly as written in the request (so `1.0` stays `1.0`), found by
 * scanning the top-level object; null when it cannot be isolated.
 */
export function rawStateText(text: string): string | null {
  let depth = 0;
  let inString = false;
  let keyStart = -1;
  let lastKey: string | null = null;
  let valueStart = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') {
        inString = false;
        if (depth === 1 && valueStart < 0 && keyStart >= 0)
          lastKey = JSON.parse(text.slice(keyStart, i + 1)) as string;
      }
      continue;
    }
    if (ch === '"') {
      inString = true;
      if (depth === 1 && valueStart < 0) keyStart = i;
    } else if (ch === ':' && depth === 1 && lastKey === 'state') {
      valueStart = i + 1;
    } else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']' || (ch === ',' && depth === 1)) {
      if (ch !== ',') depth--;
      if (valueStart >= 0 && depth <= 1 && (ch === ',' || depth === 0)) {
        return text.slice(valueStart, i).trim();
      }
      if (ch === ',' && depth === 1) {
        keyStart = -1;
        lastKey = null;
      }
    }
  }
  return null;
}
