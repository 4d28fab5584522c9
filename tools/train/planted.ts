/**
 * A planted task whose answer is known: each state is filler words plus one word planted for its
 * label, so a model that learns the task gets every fresh draw right. Used by the trainer's tests
 * (accuracy ≥ 99% on draws it never saw) and the CLI's end-to-end test.
 */
import { Rng } from '../../src/calibrate/prng.js';

export const PLANTED_OPTIONS = ['abuse', 'billing', 'other', 'shipping'] as const;
/** Words that decide the label (several per label; one is planted in each state). */
export const PLANTED_WORDS: Record<(typeof PLANTED_OPTIONS)[number], readonly string[]> = {
  abuse: ['harassment', 'threatened', 'spam'],
  billing: ['invoice', 'refund', 'charged'],
  other: ['weather', 'recipe', 'hello'],
  shipping: ['parcel', 'courier', 'delivery'],
};
const FILLER = [
  'i',
  'my',
  'the',
  'a',
  'please',
  'can',
  'you',
  'help',
  'with',
  'this',
  'today',
  'again',
  'about',
  'and',
  'it',
  'is',
  'was',
  'not',
  'really',
  'yesterday',
  'thanks',
  'order',
  'account',
  'some',
  'there',
  'question',
  'we',
  'our',
  'team',
  'need',
  'quickly',
  'soon',
  'friend',
  'why',
];

export function plantedRequest(state: string, model = 'support-router') {
  return {
    model,
    state,
    questions: {
      route: {
        type: 'choice',
        instructions: 'Which team should handle this message?',
        criteria: {
          abuse: 'Trust and safety',
          billing: 'Payments',
          other: null,
          shipping: 'Parcels',
        },
      },
    },
  };
}

/** `n` labelled examples, labels in turn, words drawn with `seed`. */
export function plantedExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  const rng = new Rng(seed);
  const out: Array<{ state: string; label: string }> = [];
  for (let i = 0; i < n; i++) {
    const label = PLANTED_OPTIONS[i % PLANTED_OPTIONS.length] as (typeof PLANTED_OPTIONS)[number];
    const words = Array.from(
      { length: 4 + rng.int(8) },
      () => FILLER[rng.int(FILLER.length)] as string,
    );
    const planted = PLANTED_WORDS[label];
    words.splice(rng.int(words.length + 1), 0, planted[rng.int(planted.length)] as string);
    out.push({ state: words.join(' '), label });
  }
  return out;
}

/** Labelled requests, one JSON line each (calibrate's format): a planted task's training file. */
function labelledJsonl(
  examples: ReadonlyArray<{ state: string; label: string }>,
  request: (state: string) => object,
  question: string,
): string {
  return (
    examples
      .map(({ state, label }) =>
        JSON.stringify({ request: request(state), labels: { [question]: label } }),
      )
      .join('\n') + '\n'
  );
}

export function plantedJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(plantedExamples(n, seed), (state) => plantedRequest(state, model), 'route');
}

/**
 * The planted-task package `npm run models:tiny` trains (tools/models/build-tiny.ts) with
 * `clef-web train`'s code at its defaults (seed included), as the playground's Train panel
 * trains: test/browser/trained.spec.ts loads it, and test/browser/playground-train.spec.ts
 * compares the page's training of the same examples with it, byte for byte.
 */
export const TRAINED_PLANTED = {
  /** The examples: `plantedExamples(count, seed)`. */
  count: 240,
  seed: 11,
  /** The package, served by the dev server under /models/trained-planted/. */
  dir: 'public/models/trained-planted',
  /** The Clef release it was converted from. */
  release: '.cache/trained-planted-release',
} as const;

/**
 * A planted order task: each state holds one word of each of two sets among filler words, and
 * the label says which set's word comes first. Every state has the same kinds of words, so a bag
 * of words gets half right; a model that reads order gets them all.
 */
export const ORDER_OPTIONS = ['first', 'second'] as const;
export const ORDER_WORDS = {
  first: ['north', 'alpha', 'red'],
  second: ['south', 'omega', 'blue'],
} as const;

export function orderRequest(state: string, model = 'order-router') {
  return {
    model,
    state,
    questions: {
      order: {
        type: 'choice',
        instructions: 'Which kind of word comes first?',
        criteria: { first: 'north, alpha or red', second: 'south, omega or blue' },
      },
    },
  };
}

