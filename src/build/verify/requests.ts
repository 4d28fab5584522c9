/**
 * Seeded random System One requests for verification: all three question types, varied option
 * names and descriptions (null, strings, objects), instructions missing / null / strings /
 * objects, short and long states (strings and JSON objects with numbers, booleans, nulls and
 * non-ASCII text), each shrunk until its prompt fits the package's context.
 * The same seed and options give the same requests on every platform.
 */
import { encodeRequest, type TextTokenizer } from '../../clef/prompt.js';
import { SystemOneError } from '../../protocol/errors.js';
import { renderValue } from '../../protocol/render.js';
import type { JsonValue, Question, SystemOneRequest } from '../../protocol/types.js';
import { validateRequest } from '../../protocol/validate.js';
import { Rng } from '../../calibrate/prng.js';

export interface RequestShape {
  /** Questions per request: 1 to this (default 8). */
  maxQuestions: number;
  /** Choice options: 2 to this (default 12). */
  maxChoiceOptions: number;
  /** Score levels: 2 to this (default 10). */
  maxScoreLevels: number;
  /** Tokens a long state aims at, [min, max] (default [100, 600]). */
  longStateTokens: [number, number];
  /** Share of requests with a long state (default 0.5). */
  longStateShare: number;
}

export interface RequestGeneratorOptions extends Partial<RequestShape> {
  /** The model name the requests carry. */
  model: string;
  /** The package's tokenizer: used to size long states and to check the fit. */
  tokenizer: TextTokenizer;
  /** Every request's prompt fits in this many tokens. */
  contextTokens: number;
}

const DEFAULT_REQUEST_SHAPE: Readonly<RequestShape> = Object.freeze({
  maxQuestions: 8,
  maxChoiceOptions: 12,
  maxScoreLevels: 10,
  longStateTokens: [100, 600] as [number, number],
  longStateShare: 0.5,
});

/** Option names and prose, a few non-ASCII (byte-level BPE pieces, NFC). */
const WORDS = (
  'account refund billing shipping delay urgent spam greeting complaint praise question ' +
  'order invoice password login error cancel upgrade downgrade travel weather music sports ' +
  'finance health legal privacy security feedback support sales returns warranty delivery ' +
  'payment subscription trial discount coupon address phone email chat review rating bug ' +
  'feature crash slow fast happy angry neutral confused yes no maybe red green blue small ' +
  'large first last other café naïve résumé Straße über niño 東京 データ привет λόγος'
).split(' ');
/** Words that may appear in question ids (`A-Z a-z 0-9 _ . -`). */
const ID_WORDS = WORDS.filter((w) => /^[a-z]+$/.test(w));
const STATE_KEYS = (
  'user message history events profile notes items total status tags score ratio active id ' +
  'when meta text name count flags'
).split(' ');

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)] as T;
}

function between(rng: Rng, min: number, max: number): number {
  return min + rng.int(max - min + 1);
}

function words(rng: Rng, count: number): string {
  return Array.from({ length: count }, () => pick(rng, WORDS)).join(' ');
}

function sentence(rng: Rng, maxWords = 12): string {
  const s = words(rng, between(rng, 2, maxWords));
  return s.charAt(0).toUpperCase() + s.slice(1) + pick(rng, ['.', '?', '!', '...', '']);
}

/** A number as a JS client would send it: ints, floats, tiny and huge magnitudes. */
function randomNumber(rng: Rng): number {
  switch (rng.int(5)) {
    case 0:
      return rng.int(1000);
    case 1:
      return -rng.int(100000);
    case 2:
      return Math.round(rng.normal() * 1000) / 100;
    case 3:
      return Number(rng.uniform().toPrecision(3)) * 1e-5;
    default:
      return Math.round(rng.uniform() * 1e6) * 1e10;
  }
}

function randomScalar(rng: Rng): JsonValue {
  switch (rng.int(6)) {
    case 0:
      return randomNumber(rng);
    case 1:
      return rng.int(2) === 0;
    case 2:
      return null;
    default:
      return sentence(rng);
  }
}

