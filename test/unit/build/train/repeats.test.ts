/**
 * Lines whose states read the same (repeats.ts): found case, spacing, Unicode form and a word's
 * edge punctuation aside,
 * dealt one fold of the cross-fit and one side of the held-out split with their first copy (the
 * deal unchanged where nothing repeats), reported with the labels that disagree, and counted once
 * for each option's minimum of different texts.
 */
import { describe, expect, it } from 'vitest';
import { parseLabelledExamples, type LabelledExample } from '../../../../src/calibrate/examples.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import { checkExamples } from '../../../../src/build/train/data.js';
import type { ModelExample } from '../../../../src/build/train/model.js';
import { splitHoldout } from '../../../../src/build/train/prepare.js';
import {
  CONFLICTS_LISTED,
  firstCopies,
  repeatNotes,
  repeatReport,
} from '../../../../src/build/train/repeats.js';
import { assignFolds } from '../../../../src/build/train/select.js';
import { isTrainError } from '../../../../src/build/train/errors.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { seedLine, testSeed } from '../../../support/seed.js';

const QUESTION = { type: 'choice', criteria: { a: null, b: null, c: null } };

function parse(rows: ReadonlyArray<[string, string]>): LabelledExample[] {
  const lines = rows.map(([state, label]) =>
    JSON.stringify({
      request: { model: 'm', state, questions: { q: QUESTION } },
      labels: { q: label },
    }),
  );
  return parseLabelledExamples(lines.join('\n'), { validateRequest: (b) => validateRequest(b) });
}

/** What assignFolds reads of an encoded example: its first labelled answer. */
const encoded = (examples: readonly LabelledExample[]): ModelExample[] =>
  examples.map((e) => ({ questions: [{ label: e.labels.get('q') }] }) as unknown as ModelExample);

/** `n` different lines, each label in turn, and `copies` lines that repeat earlier ones. */
function fileWithCopies(rng: Rng, n: number, copies: number): Array<[string, string]> {
  const rows: Array<[string, string]> = Array.from({ length: n }, (_, i) => [
    `line ${i} says ${rng.int(1000)}`,
    'abc'[i % 3] as string,
  ]);
  for (let c = 0; c < copies; c++) {
    const [state, label] = rows[rng.int(n)] as [string, string];
    const spelled = [
      state.toUpperCase(),
      `  ${state.replace(/ /g, '\t ')} `,
      `${state.replace(/ /, ', ')}!`,
    ][rng.int(3)] as string;
    rows.splice(rng.int(rows.length + 1), 0, [spelled, label]);
  }
  return rows;
}

describe('firstCopies', () => {
  it('finds copies whatever their case, spacing and Unicode form, and nothing else', () => {
    const examples = parse([
      ['The VPN is down', 'a'],
      ['the vpn  is down', 'b'],
      ['email is down', 'a'],
      ['\u00e9mail is down', 'a'],
      ['e\u0301mail is down ', 'c'],
      ['THE VPN IS DOWN', 'a'],
    ]);
    expect(firstCopies(examples)).toEqual([0, 0, 2, 3, 3, 0]);
  });

  it("finds copies whatever the punctuation at a word's edge, and not where it changes a word", () => {
    const examples = parse([
      ['refund please', 'a'],
      ['Refund, please!', 'b'],
      ['"refund" please...', 'a'],
      ['costs 3.5', 'a'],
      ['costs 35', 'a'],
      ['costs 3.5.', 'c'],
      ["don't wipe it", 'a'],
      ['dont wipe it', 'a'],
      ['it is -5 out', 'a'],
      ['it is 5 out', 'a'],
      ['???', 'a'],
      ['!!!', 'b'],
      ['great food \u{1F600}', 'a'],
      ['great food \u{1F621}', 'a'],
    ]);
    expect(firstCopies(examples)).toEqual([0, 0, 0, 3, 4, 3, 6, 7, 8, 9, 10, 11, 12, 13]);
  });
});