/** `n` labelled order examples, labels in turn, words drawn with `seed`. */
export function orderExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  const rng = new Rng(seed);
  const out: Array<{ state: string; label: string }> = [];
  for (let i = 0; i < n; i++) {
    const label = ORDER_OPTIONS[i % 2] as (typeof ORDER_OPTIONS)[number];
    const words = Array.from(
      { length: 3 + rng.int(8) },
      () => FILLER[rng.int(FILLER.length)] as string,
    );
    const a = ORDER_WORDS.first[rng.int(3)] as string;
    const b = ORDER_WORDS.second[rng.int(3)] as string;
    // Two places, the first strictly before the second.
    const p = rng.int(words.length + 1);
    const q = p + rng.int(words.length + 1 - p);
    const [early, late] = label === 'first' ? [a, b] : [b, a];
    words.splice(q, 0, late);
    words.splice(p, 0, early);
    out.push({ state: words.join(' '), label });
  }
  return out;
}

export function orderJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(orderExamples(n, seed), (state) => orderRequest(state, model), 'order');
}

/**
 * A planted negation task: each state names one word of each of two sets, and negates one of
 * them ("not", "never", "without", "no", "don't", up to a comma or "but"); the label is the set
 * whose word is not negated. Both words are in every state, so a bag of words gets half right; a
 * model that leaves negated words out gets them all.
 */
export const NEGATION_OPTIONS = ['first', 'second'] as const;
const NEGATION_CUES = ['not', 'never', 'without', 'no', "don't"] as const;
const PLAIN_FILLER = FILLER.filter((w) => w !== 'not');

/** A request of a two-set task: one choice question `id` between the two sets. */
function twoSetRequest(state: string, model: string, id: string, instructions: string) {
  const criteria = { first: 'north, alpha or red', second: 'south, omega or blue' };
  return { model, state, questions: { [id]: { type: 'choice', instructions, criteria } } };
}

export function negationRequest(state: string, model = 'negation-router') {
  return twoSetRequest(state, model, 'kept', 'Which kind of word is meant?');
}

/**
 * `n` labelled examples of a two-set task, labels in turn: a word of each set drawn with `seed`,
 * and `compose` writing the state around the labelled set's word (`meant`) and the other one,
 * with `fill()` giving 0 to `maxFill` − 1 filler words.
 */
function twoSetExamples(
  n: number,
  seed: number,
  maxFill: number,
  compose: (rng: Rng, fill: () => string, meant: string, other: string) => string,
): Array<{ state: string; label: string }> {
  const rng = new Rng(seed);
  const fill = (): string =>
    Array.from({ length: rng.int(maxFill) }, () => PLAIN_FILLER[rng.int(PLAIN_FILLER.length)]).join(
      ' ',
    );
  const out: Array<{ state: string; label: string }> = [];
  for (let i = 0; i < n; i++) {
    const label = NEGATION_OPTIONS[i % 2] as (typeof NEGATION_OPTIONS)[number];
    const words = { first: ORDER_WORDS.first[rng.int(3)], second: ORDER_WORDS.second[rng.int(3)] };
    const other = words[label === 'first' ? 'second' : 'first'];
    const state = compose(rng, fill, words[label], other);
    out.push({ state: state.replace(/\s+/g, ' ').replace(/ ,/g, ',').trim(), label });
  }
  return out;
}

/** `n` labelled negation examples, labels in turn, words and shapes drawn with `seed`. */
export function negationExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  return twoSetExamples(n, seed, 4, (rng, fill, kept, negated) => {
    const cue = NEGATION_CUES[rng.int(NEGATION_CUES.length)] as string;
    const denied = `${fill()} ${cue} ${fill()} ${negated} ${fill()}`;
    const meant = `${fill()} ${kept} ${fill()}`;
    return rng.int(2) === 0
      ? `${denied}, ${meant}`
      : `${meant} ${rng.int(2) === 0 ? ',' : 'but'} ${denied}`;
  });
}

/**
 * A planted status task: each state names one word of each of two sets, one said to be fine and
 * the other said to be failing, in either order ("the north is fine, the omega is down"); the
 * label is the set of the failing one. Both words are in every state, so a bag of words gets half
 * right; the pointer (src/build/train/pointer.ts), which lets "down" carry the thing named before
 * it and "fine" take it away, can get them all.
 */
const STATUS_WORDS = {
  fine: ['fine', 'ok', 'healthy', 'working'],
  failing: ['down', 'broken', 'dead', 'failing'],
} as const;