/** A small JSON value: scalars, short arrays and objects, nested at most `depth` levels. */
function randomJson(rng: Rng, depth: number): JsonValue {
  const kind = depth <= 0 ? 0 : rng.int(4);
  if (kind === 0 || kind === 1) return randomScalar(rng);
  if (kind === 2) {
    return Array.from({ length: between(rng, 1, 4) }, () => randomJson(rng, depth - 1));
  }
  const obj: { [key: string]: JsonValue } = {};
  for (let i = between(rng, 1, 4); i > 0; i--)
    obj[pick(rng, STATE_KEYS)] = randomJson(rng, depth - 1);
  return obj;
}

/** A description: null, a string, or an object. */
function randomDescription(rng: Rng): JsonValue {
  const r = rng.int(10);
  if (r < 2) return null;
  if (r < 7) return sentence(rng, 8);
  return { meaning: sentence(rng, 6), examples: [words(rng, 1), words(rng, 2)] };
}

function randomInstructions(rng: Rng): JsonValue | undefined {
  const r = rng.int(10);
  if (r === 0) return undefined;
  if (r === 1) return null;
  if (r === 2) return '';
  if (r < 8) return sentence(rng);
  return { ask: sentence(rng), focus: [pick(rng, STATE_KEYS), pick(rng, STATE_KEYS)] };
}

function uniqueWords(rng: Rng, count: number): string[] {
  const names = new Set<string>();
  while (names.size < count) {
    const name = rng.int(4) === 0 ? `${pick(rng, WORDS)} ${pick(rng, WORDS)}` : pick(rng, WORDS);
    names.add(rng.int(6) === 0 ? name.toUpperCase() : name);
  }
  return [...names];
}

function randomQuestion(rng: Rng, shape: RequestShape): Question {
  const instructions = randomInstructions(rng);
  const withInstructions = <T extends object>(q: T) =>
    instructions === undefined ? q : { ...q, instructions };
  switch (rng.int(3)) {
    case 0: {
      const r = rng.int(5);
      if (r === 0) return withInstructions({ type: 'noul' as const });
      if (r === 1) return withInstructions({ type: 'noul' as const, criteria: null });
      const criteria: { true?: JsonValue; false?: JsonValue } = {};
      if (r !== 2) criteria.true = randomDescription(rng);
      if (r !== 3) criteria.false = randomDescription(rng);
      return withInstructions({ type: 'noul' as const, criteria });
    }
    case 1: {
      const criteria: Record<string, JsonValue> = {};
      for (const name of uniqueWords(rng, between(rng, 2, shape.maxChoiceOptions))) {
        criteria[name] = randomDescription(rng);
      }
      return withInstructions({ type: 'choice' as const, criteria });
    }
    default: {
      const levels = between(rng, 2, shape.maxScoreLevels);
      const criteria = Array.from({ length: levels }, () => randomDescription(rng));
      return withInstructions({ type: 'score' as const, criteria });
    }
  }
}

function questionId(rng: Rng, index: number): string {
  switch (rng.int(4)) {
    case 0:
      return `q${index}`;
    case 1:
      return `${pick(rng, STATE_KEYS)}.${index}`;
    case 2:
      return `is-${pick(rng, ID_WORDS)}_${index}`;
    default:
      return String(index); // integer-like: a JS object lists these first
  }
}

function countTokens(tokenizer: TextTokenizer, value: JsonValue): number {
  return tokenizer.encode(renderValue(value)).length;
}

/** A short state: a few words, or a small object. */
function shortState(rng: Rng): JsonValue {
  if (rng.int(2) === 0) return words(rng, between(rng, 1, 6));
  return { [pick(rng, STATE_KEYS)]: words(rng, between(rng, 1, 3)) };
}

/** A long state of about `target` tokens: prose, or a JSON object of records. */
function longState(rng: Rng, tokenizer: TextTokenizer, target: number): JsonValue {
  if (rng.int(3) === 0) {
    let text = '';
    while (countTokens(tokenizer, text) < target) {
      text += (text ? ' ' : '') + sentence(rng);
    }
    return text;
  }
  const state: { [key: string]: JsonValue } = {};
  const events: JsonValue[] = [];
  state.user = { name: pick(rng, WORDS), id: rng.int(100000), active: rng.int(2) === 0 };
  state.events = events;
  while (countTokens(tokenizer, state) < target) {
    events.push({ text: sentence(rng), at: rng.int(86400), data: randomJson(rng, 2) });
  }
  return state;
}