describe('assignFolds and splitHoldout with copies', () => {
  it("deal each copy its first's fold and side, and deal a file without copies as before", () => {
    const seed = testSeed('repeats folds');
    const at = seedLine('repeats folds', seed);
    const rng = new Rng(seed);
    for (let round = 0; round < 20; round++) {
      // Without copies: the same deal with and without firstCopies.
      const plain = parse(fileWithCopies(rng, 30 + rng.int(50), 0));
      const identity = firstCopies(plain);
      expect(identity, at).toEqual(plain.map((_, i) => i));
      expect(assignFolds(encoded(plain), 5, round, identity), at).toEqual(
        assignFolds(encoded(plain), 5, round),
      );
      const before = splitHoldout(plain, 0.2, round);
      const after = splitHoldout(plain, 0.2, round, identity);
      expect(
        after.heldOut.map((e) => e.line),
        at,
      ).toEqual(before.heldOut.map((e) => e.line));

      // With copies: each copy goes with its first, and every fold still gets lines.
      const examples = parse(fileWithCopies(rng, 20 + rng.int(40), 5 + rng.int(40)));
      const first = firstCopies(examples);
      expect(
        first.some((f, i) => f !== i),
        at,
      ).toBe(true);
      const folds = assignFolds(encoded(examples), 5, round, first);
      first.forEach((f, i) => expect(folds[i], at).toBe(folds[f]));
      expect(new Set(folds).size, at).toBe(5);
      const split = splitHoldout(examples, 0.2, round, first);
      const held = new Set(split.heldOut);
      first.forEach((f, i) =>
        expect(held.has(examples[i] as LabelledExample), at).toBe(
          held.has(examples[f] as LabelledExample),
        ),
      );
      expect(split.heldOut.length, at).toBeGreaterThan(0);
    }
  });

  it('would deal copies apart without firstCopies (the grouping is what keeps them together)', () => {
    const examples = parse(
      Array.from({ length: 40 }, (_, i) => [`same text`, 'ab'[i % 2]] as [string, string]),
    );
    const folds = assignFolds(encoded(examples), 5, 1);
    expect(new Set(folds).size).toBe(5);
    expect(new Set(assignFolds(encoded(examples), 5, 1, firstCopies(examples))).size).toBe(1);
  });
});

describe('repeatReport and repeatNotes', () => {
  it('counts the copies, lists the labels that disagree by line, and says so', () => {
    const examples = parse([
      ['the soup was cold', 'a'],
      ['our waiter was rude', 'b'],
      ['The soup was cold', 'b'],
      ['our waiter was rude', 'b'],
      ['the soup was cold', 'a'],
      ['the soup was cold ', 'c'],
      ['the soup was cold', 'a'],
      ['the soup was cold', 'a'],
    ]);
    const report = repeatReport(examples, firstCopies(examples), { train: examples, heldOut: [] });
    expect(report.repeated).toBe(6);
    expect(report.conflictCount).toBe(1);
    expect(report.conflicts).toEqual([
      {
        question: 'q',
        state: 'the soup was cold',
        labels: [
          { label: 'a', lines: [1, 5, 7], count: 4 },
          { label: 'b', lines: [3], count: 1 },
          { label: 'c', lines: [6], count: 1 },
        ],
      },
    ]);
    const notes = repeatNotes(report);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^6 lines repeat the text of an earlier line/);
    expect(notes[1]).toBe(
      '1 text has different labels on different lines, and the model gives a text one answer: check it: "the soup was cold" (q): a on lines 1, 5, 7 and 1 more, b on line 3, c on line 6.',
    );
    expect(repeatNotes({ repeated: 0, conflicts: [], conflictCount: 0, heldOutSeen: 0 })).toEqual(
      [],
    );
  });

  it(`lists ${CONFLICTS_LISTED} conflicts and counts the rest; counts held-out lines a training line has`, () => {
    const rows: Array<[string, string]> = [];
    for (let i = 0; i < CONFLICTS_LISTED + 3; i++)
      rows.push([`text ${i}`, 'a'], [`text ${i}`, 'b']);
    const examples = parse(rows);
    const heldOut = parse([
      ['TEXT 1', 'a'],
      ['something new', 'b'],
    ]);
    const report = repeatReport(examples, firstCopies(examples), { train: examples, heldOut });
    expect(report.conflictCount).toBe(CONFLICTS_LISTED + 3);
    expect(report.conflicts).toHaveLength(CONFLICTS_LISTED);
    expect(report.heldOutSeen).toBe(1);
    const notes = repeatNotes(report);
    expect(notes[1]).toContain('check these and 3 more:');
    expect(notes[2]).toBe(
      '1 held-out line has the text of a training line: the held-out figures are not all on unseen text.',
    );
  });
});

describe('the minimum of examples an option needs', () => {
  it('counts different texts: copies of one line are one example', () => {
    const rows: Array<[string, string]> = [];
    for (let i = 0; i < 20; i++) rows.push([`a line ${i}`, 'a'], [`b line ${i}`, 'b']);
    for (let i = 0; i < 20; i++) rows.push([i % 2 ? 'the C LINE' : 'the c line', 'c']);
    let error: unknown;
    try {
      checkExamples(parse(rows));
    } catch (e) {
      error = e;
    }
    expect(isTrainError(error) && error.code).toBe('examples_unlearnable');
    expect((error as Error).message).toContain(
      'option "c" has 20 labelled examples for training but 1 different text (a line that repeats another\'s text, case, spacing and punctuation aside, counts once); it needs at least 5 different texts',
    );
    for (let i = 0; i < 4; i++) rows.push([`c line ${i}`, 'c']);
    expect(checkExamples(parse(rows)).map((q) => q.counts)).toEqual([{ a: 20, b: 20, c: 24 }]);
  });
});
