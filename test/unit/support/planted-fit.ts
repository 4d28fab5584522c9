/** What the trainer's planted two-option tasks (train-order, train-scope) share. */
import { RMS_EPS } from '../../../src/build/train/construct.js';
import { fitPhase, learnerSetup, type FitPhase } from '../../../src/build/train/fit.js';
import type { FitKind, FitReport } from '../../../src/build/train/fit-progress.js';
import { MAX_ITERATIONS } from '../../../src/build/train/layer-settings.js';
import { fitModel, ORDER_STARTS } from '../../../src/build/train/learner.js';
import type { LayerChoice } from '../../../src/build/train/learner-setup.js';
import { SCOPE_WORDS } from '../../../src/build/train/scope.js';
import { binaryAccuracy, plantedData } from '../../../tools/train/planted-fit.js';

export { binaryAccuracy, parseExamples, plantedData } from '../../../tools/train/planted-fit.js';

/** The final fit's starts, each a fit of the count (learner.ts startsFor). */
const finalStarts = (orderKept: boolean): number => (orderKept ? ORDER_STARTS : 1);

/**
 * The fit phase's progress (fit.ts onFit), and what an honest count of it is: a total that never
 * grows (it is counted at the most and lowered as steps are ruled out), ending settled at the fits
 * the selection lists (each candidate's folds, a probe's one) and the final fit.
 */
export function fitProgress() {
  const calls: Array<{ done: number; total: number; settled: boolean }> = [];
  const reports: FitReport[] = [];
  return {
    onFit(report: FitReport): void {
      reports.push(report);
      const { done, total, iteration, settled } = report;
      if (iteration === undefined) calls.push({ done, total, settled });
    },
    calls,
    /**
     * Reports whose fits left by kind (sure and contingent, what the time left is counted on) are
     * negative for a kind, or any left at the end.
     */
    miscounted(): FitReport[] {
      return reports.filter((r, i) => {
        const e = [...Object.values(r.sure), ...Object.values(r.contingent)];
        const last = i === reports.length - 1;
        return e.some((n) => n < 0) || (last && e.some((n) => n !== 0));
      });
    },
    /**
     * Fits made by the selection's scores (cross-fitted on `folds`), then the final fit's starts
     * (a fit each: ORDER_STARTS with the order layer kept, learner.ts startsFor). Under
     * `auto` the pointer's and the order layer's full cross-fits each follow a probe on one fold
     * that won (a probe that lost is a score of its own, on 1 fold).
     */
    made(
      scores: ReadonlyArray<{ folds?: number; layer?: string; clauseWeight?: number }>,
      folds: number,
      orderKept = false,
    ): number {
      // A clause weight is cross-fitted without a probe, on the pointer too.
      const probed = (s: { folds?: number; layer?: string; clauseWeight?: number }) =>
        s.folds === undefined &&
        s.clauseWeight === undefined &&
        (s.layer === 'order' || s.layer?.endsWith('+pointer') === true);
      return (
        scores.reduce((n, s) => n + (s.folds ?? folds) + (probed(s) ? 1 : 0), 0) +
        finalStarts(orderKept)
      );
    },
    /** The fits the reports say finished, by kind. */
    finishedByKind(): Record<FitKind, number> {
      const by: Record<FitKind, number> = { bag: 0, pointer: 0, order: 0 };
      for (const r of reports) if (r.iteration === undefined) by[r.kind]++;
      return by;
    },
    /**
     * The fits of each kind the selection's scores made (as `made` counts them): a score of the
     * order layer is the order layer's, one of a reading with the pointer the pointer's, any other
     * the bag's; the final fit is the kept model's.
     */
    madeByKind(selection: FitPhase['selection']): Record<FitKind, number> {
      const by: Record<FitKind, number> = { bag: 0, pointer: 0, order: 0 };
      for (const s of selection.scores) {
        const kind: FitKind =
          s.layer === 'order' ? 'order' : s.layer?.endsWith('+pointer') ? 'pointer' : 'bag';
        by[kind] += this.made([s], selection.folds) - 1;
      }
      by[selection.order ? 'order' : selection.pointer ? 'pointer' : 'bag'] += finalStarts(
        selection.order,
      );
      return by;
    },
    grew(): Array<{ at: number; from: number; to: number }> {
      return calls.flatMap((c, i) => {
        const before = calls[i - 1];
        return before !== undefined && c.total > before.total
          ? [{ at: c.done, from: before.total, to: c.total }]
          : [];
      });
    },
  };
}

/**
 * A planted task fitted by the fit phase at its defaults (`auto`, with the scope layer's words
 * kept whole), against a control: the same settings with the layers `control` names (given what
 * `auto` chose), both judged on the fresh draws.
 */
export async function autoAgainst(
  trainText: string,
  freshText: string,
  seed: number,
  control: (selection: FitPhase['selection']) => LayerChoice,
) {
  const { train, questions, data, encoded, freshEncoded, groups } = plantedData(
    trainText,
    freshText,
    SCOPE_WORDS,
  );
  const progress = fitProgress();
  const chosen = await fitPhase(
    data,
    questions,
    { examples: train, encoded },
    { examples: [], encoded: [] },
    { order: 'auto', seed, rmsEps: RMS_EPS, onFit: progress.onFit },
  );
  const other = await fitModel(
    learnerSetup(data, questions, groups, { rmsEps: RMS_EPS }, control(chosen.selection)),
    encoded,
    { settings: chosen.model.settings, maxIterations: MAX_ITERATIONS },
  );
  return {
    selection: chosen.selection,
    params: chosen.model.params,
    progress,
    chosenAccuracy: binaryAccuracy(chosen.model.params, freshEncoded),
    controlAccuracy: binaryAccuracy(other.params, freshEncoded),
  };
}
