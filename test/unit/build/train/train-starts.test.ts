/**
 * The kept model with the order layer is fitted from ORDER_STARTS starts (learner.ts): each start
 * is the fit a single start at its seed gives, and the one with the lowest objective is kept. Each
 * start reports its own iterations and its end (`train`'s progress counts a start as a fit). On a
 * small planted order file and a short cap, so each fit takes a second or two; then the fit phase
 * with the layer forced on 16 draws (seven fits of 400 iterations at most, ~10 s).
 */
import { describe, expect, it } from 'vitest';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import { fitPhase, learnerSetup } from '../../../../src/build/train/fit.js';
import { FitClock, type FitReport } from '../../../../src/build/train/fit-progress.js';
import { ORDER_SETTINGS } from '../../../../src/build/train/layer-settings.js';
import {
  fitModel,
  ORDER_STARTS,
  type FitOptions,
  startsFor,
  type FittedModel,
} from '../../../../src/build/train/learner.js';
import { DEFAULT_PAIR_SHAPE } from '../../../../src/build/train/pairs.js';
import { orderJsonl } from '../../../../tools/train/planted.js';
import { plantedData } from '../../support/planted-fit.js';

const CAP = 25;

describe('the order layer fitted from several starts', () => {
  const { questions, data, encoded, groups } = plantedData(orderJsonl(96, 7), orderJsonl(8, 8));
  const ordered = learnerSetup(data, questions, groups, { rmsEps: RMS_EPS }, DEFAULT_PAIR_SHAPE);
  const plain = learnerSetup(data, questions, groups, { rmsEps: RMS_EPS }, null);
  const settings = ORDER_SETTINGS;
  const fit = (
    seed: number,
    starts: number,
    progress?: Pick<FitOptions, 'onIteration' | 'onStartFitted'>,
  ) => fitModel(ordered, encoded, { settings, maxIterations: CAP, seed, starts, ...progress });
  const bytes = (m: FittedModel) => [
    Array.from(m.params.theta),
    Array.from(m.params.pairs?.u ?? []),
    Array.from(m.params.pairs?.wo ?? []),
  ];

  it('keeps the start with the lowest objective, the same weights as that start alone', async () => {
    expect(startsFor(ordered)).toBe(ORDER_STARTS);
    expect(startsFor(plain)).toBe(1);
    // At these two first seeds the lowest objective is another start's, so a fit that kept the
    // first start, or the last, fails one of them.
    const keptIndex: number[] = [];
    for (const first of [11, 12]) {
      const alone = [];
      for (let s = 0; s < ORDER_STARTS; s++) alone.push(await fit(first + s, 1));
      const objectives = alone.map((m) => m.objective);
      expect(new Set(objectives).size).toBe(ORDER_STARTS);
      const index = objectives.indexOf(Math.min(...objectives));
      keptIndex.push(index);
      const best = alone[index] as FittedModel;
      const reported: string[] = [];
      const kept = await fit(first, ORDER_STARTS, {
        onIteration: (i) => reported.push(`iteration ${i}`),
        onStartFitted: (start) => reported.push(`start ${start} fitted`),
      });
      expect(kept.objective).toBe(best.objective);
      expect(bytes(kept)).toEqual(bytes(best));
      // Every iteration of each start is reported, counted from 1, then that start's end.
      expect(reported).toEqual(
        alone.flatMap((m, start) => [
          ...Array.from({ length: m.iterations }, (_, i) => `iteration ${i + 1}`),
          `start ${start} fitted`,
        ]),
      );
    }
    expect(new Set(keptIndex).size, 'the kept start should differ between the seeds').toBe(2);
  }, 120_000);

  it("is fitted at its own settings, each start of the kept model a fit in train's progress and its time left", async () => {
    // The fit phase with the order layer forced, on a few draws: its five folds at the layer's
    // own settings, then the final fit's starts, each a fit of the count. The time left during
    // the first start counts the second (it read "about 0 s left" through the second start while
    // the final fit was one fit).
    const small = plantedData(orderJsonl(16, 7), orderJsonl(8, 8));
    const reports: FitReport[] = [];
    const clock = new FitClock();
    const said: Array<number | undefined> = [];
    const phase = await fitPhase(
      small.data,
      small.questions,
      { examples: small.train, encoded: small.encoded },
      { examples: [], encoded: [] },
      {
        order: 'on',
        seed: 3,
        rmsEps: RMS_EPS,
        onFit: (r) => {
          reports.push(r);
          said.push(clock.read(r));
        },
      },
    );
    expect(phase.selection.order).toBe(true);
    // At the layer's own settings, whatever the plain grid holds.
    expect(phase.model.settings).toEqual(ORDER_SETTINGS);
    const finished = reports.filter((r) => r.iteration === undefined);
    expect(finished.map((r) => `${r.done} of ${r.total}`)).toEqual(
      Array.from({ length: 5 + ORDER_STARTS }, (_, i) => `${i + 1} of ${5 + ORDER_STARTS}`),
    );
    // After the first start, the second is still to run, at an order fit's time.
    const afterFirst = finished.at(-2) as FitReport;
    expect(afterFirst.sure.order).toBe(ORDER_STARTS - 1);
    expect(said[reports.indexOf(afterFirst)]).toBeGreaterThan(0);
  }, 60_000);
});
