/**
 * The pointer (src/build/train/pointer.ts) learns which thing a status word speaks of: in the
 * planted status task (tools/train/planted.ts, `statusExamples`) every state names a thing of each
 * of two sets, one fine and one failing, in either order ("the north is fine, the omega is down"),
 * so a bag of words, and the scope layer with it, answers at chance (50%). Fitted on 240 draws,
 * the model with the pointer after the scope layer is judged on 400 fresh draws of another seed;
 * the scope layer alone, fitted on the same draws, is the control. Measured on seeds 1-5 when the
 * test was written: 100% with the pointer on every one, 46.5-53.5% with the scope layer alone.
 * The construction of a release with the pointer is checked exactly in train-construct.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import { learnerSetup } from '../../../../src/build/train/fit.js';
import { MAX_ITERATIONS, POINTER_PAIR_LAMBDA } from '../../../../src/build/train/layer-settings.js';
import { fitModel } from '../../../../src/build/train/learner.js';
import { pointerShape } from '../../../../src/build/train/pointer.js';
import { SCOPE_WORDS } from '../../../../src/build/train/scope.js';
import { DEFAULT_SETTINGS } from '../../../../src/build/train/select.js';
import { statusJsonl } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { binaryAccuracy, plantedData } from '../../support/planted-fit.js';

describe('the pointer', () => {
  it('answers the planted status task on fresh draws (≥ 95%), where the bag of words is at chance', async () => {
    const SEED = testSeed('train-pointer');
    const { questions, data, encoded, freshEncoded, groups } = plantedData(
      statusJsonl(240, SEED),
      statusJsonl(400, SEED + 1),
      SCOPE_WORDS,
    );
    const options = { rmsEps: RMS_EPS };
    const fit = (setup: ReturnType<typeof learnerSetup>, pairLambda?: number) =>
      fitModel(setup, encoded, {
        settings: { ...DEFAULT_SETTINGS, ...(pairLambda === undefined ? {} : { pairLambda }) },
        maxIterations: MAX_ITERATIONS,
      });

    const scoped = await fit(learnerSetup(data, questions, groups, options, 'every'));
    const classWidth = learnerSetup(data, questions, groups, options, null).classWidth;
    const pointed = await fit(
      learnerSetup(data, questions, groups, options, {
        cues: 'every',
        pairs: pointerShape(classWidth),
      }),
      POINTER_PAIR_LAMBDA,
    );
    const scopedAccuracy = binaryAccuracy(scoped.params, freshEncoded);
    const pointedAccuracy = binaryAccuracy(pointed.params, freshEncoded);
    console.log(
      `[train-pointer] fresh draws: with the pointer ${(pointedAccuracy * 100).toFixed(1)}%, ` +
        `the scope layer alone ${(scopedAccuracy * 100).toFixed(1)}% (${pointed.iterations} iterations)`,
    );
    expect(scopedAccuracy, seedLine('train-pointer scope', SEED)).toBeLessThan(0.65);
    expect(pointedAccuracy, seedLine('train-pointer', SEED)).toBeGreaterThanOrEqual(0.95);
  }, 300_000);
});
