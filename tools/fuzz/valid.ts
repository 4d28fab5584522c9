/**
 * Valid System One requests for the fuzz generator, with the answers system-one.md says must
 * come back: one per question id in request order, each of the question's type, a choice's
 * probabilities keyed by its options in criteria order, a score's legend echoing its levels.
 */
import { num, obj, plainValue, writeJson, type Node, type Obj } from './json-text.js';
import type { Rng } from './prng.js';

export type QuestionKind = 'noul' | 'choice' | 'score';

export interface ExpectedAnswer {
  id: string;
  type: QuestionKind;
  /** choice: option names in criteria order (duplicates folded: first place, last value). */
  options?: string[];
  /** score: each level's description as the legend must echo it. */
  legend?: unknown[];
}

export interface ValidRequestSpec {
  body: Obj;
  model: string;
  answers: ExpectedAnswer[];
}

/** Question ids: the allowed alphabet, with the awkward ones (integer-like, prototype names). */
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-';
const SPECIAL_IDS = ['__proto__', 'constructor', 'toString', '7', '10', '2', '0', '-', '.', '..'];
const OPTION_NAMES = ['yes', 'no', 'billing', '', '__proto__', '2', '10', ' spaced ', 'Ünï', '😀'];
const TEXTS = [
  'My card was charged twice.',
  '',
  'Où est ma commande ?',
  '注文が遅れています',
  '😀 ok',
];

export function randomId(rng: Rng): string {
  if (rng.chance(0.15)) return rng.pick(SPECIAL_IDS);
  let id = '';
  for (let n = rng.int(1, 12); n > 0; n--) id += rng.pick([...ID_ALPHABET]);
  return id;
}

/** `count` distinct ids. */
export function distinctIds(rng: Rng, count: number): string[] {
  const ids = new Set<string>();
  while (ids.size < count) ids.add(ids.size > 20 ? `q${ids.size}_${rng.int(0, 9)}` : randomId(rng));
  return [...ids];
}

export function randomDescription(rng: Rng): Node {
  return rng.pick<() => Node>([
    () => rng.pick(TEXTS),
    () => null,
    () =>
      obj([
        ['k', 'v'],
        ['n', num('1.0')],
      ]),
    () => ['a', 'b'],
    () => 'Level text',
  ])();
}

export function randomState(rng: Rng): Node {
  return rng.pick<() => Node>([
    () => rng.pick(TEXTS),
    () => obj([]),
    () => [],
    () =>
      obj([
        ['order', '42'],
        ['late', true],
        ['days', num('3')],
        ['price', num('1.0')],
      ]),
    () => ['first message', obj([['role', 'user']]), num('-0')],
    () =>
      obj([
        ['2', 'b'],
        ['1', 'a'],
        ['z', null],
      ]),
  ])();
}

function withInstructions(rng: Rng, entries: Array<[string, Node]>): Array<[string, Node]> {
  const choice = rng.int(0, 5);
  if (choice === 0) return entries; // absent: the id stands in
  const value: Node = [null, '', 'Is it urgent?', obj([['ask', 'Urgent?']]), ['a', 'b']][
    choice - 1
  ]!;
  return [...entries, ['instructions', value]];
}

/** A valid question node of `type` with `options` options/levels, and its expected answer. */
export function validQuestion(
  rng: Rng,
  id: string,
  type: QuestionKind,
  options = type === 'choice' ? rng.int(2, 5) : rng.int(2, 6),
): { node: Obj; answer: ExpectedAnswer } {
  const entries: Array<[string, Node]> = withInstructions(rng, [['type', type]]);
  if (type === 'noul') {
    const criteria = rng.pick<Node | undefined>([
      undefined,
      null,
      obj([]),
      obj([['true', randomDescription(rng)]]),
      obj([
        ['false', randomDescription(rng)],
        ['true', randomDescription(rng)],
      ]),
    ]);
    if (criteria !== undefined) entries.push(['criteria', criteria]);
    return { node: obj(entries), answer: { id, type } };
  }
  if (type === 'choice') {
    const names = new Set<string>();
    while (names.size < options) {
      names.add(names.size < 6 && rng.chance(0.7) ? rng.pick(OPTION_NAMES) : `opt${names.size}`);
    }
    const criteria = obj([...names].map((n): [string, Node] => [n, randomDescription(rng)]));
    entries.push(['criteria', criteria]);
    return { node: obj(entries), answer: { id, type, options: [...names] } };
  }
  const levels = Array.from({ length: options }, () => randomDescription(rng));
  entries.push(['criteria', levels]);
  return { node: obj(entries), answer: { id, type, legend: levels.map(plainValue) } };
}

export interface ValidOptions {
  model: string;
  questions?: number;
  state?: Node;
}

/** A valid request: 1-3 questions of random types unless told how many. */
export function validRequest(rng: Rng, options: ValidOptions): ValidRequestSpec {
  const count = options.questions ?? rng.int(1, 3);
  const ids = distinctIds(rng, count);
  const built = ids.map((id) => validQuestion(rng, id, rng.pick(['noul', 'choice', 'score'])));
  const body = obj([
    ['model', options.model],
    ['state', options.state ?? randomState(rng)],
    ['questions', obj(built.map((b, i): [string, Node] => [ids[i]!, b.node]))],
  ]);
  return { body, model: options.model, answers: built.map((b) => b.answer) };
}

/** Small enough that the tiny test model's 1,024-token context surely holds it. */
export function isSmall(spec: ValidRequestSpec): boolean {
  return spec.answers.length <= 3 && writeJson(spec.body).length <= 400;
}

// Tree helpers for the mutations.
export function field(o: Obj, key: string): Node | undefined {
  return o.obj.find(([k]) => k === key)?.[1];
}
export function setField(o: Obj, key: string, value: Node): void {
  const entry = o.obj.find(([k]) => k === key);
  if (entry) entry[1] = value;
  else o.obj.push([key, value]);
}
export function dropField(o: Obj, key: string): void {
  o.obj = o.obj.filter(([k]) => k !== key);
}
