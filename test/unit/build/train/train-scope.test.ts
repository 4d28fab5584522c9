/**
 * The scope layer (src/build/train/scope.ts): the marks, the bag it leaves, the tokenizer keeping
 * its words whole, and `auto` choosing it where the labels turn on a negation. The planted
 * negation task (tools/train/planted.ts, `negationExamples`) names a word of each of two sets and
 * negates one: a bag of words is at chance, a model that leaves negated words out answers every
 * fresh draw. The layer's construction is checked exactly in train-construct.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { prepareTokenizer } from '../../../../src/build/train/data.js';
import {
  SCOPE_CUE,
  SCOPE_NONE,
  SCOPE_STOP,
  SCOPE_LEFT_OUT,
  SCOPE_WORD_START,
  SCOPE_WORDS,
  scopeMark,
  scopedBag,
  scopeKind,
  scopeMarks,
} from '../../../../src/build/train/scope.js';
import { faultJsonl, negationJsonl, plantedJsonl } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { autoAgainst, parseExamples } from '../../support/planted-fit.js';

describe('the scope marks', () => {
  it('mark negation cues and clause breaks by their text, case and spacing aside', () => {
    for (const cue of [' not', 'Never', ' without', "'t", '\u2019t', " don't", 'instead'])
      expect(scopeMark(cue), cue).toBe(SCOPE_CUE);
    for (const stop of [',', '.', ' but', 'While', ';', ')', '?\n'])
      expect(scopeMark(stop), stop).toBe(SCOPE_STOP);
    for (const word of [' note', ' notes', ' prod', ' button', 't', ''])
      expect(scopeMark(word), word).toBe(SCOPE_NONE);
  });

  it('mark a dash between clauses as a break, and a hyphen within a word as nothing', () => {
    for (const dash of [' -', ' --', '\u2014', ' \u2014', '\u2013', ' \u2013'])
      expect(scopeMark(dash), JSON.stringify(dash)).toBe(SCOPE_STOP);
    for (const hyphen of ['-', '-fi', '--', 'e-'])
      expect(scopeMark(hyphen), JSON.stringify(hyphen)).toBe(SCOPE_NONE);
  });

  it('in the nominal reading, open a scope only at a cue that negates a thing, not a verb', () => {
    for (const cue of [' not', ' no', ' without', ' nothing', 'instead', ' neither'])
      expect(scopeMark(cue, 'nominal'), cue).toBe(SCOPE_CUE);
    for (const verbal of [' never', ' cannot', "'t", '\u2019t', " don't", " can't", "n't"])
      expect(scopeMark(verbal, 'nominal'), verbal).toBe(SCOPE_NONE);
    for (const stop of [',', ' but', ';'])
      expect(scopeMark(stop, 'nominal'), stop).toBe(SCOPE_STOP);
  });

  it('leave the words from a cue to the next break out of the bag, and keep the cue and the break', () => {
    // tokens: 1 wipe, 2 not, 3 prod, 4 ",", 5 temp, 6 but, 7 never, 8 staging; each a word
    const marks = new Uint8Array(9).fill(SCOPE_WORD_START);
    marks[2] = marks[7] = SCOPE_CUE + SCOPE_WORD_START;
    marks[4] = SCOPE_STOP;
    marks[6] = SCOPE_STOP + SCOPE_WORD_START;
    const bag = Int32Array.from([1, 2, 3, 3, 4, 5, 6, 7, 8, 1]);
    expect([...scopedBag(marks, bag)]).toEqual([1, 2, 4, 5, 6, 7]);
    const plain = Int32Array.from([1, 3, 5]);
    expect(scopedBag(marks, plain)).toBe(plain); // nothing in scope: the same array
  });

  it('in a bare reading, leave the cue out too, and still open its scope at the next word', () => {
    // tokens: 1 wipe, 2 not, 3 prod, 4 ",", 5 temp, 6 but, 7 never, 8 staging; each a word
    const marks = new Uint8Array(9).fill(SCOPE_WORD_START);
    marks[2] = marks[7] = SCOPE_CUE + SCOPE_WORD_START + SCOPE_LEFT_OUT;
    marks[4] = SCOPE_STOP;
    marks[6] = SCOPE_STOP + SCOPE_WORD_START;
    const bag = Int32Array.from([1, 2, 3, 3, 4, 5, 6, 7, 8, 1]);
    expect([...scopedBag(marks, bag)]).toEqual([1, 4, 5, 6]);
    // Two cues in a row: the second opens nothing of its own, and both leave.
    expect([...scopedBag(marks, Int32Array.from([1, 2, 7, 3, 4, 5]))]).toEqual([1, 4, 5]);
    // Left out whatever follows it, as the release decides at the cue: " not" + "ify" keeps "ify".
    const pieces = new Uint8Array(9).fill(SCOPE_WORD_START);
    pieces[2] = SCOPE_CUE + SCOPE_WORD_START + SCOPE_LEFT_OUT;
    pieces[3] = SCOPE_NONE;
    expect([...scopedBag(pieces, Int32Array.from([1, 2, 3, 5]))]).toEqual([1, 3, 5]);
  });

  it('mark the cues left out only in a bare reading, the cue and its kind unchanged', () => {
    const decode = (ids: number[]) =>
      [' wipe', ' not', ' prod', ',', ' never'][ids[0] as number] ?? '';
    const every = scopeMarks(decode, 5, new Set(), 'every');
    const bare = scopeMarks(decode, 5, new Set(), 'every-bare');
    const nominalBare = scopeMarks(decode, 5, new Set(), 'nominal-bare');
    expect([...bare].map((m) => m & SCOPE_LEFT_OUT)).toEqual([
      0,
      SCOPE_LEFT_OUT,
      0,
      0,
      SCOPE_LEFT_OUT,
    ]);
    expect([...every].map((m) => m & SCOPE_LEFT_OUT)).toEqual([0, 0, 0, 0, 0]);
    expect([...bare].map(scopeKind)).toEqual([...every].map(scopeKind));
    // The nominal reading's verbal cue ("never") is no cue, so nothing to leave out.
    expect([...nominalBare].map((m) => m & SCOPE_LEFT_OUT)).toEqual([0, SCOPE_LEFT_OUT, 0, 0, 0]);
  });

  it('open no scope at a cue that is the first piece of a longer word ("notify", "north")', () => {
    // tokens: 1 " not", 2 "ify", 3 " me", 4 " the", 5 " nor", 6 "th", 7 " gate"
    const marks = new Uint8Array(8).fill(SCOPE_WORD_START);
    marks[1] = marks[5] = SCOPE_CUE + SCOPE_WORD_START;
    marks[2] = marks[6] = SCOPE_NONE;
    const pieces = Int32Array.from([1, 2, 3, 4, 5, 6, 7]);
    expect(scopedBag(marks, pieces)).toBe(pieces);
    // The same cue as a word of its own opens its scope at the next word: " not the gate".
    expect([...scopedBag(marks, Int32Array.from([1, 4, 7]))]).toEqual([1]);
  });

  it('mark the pieces a tokenizer cuts "notify" and "north" into as a cue that opens nothing', () => {
    const corpus = parseExamples(plantedJsonl(80, 3));
    const { tokenizer } = prepareTokenizer(corpus, 2000, SCOPE_WORDS);
    const frozen = new Set<number>();
    const marks = scopeMarks((ids) => tokenizer.decode(ids), tokenizer.vocabSize, frozen);
    for (const text of [' notify me about the north gate', ' normally it is fine']) {
      const ids = Int32Array.from(tokenizer.encode(text));
      // The premise: a piece of a longer word reads as a cue ...
      const inWord = [...ids].some(
        (t, i) =>
          scopeKind(marks[t] as number) === SCOPE_CUE &&
          i + 1 < ids.length &&
          ((marks[ids[i + 1] as number] as number) & SCOPE_WORD_START) === 0,
      );
      expect(inWord, text).toBe(true);
      // ... and leaves the words after it in the bag.
      expect(tokenizer.decode([...scopedBag(marks, ids)])).toBe(text);
    }
  });

  it('are whole tokens when the tokenizer is given the scope words, even ones the file lacks', () => {
    const corpus = parseExamples(plantedJsonl(80, 3));
    const encodeWith = (words: readonly string[]) => {
      // Room for every merge the file and the words ask for (at 600 the file alone fills it).
      const { tokenizer } = prepareTokenizer(corpus, 2000, words);
      return tokenizer
        .encode(" we don't want it, never without a refund but whereas")
        .map((t) => scopeMark(tokenizer.decode([t])));
    };
    const marked = encodeWith(SCOPE_WORDS);
    expect(marked.filter((m) => m === SCOPE_CUE)).toHaveLength(3); // 't, never, without
    expect(marked.filter((m) => m === SCOPE_STOP)).toHaveLength(3); // ",", but, whereas
    // Without them, the words the planted file lacks are split and mark nothing.
    expect(encodeWith([]).filter((m) => m === SCOPE_CUE).length).toBeLessThan(3);
  });

  it('close a scope at a spaced dash or an em dash, but not at the hyphen of a word', () => {
    const corpus = parseExamples(plantedJsonl(80, 3));
    const { tokenizer } = prepareTokenizer(corpus, 2000, SCOPE_WORDS);
    const scoped = (text: string) => {
      const ids = tokenizer.encode(text);
      const marks = scopeMarks((t) => tokenizer.decode(t), tokenizer.vocabSize, new Set());
      return tokenizer.decode([...scopedBag(marks, Int32Array.from(ids))]);
    };
    expect(scoped(' not the vpn - the wifi is down')).toBe(' not - the wifi is down');
    expect(scoped(' not staging \u2014 production')).toBe(' not \u2014 production');
    expect(scoped(' not the read-only wi-fi role')).toBe(' not');
  });
});

/**
 * `auto` fitted on `trainText` and judged on `freshText`, beside a control fitted with `control`
 * (the plain model, or one reading of the scope layer) at the settings `auto` chose.
 */