export function statusExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  return twoSetExamples(n, seed, 3, (rng, fill, failing, fine) => {
    const bad = `the ${failing} is ${STATUS_WORDS.failing[rng.int(4)] as string}`;
    const good = `the ${fine} is ${STATUS_WORDS.fine[rng.int(4)] as string}`;
    const sep = rng.int(2) === 0 ? ',' : ' but';
    return rng.int(2) === 0
      ? `${fill()} ${good}${sep} ${bad} ${fill()}`
      : `${fill()} ${bad}${sep} ${good} ${fill()}`;
  });
}

export function statusRequest(state: string, model = 'status-router') {
  return twoSetRequest(state, model, 'fault', 'Which kind of thing is at fault?');
}

export function statusJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(statusExamples(n, seed), (state) => statusRequest(state, model), 'fault');
}

/**
 * The status-task package `npm run models:tiny` trains at the trainer's defaults (where `auto`
 * keeps the pointer): test/browser/trained.spec.ts runs it on every device.
 */
export const TRAINED_STATUS = {
  count: 240,
  seed: 13,
  dir: 'public/models/trained-status',
  release: '.cache/trained-status-release',
} as const;

/**
 * The negation-task package `npm run models:tiny` trains at the trainer's defaults (where `auto`
 * keeps the scope layer): test/browser/trained.spec.ts runs it on every device.
 */
export const TRAINED_NEGATION = {
  count: 240,
  seed: 12,
  dir: 'public/models/trained-negation',
  release: '.cache/trained-negation-release',
} as const;

export function negationJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(negationExamples(n, seed), (state) => negationRequest(state, model), 'kept');
}

/**
 * A planted fault task: which of two kinds of thing is at fault. Half the states deny one thing
 * and name the other ("not the north, the south again"); half name the faulty thing after a
 * negated verb ("can't reach the south"). A bag of words is at chance on the first half; the
 * scope layer reading every cue leaves the faulty thing out of the second; reading only the cues
 * that negate a thing (scope.ts, `nominal`) gets both.
 */
const THING_CUES = ['not', 'no', 'without'] as const;
const VERB_CUES = ["can't reach", "won't open", 'cannot see', 'never got'] as const;

export function faultExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  return twoSetExamples(n, seed, 3, (rng, fill, faulty, other) =>
    rng.int(2) === 0
      ? `${fill()} ${THING_CUES[rng.int(THING_CUES.length)]} ${fill()} ${other}, ${fill()} ${faulty} ${fill()}`
      : `${fill()} ${VERB_CUES[rng.int(VERB_CUES.length)]} ${fill()} ${faulty} ${fill()}`,
  );
}

export function faultJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(faultExamples(n, seed), (state) => negationRequest(state, model), 'kept');
}

/**
 * A planted update task: each state names a word of each of two sets, one in each of two clauses
 * ("the north … but … the omega"); the label is the set of the word in the later
 * clause. Both words are in every state and neither clause has a cue word, so a bag of words (and
 * the scope layer, and the pointer) gets half right; the clause weight (model.ts), which raises
 * the words after the first break in the pooling, can get them all.
 */
const CLAUSE_BREAKS = [' but', ' -', ' while', ' though'] as const;

export function clauseExamples(n: number, seed: number): Array<{ state: string; label: string }> {
  return twoSetExamples(n, seed, 3, (rng, fill, later, earlier) => {
    const sep = CLAUSE_BREAKS[rng.int(CLAUSE_BREAKS.length)] as string;
    // "the" before each word: neither starts the state, where it would be a token of its own.
    return `${fill()} the ${earlier} ${fill()}${sep} ${fill()} the ${later} ${fill()}`;
  });
}

/**
 * The update-task package `npm run models:tiny` trains at the trainer's defaults (where `auto`
 * keeps a clause weight): test/browser/trained.spec.ts runs it on every device.
 */
export const TRAINED_CLAUSE = {
  count: 240,
  seed: 14,
  dir: 'public/models/trained-clause',
  release: '.cache/trained-clause-release',
} as const;

export function clauseRequest(state: string, model = 'clause-router') {
  return twoSetRequest(state, model, 'now', 'Which kind of word does the later clause name?');
}

export function clauseJsonl(n: number, seed: number, model?: string): string {
  return labelledJsonl(clauseExamples(n, seed), (state) => clauseRequest(state, model), 'now');
}
