/**
 * The clause weight (model.ts ModelShape.clauseWeight): in the planted update task
 * (tools/train/planted.ts, `clauseExamples`) every state names a word of each of two sets, one in
 * each of two clauses, and the label is the later one's set, so a bag of words, and the scope
 * layer with it, answers at chance (50%). `clef-web train`'s fit phase at its defaults (`auto`)
 * fitted on 240 draws must try the clause weights, keep one, and answer 400 fresh draws of
 * another seed; the kept reading without the weight, fitted on the same draws, is the control.
 * Measured on seeds 1-4 when the test was written: 100% with the weight (2, each time), 45.5-52.3%
 * without. The construction of a release with a clause weight is checked exactly in
 * train-construct.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CLAUSE_WEIGHTS } from '../../../../src/build/train/layer-settings.js';
import { clauseJsonl } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { autoAgainst } from '../../support/planted-fit.js';

describe('the clause weight', () => {
  it('is chosen by cross-fitting where the later clause decides, and answers fresh draws (≥ 95%) where the bag of words is at chance', async () => {
    const SEED = testSeed('train-clause');
    const { selection, params, progress, chosenAccuracy, controlAccuracy } = await autoAgainst(
      clauseJsonl(240, SEED),
      clauseJsonl(400, SEED + 1),
      SEED,
      (chosen) => chosen.scopeCues,
    );
    const cues = selection.scopeCues;
    console.log(
      `[train-clause] fresh draws: auto ${(chosenAccuracy * 100).toFixed(1)}% (clause weight ${selection.clauseWeight}, reading ${cues}), without the weight ${(controlAccuracy * 100).toFixed(1)}%`,
    );
    expect(selection.clauseTried).toBe(true);
    expect(CLAUSE_WEIGHTS, seedLine('train-clause', SEED)).toContain(selection.clauseWeight);
    expect(params.shape.clauseWeight).toBe(selection.clauseWeight);
    expect(controlAccuracy, seedLine('train-clause control', SEED)).toBeLessThan(0.6);
    expect(chosenAccuracy, seedLine('train-clause', SEED)).toBeGreaterThanOrEqual(0.95);
    // The progress counted the clause weights' fits from the first and never raised the count.
    expect(progress.grew()).toEqual([]);
    const made = progress.made(selection.scores, selection.folds, selection.order);
    expect(progress.calls.at(-1)).toEqual({ done: made, total: made, settled: true });
    // Its fits left by kind add up to the total's, and none are left at the end.
    expect(progress.miscounted()).toEqual([]);
    // Each fit was reported as the kind it was, as the time left counts it.
    expect(progress.finishedByKind()).toEqual(progress.madeByKind(selection));
  }, 600_000);
});
