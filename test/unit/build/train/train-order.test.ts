/**
 * The order layer learns word order: the planted order task's label is which of two planted
 * words comes first (tools/train/planted.ts, `orderExamples`), with filler words around and
 * between them, so any bag of words answers at chance (50%). Fitted on 480 draws, the model with
 * the order layer is judged on 400 fresh draws of another seed; the plain model, fitted on the
 * same draws, is the control that shows the task cannot be read from the words alone.
 *
 * The target is ≥ 99% on fresh draws. With the order layer's default bank of four
 * memories (pairs.ts DEFAULT_PAIR_SHAPE) at ORDER_SETTINGS, where `train` tries and fits it (the
 * defaults' λ, the layer's penalty at 10⁻² λ: ORDER_PAIR_LAMBDA), 53 seeds
 * all gave ≥ 99%: seeds 5, 101, 202, 11, 12, 13, 584833, 21-27, 31-38 and 994832 gave 99.0% at
 * the least (seed 13), seeds 100001-100015 and 200001-200015, drawn after the bank was chosen,
 * 100% on 28 and 99.75% on 2. The bank it replaced (two fixed-lag heads and two memories) got
 * 96.5% on seed 994832, where CI failed this test's earlier bound of 97%. Seed 162627 then gave
 * 97.25% from the fit's first start, where CI failed this test's bound of 98%: the model `train`
 * keeps is fitted from two starts (learner.ts ORDER_STARTS), as here, and gets 100% there. A seed
 * may still fall a draw or two short of 99%, so this test asserts 98%, far above the bag of
 * words' chance (and fails with the order layer removed); the figures are in docs/benchmarks.md,
 * "Four memories in the order layer" and "Two starts for the order layer".
 * The construction of a model with the order layer is checked exactly in train-construct.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import { learnerSetup } from '../../../../src/build/train/fit.js';
import { MAX_ITERATIONS, ORDER_SETTINGS } from '../../../../src/build/train/layer-settings.js';
import { fitModel, ORDER_STARTS } from '../../../../src/build/train/learner.js';
import { DEFAULT_PAIR_SHAPE } from '../../../../src/build/train/pairs.js';
import { DEFAULT_SETTINGS } from '../../../../src/build/train/select.js';
import { orderJsonl } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { binaryAccuracy, plantedData } from '../../support/planted-fit.js';

describe('the order layer', () => {
  it('answers the planted order task on fresh draws (≥ 98%; target 99%), where the bag of words is at chance', async () => {
    const SEED = testSeed('train-order');
    const { questions, data, encoded, freshEncoded, groups } = plantedData(
      orderJsonl(480, SEED),
      orderJsonl(400, SEED + 1),
    );
    const options = { rmsEps: RMS_EPS };

    const plain = await fitModel(learnerSetup(data, questions, groups, options, null), encoded, {
      settings: DEFAULT_SETTINGS,
      maxIterations: MAX_ITERATIONS,
    });
    const ordered = await fitModel(
      learnerSetup(data, questions, groups, options, DEFAULT_PAIR_SHAPE),
      encoded,
      {
        settings: ORDER_SETTINGS,
        maxIterations: MAX_ITERATIONS,
        starts: ORDER_STARTS,
      },
    );
    const plainAccuracy = binaryAccuracy(plain.params, freshEncoded);
    const orderedAccuracy = binaryAccuracy(ordered.params, freshEncoded);
    console.log(
      `[train-order] fresh draws: with the order layer ${(orderedAccuracy * 100).toFixed(1)}%, ` +
        `plain ${(plainAccuracy * 100).toFixed(1)}% (${ordered.iterations} iterations)`,
    );
    expect(plainAccuracy, seedLine('train-order plain', SEED)).toBeLessThan(0.65);
    expect(orderedAccuracy, seedLine('train-order', SEED)).toBeGreaterThanOrEqual(0.98);
    // Three fits of 480 examples (the plain one, two starts), ~80 s together on an idle 2-core machine.
  }, 600_000);
});
