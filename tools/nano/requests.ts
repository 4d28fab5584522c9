/**
 * System One requests built from CLINC150 queries, for training clef-nano and for evaluating it.
 * Shared by make-data.ts (which encodes them with the project's own prompt encoder for PyTorch)
 * and eval.ts (which sends the same bodies to the converted package), so both see one prompt.
 *
 * CLINC150 (CC BY 3.0): Stefan Larson, Anish Mahendran, Joseph J. Peper, Christopher Clarke,
 * Andrew Lee, Parker Hill, Jonathan K. Kummerfeld, Kevin Leach, Michael A. Laurenzano,
 * Lingjia Tang, Jason Mars. "An Evaluation Dataset for Intent Classification and Out-of-Scope
 * Prediction." EMNLP-IJCNLP 2019.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../fixture/weights.js';

export type ClincSplit = 'train' | 'val' | 'test' | 'oos_train' | 'oos_val' | 'oos_test';
export type ClincData = Record<ClincSplit, Array<[string, string]>>;

const SPLITS: readonly ClincSplit[] = ['train', 'val', 'test', 'oos_train', 'oos_val', 'oos_test'];

/** The option every out-of-scope query must pick. */
export const NONE_OPTION = 'none';
export const NONE_DESCRIPTION = 'The message matches none of the other options.';
/** The instruction of the evaluation's choice questions. */
export const EVAL_INSTRUCTION = "Which intent does the user's message express?";

const here = dirname(fileURLToPath(import.meta.url));

export function readClinc(): ClincData {
  const path = resolve(here, '../../data/clinc150/data_full.json');
  return JSON.parse(readFileSync(path, 'utf8')) as ClincData;
}

/** One line per intent, written for this project (tools/nano/intent-descriptions.json). */
export function readDescriptions(): Record<string, string> {
  return JSON.parse(readFileSync(resolve(here, 'intent-descriptions.json'), 'utf8')) as Record<
    string,
    string
  >;
}

/** A request body as the wire carries it (plain JSON). */
export interface RequestBody {
  model: string;
  state: unknown;
  questions: Record<string, unknown>;
}

/** The label of each question (an option id), by question id. */
export type Labels = Record<string, string>;

const CHOICE_IDS = ['intent', 'route', 'topic', 'category', 'request_type', 'handler'];
const CHOICE_INSTRUCTIONS: Array<string | null> = [
  EVAL_INSTRUCTION,
  'Route this message to the team that handles it.',
  'What is the user asking for?',
  'Classify the request.',
  'Pick the intent of the message.',
  'Which of these best describes what the user wants?',
  null,
];
const NOUL_IDS = ['is_about', 'matches', 'relevant', 'on_topic'];
const NOUL_TEMPLATES = [
  (name: string, _d: string) => `Is this message about ${name}?`,
  (name: string, _d: string) => `Does the user want ${name.replace(/_/g, ' ')}?`,
  (_n: string, d: string) => `Does this describe the message: ${d}`,
  (name: string, _d: string) => `Is the intent ${name}?`,
];

/** Fisher-Yates on a copy, then the first n. */
function sample<T>(rng: Rng, items: readonly T[], n: number): T[] {
  const a = items.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a.slice(0, n);
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)] as T;
}

/** The state: the query as a string, or inside a small JSON object. */
function makeState(rng: Rng, query: string): unknown {
  const r = rng.uniform();
  if (r < 0.65) return query;
  const shapes: Array<() => unknown> = [
    () => ({ message: query }),
    () => ({ channel: pick(rng, ['chat', 'voice', 'email']), text: query }),
    () => ({ user: { utterance: query }, locale: 'en-US' }),
    () => ({ conversation: [{ role: 'user', content: query }] }),
    () => ({ ticket: { id: 1000 + rng.int(9000), body: query } }),
  ];
  return pick(rng, shapes)();
}

/**
 * Options of a training choice question: 2-12 mostly, sometimes up to 30 or 80 (longer lists
 * teach the 150-way case; they are few because every option costs about 13 tokens and this
 * model is trained on a shared CPU).
 */
function choiceSize(rng: Rng, short: boolean): number {
  // The short profile (2-10 options) packs more queries into the same compute.
  if (short) return 2 + rng.int(9);
  const r = rng.uniform();
  if (r < 0.8) return 2 + rng.int(11);
  if (r < 0.95) return 13 + rng.int(18);
  return 31 + rng.int(50);
}

/**
 * A choice question over a random subset of intents. `gold` is the query's intent or 'oos'.
 * The answer is `none` when the gold intent is not among the options (always for oos).
 */
function choiceQuestion(
  rng: Rng,
  intents: readonly string[],
  descriptions: Record<string, string>,
  gold: string,
  size: number,
): { question: object; label: string } {
  const inScope = gold !== 'oos';
  const includeGold = inScope && rng.uniform() < 0.85;
  const withNone = !includeGold || rng.uniform() < 0.6;
  const n = Math.max(withNone ? 1 : 2, size - (withNone ? 1 : 0));
  const others = sample(
    rng,
    intents.filter((i) => i !== gold),
    includeGold ? n - 1 : n,
  );
  const names = includeGold ? [gold, ...others] : others;
  const described = names.length <= 12 && rng.uniform() < 0.3;
  const criteria: Record<string, string | null> = {};
  for (const name of sample(rng, names, names.length)) {
    criteria[name] = described ? (descriptions[name] as string) : null;
  }
  if (withNone) criteria[NONE_OPTION] = described ? NONE_DESCRIPTION : null;
  const instructions = pick(rng, CHOICE_INSTRUCTIONS);
  const question: Record<string, unknown> = { type: 'choice', criteria };
  if (instructions !== null) question.instructions = instructions;
  return { question, label: includeGold ? gold : NONE_OPTION };
}