describe('the scope layer in training', () => {
  it('is chosen by cross-fitting where the labels turn on a negation, and answers fresh draws (≥ 95%) where the bag of words is at chance', async () => {
    const SEED = testSeed('train-scope');
    // The control: the plain model (no scope layer).
    const {
      selection,
      progress,
      chosenAccuracy: scopeAccuracy,
      controlAccuracy: plainAccuracy,
    } = await autoAgainst(negationJsonl(240, SEED), negationJsonl(400, SEED + 1), SEED, () => null);
    // Its progress counted the fits at the most from the first (the scope layer's readings, the
    // pointer and the order layer among them) and never raised the count.
    expect(progress.grew()).toEqual([]);
    const made = progress.made(selection.scores, selection.folds, selection.order);
    expect(progress.calls.at(-1)).toEqual({ done: made, total: made, settled: true });
    // Its fits left by kind add up to the total's, and none are left at the end.
    expect(progress.miscounted()).toEqual([]);
    // Each fit was reported as the kind it was, as the time left counts it.
    expect(progress.finishedByKind()).toEqual(progress.madeByKind(selection));
    expect(progress.calls[0]?.total).toBeGreaterThan(made);
    console.log(
      `[train-scope] fresh draws: auto ${(scopeAccuracy * 100).toFixed(1)}% (scope layer ${selection.scope}, order layer ${selection.order}), plain ${(plainAccuracy * 100).toFixed(1)}%`,
    );
    expect(selection.scope, seedLine('train-scope', SEED)).toBe(true);
    expect(selection.scopeTried).toBe(true);
    // Half the planted cues negate a verb ("never", "don't"): the reading of every cue is kept
    // (the cues themselves left in the bag or out, as cross-fitting finds).
    expect(['every', 'every-bare'], seedLine('train-scope', SEED)).toContain(selection.scopeCues);
    expect(plainAccuracy, seedLine('train-scope plain', SEED)).toBeLessThan(0.65);
    expect(scopeAccuracy, seedLine('train-scope', SEED)).toBeGreaterThanOrEqual(0.95);
  }, 600_000);

  it('reads only the cues that negate a thing where a negated verb names the answer ("can\'t reach the south")', async () => {
    const SEED = testSeed('train-scope-nominal');
    // The control: the scope layer reading every cue.
    const {
      selection,
      chosenAccuracy,
      controlAccuracy: everyAccuracy,
    } = await autoAgainst(faultJsonl(160, SEED), faultJsonl(400, SEED + 1), SEED, () => 'every');
    console.log(
      `[train-scope-nominal] fresh draws: auto ${(chosenAccuracy * 100).toFixed(1)}% (scope cues ${selection.scopeCues}), every cue ${(everyAccuracy * 100).toFixed(1)}%`,
    );
    expect(['nominal', 'nominal-bare'], seedLine('train-scope-nominal', SEED)).toContain(
      selection.scopeCues,
    );
    expect(everyAccuracy, seedLine('train-scope-nominal every', SEED)).toBeLessThan(0.9);
    expect(chosenAccuracy, seedLine('train-scope-nominal', SEED)).toBeGreaterThanOrEqual(0.95);
  }, 600_000);
});
