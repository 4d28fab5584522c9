// The project's hand-written tasks (data/tasks) are what the training figures in docs/ are
// measured on, so their promises are checked here: every label is an option of its question,
// the files hold the lines data/tasks/README.md says, every minimal pair is two lines of one
// question with different labels, and no line a model is judged on repeats a line it trains on.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const TASKS = resolve(import.meta.dirname, '../../../data/tasks');

interface Line {
  text: string;
  label: string;
  question?: string;
  kind?: string;
  pair?: string | null;
}

const read = (file: string): Line[] =>
  readFileSync(join(TASKS, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);

const optionsOf = (question: { criteria: Record<string, unknown> }): string[] =>
  Object.keys(question.criteria);

/** A line as a reader would compare it: its words, case, spacing and punctuation aside. */
const norm = (text: string): string =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) ?? []).join(' ');

/** Lines of `judged` whose text is also a line of `trained`. */
function repeated(judged: readonly Line[], trained: readonly Line[]): string[] {
  const seen = new Set(trained.map((l) => norm(l.text)));
  return judged.filter((l) => seen.has(norm(l.text))).map((l) => l.text);
}

/** Pair ids that are not two lines of one question with different labels. */
function badPairs(lines: readonly Line[]): string[] {
  const byPair = new Map<string, Line[]>();
  for (const l of lines) if (l.pair) byPair.set(l.pair, [...(byPair.get(l.pair) ?? []), l]);
  return [...byPair]
    .filter(([, ls]) => {
      const [a, b] = ls as [Line, Line];
      return ls.length !== 2 || a.question !== b.question || a.label === b.label;
    })
    .map(([id]) => id);
}

