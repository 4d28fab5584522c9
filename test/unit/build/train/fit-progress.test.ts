/**
 * The fit phase's time left (fit-progress.ts): the fits left by kind that FitPlan reports, and
 * FitClock's estimate from them, on a clock the test moves by hand. The expected figures are
 * worked out here from the fits' times and KIND_COST's ratios.
 */
import { describe, expect, it } from 'vitest';
import {
  FitClock,
  FitPlan,
  KIND_COST,
  type FitReport,
} from '../../../../src/build/train/fit-progress.js';

function plannedClock() {
  let now = 0;
  const clock = new FitClock(() => now);
  const said: Array<number | undefined> = [];
  const reports: FitReport[] = [];
  const plan = new FitPlan((r) => {
    reports.push(r);
    said.push(clock.read(r));
  });
  return {
    plan,
    said,
    reports,
    /** Moves the clock on. */
    wait(ms: number) {
      now += ms;
    },
  };
}

describe('the fit phase time left', () => {
  it('counts a kind not yet timed at KIND_COST bag fits, and a timed kind at its own mean', () => {
    const { plan, said, wait } = plannedClock();
    plan.add('bag', 3);
    plan.add('pointer', 1, 5); // a probe, then its folds where it wins
    plan.add('order', 1);
    plan.add('best', 1); // the final fit
    wait(100);
    plan.finished('bag');
    // Three bag fits (two, and the final fit: the best model is the bag), a pointer fit and an
    // order fit left, at 100 ms a bag fit; the pointer's five folds are contingent.
    expect(said.at(-1)).toBe(3 * 100 + KIND_COST.pointer * 100 + KIND_COST.order * 100);
    wait(300);
    plan.finished('bag');
    // Bag fits now take 200 ms on the mean (100 and 300); two are left.
    expect(said.at(-1)).toBe(2 * 200 + KIND_COST.pointer * 200 + KIND_COST.order * 200);
    wait(200);
    plan.finished('bag');
    wait(1000);
    plan.iteration('pointer', 20);
    // The fit under way has run for 1 s: it comes off the estimate.
    expect(said.at(-1)).toBe(200 + KIND_COST.pointer * 200 + KIND_COST.order * 200 - 1000);
    wait(5000);
    plan.finished('pointer');
    // The pointer is timed now (6 s); its probe won, so its five folds will run.
    plan.confirm('pointer', 5);
    plan.iteration('pointer', 20);
    expect(said.at(-1)).toBe(200 + 5 * 6000 + KIND_COST.order * 200);
  });

  it('counts the clause weights and the final fit as the best model so far', () => {
    const { plan, said, reports, wait } = plannedClock();
    plan.add('bag', 1);
    plan.add('pointer', 1);
    plan.add('best', 2, 4); // a clause weight's two folds, two more weights' where each wins
    plan.add('best', 1);
    wait(50);
    plan.finished('bag');
    expect(reports.at(-1)?.sure).toEqual({ bag: 3, pointer: 1, order: 0 });
    expect(reports.at(-1)?.contingent).toEqual({ bag: 4, pointer: 0, order: 0 });
    expect(reports.at(-1)?.total).toBe(9);
    wait(900);
    plan.best = 'pointer';
    plan.finished('pointer');
    expect(reports.at(-1)?.sure).toEqual({ bag: 0, pointer: 3, order: 0 });
    expect(said.at(-1)).toBe(3 * 900);
    plan.ruleOut('best', 4);
    for (let i = 0; i < 3; i++) {
      wait(900);
      plan.finished('pointer', true);
    }
    expect(reports.at(-1)).toMatchObject({ done: 5, total: 5 });
    expect(said.at(-1)).toBe(0);
  });

  it("counts the kept order model's second start as a fit of its own, once the layer is kept", () => {
    const { plan, said, reports, wait } = plannedClock();
    plan.add('order', 2); // the order layer's folds
    plan.add('best', 1, 1); // the final fit, and its second start where the order layer is kept
    for (let f = 0; f < 2; f++) {
      wait(1000);
      plan.finished('order');
    }
    plan.best = 'order';
    plan.confirm('best', 1);
    plan.settle();
    wait(600);
    plan.iteration('order', 20);
    // Two starts of 1 s each, the first 0.6 s under way: the second start is in the time left.
    expect(said.at(-1)).toBe(2 * 1000 - 600);
    wait(400);
    plan.finished('order', true);
    expect(said.at(-1)).toBe(1000);
    expect(reports.at(-1)).toMatchObject({ done: 3, total: 4, settled: true });
    wait(1000);
    plan.finished('order', true);
    expect(reports.at(-1)).toMatchObject({ done: 4, total: 4 });
    expect(said.at(-1)).toBe(0);
  });

  it("takes off the time the fit under way has run, up to its kind's time", () => {
    const { plan, said, wait } = plannedClock();
    plan.add('bag', 4);
    wait(100);
    plan.finished('bag');
    wait(60);
    plan.iteration('bag', 20);
    expect(said.at(-1)).toBe(3 * 100 - 60);
    wait(400);
    plan.iteration('bag', 40);
    // It has run 460 ms, a bag fit's mean 100: the two fits after it are still to come.
    expect(said.at(-1)).toBe(2 * 100);
  });

  it('says nothing before a fit has finished', () => {
    const { plan, said, wait } = plannedClock();
    plan.add('order', 2);
    wait(500);
    plan.iteration('order', 20);
    expect(said).toEqual([undefined]);
    wait(500);
    plan.finished('order');
    expect(said.at(-1)).toBe(1000);
  });
});