/** Cuts a state roughly in half (prose by words, a record object by events); else ''. */
function shrinkState(state: JsonValue): JsonValue {
  if (typeof state === 'string') {
    const parts = state.split(' ');
    return parts.slice(0, Math.floor(parts.length / 2)).join(' ');
  }
  if (typeof state === 'object' && state !== null && !Array.isArray(state)) {
    const obj = state as { [key: string]: JsonValue };
    const events = obj.events;
    if (Array.isArray(events) && events.length > 1) {
      return { ...obj, events: events.slice(0, Math.floor(events.length / 2)) };
    }
  }
  return '';
}

/** The same type with no instructions, two options, no descriptions: the shortest it gets. */
function minimalQuestion(q: Question): Question {
  if (q.type === 'noul') return { type: 'noul' };
  if (q.type === 'score') return { type: 'score', criteria: [null, null] };
  const [a, b] = Object.keys(q.criteria) as [string, string];
  return { type: 'choice', criteria: { [a]: null, [b]: null } };
}

function isMinimal(q: Question): boolean {
  return JSON.stringify(q) === JSON.stringify(minimalQuestion(q));
}

export class RequestGenerator {
  private readonly rng: Rng;
  private readonly shape: RequestShape;

  constructor(
    seed: number,
    private readonly options: RequestGeneratorOptions,
  ) {
    this.rng = new Rng(seed);
    this.shape = { ...DEFAULT_REQUEST_SHAPE, ...stripUndefined(options) };
  }

  /** The next request; its prompt fits `contextTokens`. */
  next(): SystemOneRequest {
    const { rng, shape, options } = this;
    const count = between(rng, 1, shape.maxQuestions);
    const questions: Array<[string, Question]> = [];
    const ids = new Set<string>();
    for (let k = 0; k < count; k++) {
      let id = questionId(rng, k + 1);
      while (ids.has(id)) id = `${id}_`;
      ids.add(id);
      questions.push([id, randomQuestion(rng, shape)]);
    }
    const long = rng.uniform() < shape.longStateShare;
    const [min, max] = shape.longStateTokens;
    let state = long ? longState(rng, options.tokenizer, between(rng, min, max)) : shortState(rng);
    // Shrink the state, then drop questions, until the prompt fits.
    for (;;) {
      const request = {
        model: options.model,
        state: state as SystemOneRequest['state'],
        questions: Object.fromEntries(questions),
      };
      if (this.fits(request)) return request;
      if (state !== '') state = shrinkState(state);
      else if (questions.length > 1) questions.pop();
      else if (!isMinimal(questions[0]![1])) questions[0]![1] = minimalQuestion(questions[0]![1]);
      else throw new Error(`contextTokens ${options.contextTokens} is too small for any request`);
    }
  }

  private fits(request: SystemOneRequest): boolean {
    const valid = validateRequest(request);
    try {
      encodeRequest(this.options.tokenizer, valid, { maxTokens: this.options.contextTokens });
      return true;
    } catch (e) {
      if (e instanceof SystemOneError && e.code === 'max_tokens_exceeded') return false;
      throw e;
    }
  }
}

function stripUndefined(options: Partial<RequestShape>): Partial<RequestShape> {
  const out: Partial<RequestShape> = {};
  for (const key of Object.keys(DEFAULT_REQUEST_SHAPE) as Array<keyof RequestShape>) {
    if (options[key] !== undefined) (out as Record<string, unknown>)[key] = options[key];
  }
  return out;
}

/** `count` requests from `seed`. */
export function randomRequests(
  count: number,
  seed: number,
  options: RequestGeneratorOptions,
): SystemOneRequest[] {
  const generator = new RequestGenerator(seed, options);
  return Array.from({ length: count }, () => generator.next());
}