/** "Is this message about X?": true for the query's own intent, false otherwise. */
function noulQuestion(
  rng: Rng,
  intents: readonly string[],
  descriptions: Record<string, string>,
  gold: string,
): { question: object; label: string } {
  const positive = gold !== 'oos' && rng.uniform() < 0.5;
  const topic = positive
    ? gold
    : pick(
        rng,
        intents.filter((i) => i !== gold),
      );
  const template = pick(rng, NOUL_TEMPLATES);
  return {
    question: { type: 'noul', instructions: template(topic, descriptions[topic] as string) },
    label: positive ? 'true' : 'false',
  };
}

/**
 * A training request for one query: a choice question, often a noul question and sometimes a
 * second, small choice question, in random order, under distinct ids.
 */
export function trainingRequest(
  rng: Rng,
  query: string,
  gold: string,
  intents: readonly string[],
  descriptions: Record<string, string>,
  short = false,
): { body: RequestBody; labels: Labels } {
  const parts: Array<{ kind: 'choice' | 'noul'; question: object; label: string }> = [];
  parts.push({
    kind: 'choice',
    ...choiceQuestion(rng, intents, descriptions, gold, choiceSize(rng, short)),
  });
  if (rng.uniform() < 0.5)
    parts.push({ kind: 'noul', ...noulQuestion(rng, intents, descriptions, gold) });
  if (rng.uniform() < 0.25) {
    parts.push({
      kind: 'choice',
      ...choiceQuestion(rng, intents, descriptions, gold, 2 + rng.int(7)),
    });
  }
  const questions: Record<string, unknown> = {};
  const labels: Labels = {};
  const choiceIds = sample(rng, CHOICE_IDS, CHOICE_IDS.length);
  const noulId = pick(rng, NOUL_IDS);
  let c = 0;
  for (const part of sample(rng, parts, parts.length)) {
    const id = part.kind === 'noul' ? noulId : (choiceIds[c++] as string);
    questions[id] = part.question;
    labels[id] = part.label;
  }
  return { body: { model: 'clef-nano', state: makeState(rng, query), questions }, labels };
}

/** Evaluation: one choice question over all 150 intents plus `none` (no descriptions). */
export function fullChoiceRequest(query: string, intents: readonly string[]): RequestBody {
  const criteria: Record<string, null> = {};
  for (const name of intents) criteria[name] = null;
  criteria[NONE_OPTION] = null;
  return {
    model: 'clef-nano',
    state: query,
    questions: { intent: { type: 'choice', instructions: EVAL_INSTRUCTION, criteria } },
  };
}

/** Evaluation: the gold intent among 9 others drawn by `rng` (no `none`, no descriptions). */
export function tenChoiceRequest(
  rng: Rng,
  query: string,
  gold: string,
  intents: readonly string[],
): RequestBody {
  const criteria: Record<string, null> = {};
  const names = [
    gold,
    ...sample(
      rng,
      intents.filter((i) => i !== gold),
      9,
    ),
  ];
  for (const name of names) criteria[name] = null;
  return {
    model: 'clef-nano',
    state: query,
    questions: { intent: { type: 'choice', instructions: EVAL_INSTRUCTION, criteria } },
  };
}

/** The evaluation set of one split pair: every query, with its 151-way and 10-way bodies. */
export interface EvalItem {
  split: ClincSplit;
  index: number;
  query: string;
  /** Intent name, or 'oos'. */
  gold: string;
  full: RequestBody;
  /** Only for in-scope queries. */
  ten: RequestBody | null;
}

/** Deterministic evaluation items (seeded per split so the same options every run). */
export function evalItems(data: ClincData, splits: readonly ClincSplit[], seed = 8): EvalItem[] {
  const intents = intentNames(data);
  const items: EvalItem[] = [];
  for (const split of splits) {
    // Seeded by the split's name, not its position in `splits`: any call gives the same options.
    const rng = new Rng(seed * 1000 + SPLITS.indexOf(split));
    data[split].forEach(([query, gold], index) => {
      const inScope = gold !== 'oos';
      items.push({
        split,
        index,
        query,
        gold,
        full: fullChoiceRequest(query, intents),
        ten: inScope ? tenChoiceRequest(rng, query, gold, intents) : null,
      });
    });
  }
  return items;
}

/**
 * The evaluated subset (a 151-way prompt is about 2,250 tokens and this model is evaluated on
 * a shared CPU, twice: PyTorch and the package). Deterministic, by index:
 * 151-way: val every 40th (75), all 100 oos_val, test every 30th (150, one per intent),
 * oos_test every 7th (143); 10-way: test every 10th (450, three per intent).
 */
export function evalSelection(item: EvalItem): { full: boolean; ten: boolean } {
  switch (item.split) {
    case 'val':
      return { full: item.index % 40 === 0, ten: false };
    case 'oos_val':
      return { full: true, ten: false };
    case 'test':
      return { full: item.index % 30 === 0, ten: item.index % 10 === 0 };
    case 'oos_test':
      return { full: item.index % 7 === 0, ten: false };
    default:
      return { full: false, ten: false };
  }
}

/** The 150 intent names, sorted. */
export function intentNames(data: ClincData): string[] {
  return [...new Set(data.train.map(([, intent]) => intent))].sort();
}