describe('data/tasks', () => {
  const questions = JSON.parse(readFileSync(join(TASKS, 'ops/questions.json'), 'utf8')) as Record<
    string,
    { criteria: Record<string, unknown> }
  >;
  const ops = {
    train: read('ops/train.jsonl'),
    trainPairs: read('ops/train-pairs.jsonl'),
    test: read('ops/test.jsonl'),
    fresh: read('ops/fresh.jsonl'),
    freshPairs: read('ops/fresh-pairs.jsonl'),
    freshNegations: read('ops/fresh-negations.jsonl'),
    freshSpare: read('ops/fresh-spare.jsonl'),
    freshCopula: read('ops/fresh-copula.jsonl'),
    freshSwaps: read('ops/fresh-swaps.jsonl'),
    freshBinding: read('ops/fresh-binding.jsonl'),
  };

  it('holds the lines its README lists', () => {
    const counts = Object.fromEntries(Object.entries(ops).map(([k, v]) => [k, v.length]));
    expect(counts).toEqual({
      train: 320,
      trainPairs: 90,
      test: 320,
      fresh: 60,
      freshPairs: 60,
      freshNegations: 36,
      freshSpare: 24,
      freshCopula: 12,
      freshSwaps: 52,
      freshBinding: 48,
    });
    expect(read('helpdesk/train.jsonl')).toHaveLength(280);
    expect(read('helpdesk/test.jsonl')).toHaveLength(190);
    expect(ops.freshPairs.every((l) => l.kind === 'fresh-pair')).toBe(true);
    expect(ops.freshNegations.every((l) => l.kind === 'fresh-negation')).toBe(true);
    expect(ops.freshSpare.every((l) => l.kind === 'fresh-spare')).toBe(true);
    expect(ops.freshCopula.every((l) => l.kind === 'fresh-copula')).toBe(true);
    expect(ops.freshSwaps.every((l) => l.kind === 'fresh-swap')).toBe(true);
    expect(ops.freshBinding.every((l) => l.kind === 'fresh-binding')).toBe(true);
  });

  it("labels every ops line with one of its question's options", () => {
    const wrong = Object.values(ops)
      .flat()
      .filter((l) => {
        const question = questions[l.question ?? ''];
        return question === undefined || !optionsOf(question).includes(l.label);
      });
    expect(wrong).toEqual([]);
  });

  it('labels every helpdesk line with one of its options', () => {
    const question = JSON.parse(readFileSync(join(TASKS, 'helpdesk/question.json'), 'utf8'));
    const options = optionsOf(question);
    const lines = [...read('helpdesk/train.jsonl'), ...read('helpdesk/test.jsonl')];
    expect(lines.filter((l) => !options.includes(l.label))).toEqual([]);
  });

  it('makes every minimal pair two lines of one question with different labels', () => {
    expect(badPairs(ops.test)).toEqual([]);
    expect(badPairs(ops.freshPairs)).toEqual([]);
    expect(badPairs(ops.freshSpare)).toEqual([]);
    expect(badPairs(ops.freshSwaps)).toEqual([]);
    expect(badPairs(ops.freshBinding)).toEqual([]);
    expect(new Set(ops.freshBinding.map((l) => l.pair)).size).toBe(24);
    expect(new Set(ops.freshSpare.map((l) => l.pair)).size).toBe(12);
    expect(new Set(ops.freshSwaps.map((l) => l.pair)).size).toBe(26);
    expect(new Set(ops.test.flatMap((l) => (l.pair ? [l.pair] : []))).size).toBe(90);
    expect(new Set(ops.freshPairs.map((l) => l.pair)).size).toBe(30);
    // train-pairs.jsonl's pairs are consecutive lines with the roles swapped.
    const swapped = ops.trainPairs.filter(
      (l, i) => i % 2 === 1 && (ops.trainPairs[i - 1] as Line).label === l.label,
    );
    expect(swapped).toEqual([]);
  });

  it('never judges a model on a line it trains on', () => {
    const trained = [...ops.train, ...ops.trainPairs];
    const judged = [
      ...ops.test,
      ...ops.fresh,
      ...ops.freshPairs,
      ...ops.freshNegations,
      ...ops.freshSpare,
      ...ops.freshCopula,
      ...ops.freshSwaps,
      ...ops.freshBinding,
    ];
    expect(repeated(judged, trained)).toEqual([]);
    expect(repeated(read('helpdesk/test.jsonl'), read('helpdesk/train.jsonl'))).toEqual([]);
  });

  it('finds a repeated line and a broken pair (the checks can fail)', () => {
    const line = ops.train[0] as Line;
    expect(repeated([{ ...line, text: ` ${line.text.toUpperCase()} ` }], ops.train)).toHaveLength(
      1,
    );
    const [a, b] = ops.freshPairs as [Line, Line];
    expect(badPairs([a, { ...b, label: a.label }])).toEqual([a.pair]);
    expect(badPairs([a])).toEqual([a.pair]);
  });

  it('holds agentgate as its README says: labels its options, pairs whole, nothing repeated', () => {
    const question = JSON.parse(readFileSync(join(TASKS, 'agentgate/question.json'), 'utf8'));
    const train = read('agentgate/train.jsonl');
    const test = read('agentgate/test.jsonl');
    expect(train).toHaveLength(80);
    expect(test).toHaveLength(52);
    const options = optionsOf(question);
    expect([...train, ...test].filter((l) => !options.includes(l.label))).toEqual([]);
    for (const option of options) expect(train.filter((l) => l.label === option)).toHaveLength(40);
    const kinds = (kind: string) => test.filter((l) => l.kind === kind).length;
    expect([kinds('plain'), kinds('negation'), kinds('pair')]).toEqual([20, 8, 24]);
    expect(badPairs(test)).toEqual([]);
    expect(new Set(test.flatMap((l) => (l.pair ? [l.pair] : []))).size).toBe(12);
    // Written apart from its training part and from every other task's lines.
    const others = [
      ...Object.values(ops).flat(),
      ...['helpdesk', 'bikeshop', 'devices'].flatMap((t) => [
        ...read(`${t}/train.jsonl`),
        ...read(`${t}/test.jsonl`),
      ]),
    ];
    expect(repeated(test, [...train, ...others])).toEqual([]);
    expect(repeated(train, others)).toEqual([]);
  });
  it('holds bistro as its README says: labels its options, pairs whole, nothing repeated', () => {
    const question = JSON.parse(readFileSync(join(TASKS, 'bistro/question.json'), 'utf8'));
    const train = read('bistro/train.jsonl');
    const test = read('bistro/test.jsonl');
    const options = optionsOf(question);
    expect(options).toEqual(['food', 'service', 'nothing', 'other']);
    expect([...train, ...test].filter((l) => !options.includes(l.label))).toEqual([]);
    for (const option of options) expect(train.filter((l) => l.label === option)).toHaveLength(35);
    const kinds = (kind: string) => test.filter((l) => l.kind === kind).length;
    expect([kinds('plain'), kinds('negation'), kinds('pair')]).toEqual([60, 8, 20]);
    for (const option of options)
      expect(test.filter((l) => l.kind === 'plain' && l.label === option)).toHaveLength(15);
    expect(badPairs(test)).toEqual([]);
    // Each pair: its first line food, its second service.
    const pairs = test.filter((l) => l.pair);
    expect(pairs.map((l) => l.label)).toEqual(pairs.map((_, i) => (i % 2 ? 'service' : 'food')));
    expect(new Set(pairs.map((l) => l.pair)).size).toBe(10);
    const others = [
      ...Object.values(ops).flat(),
      ...['helpdesk', 'bikeshop', 'devices', 'agentgate'].flatMap((t) => [
        ...read(`${t}/train.jsonl`),
        ...read(`${t}/test.jsonl`),
      ]),
    ];
    expect(repeated(test, [...train, ...others])).toEqual([]);
    expect(repeated(train, others)).toEqual([]);
    // The optional lines that name the fault first: 10 a label, none a test line.
    const order = read('bistro/train-order.jsonl');
    expect(order.map((l) => l.label)).toEqual([
      ...Array(10).fill('food'),
      ...Array(10).fill('service'),
    ]);
    expect(repeated(test, [...order, ...others])).toEqual([]);
    expect(repeated(order, [...train, ...others])).toEqual([]);
  });
});
