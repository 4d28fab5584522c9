/**
 * The fit phase's progress: the fits a search may still make, by kind (FitPlan), and the time
 * they will take, estimated from the fits done (FitClock). Its fits differ in cost by kind: a
 * pointer or order layer fit took 17 to 96 times a bag-of-words fit on the files measured
 * (docs/benchmarks.md, "The fit phase's time left, by kind").
 */

/**
 * What a fit costs as: the bag of words (the plain candidates, the scope layer's readings, a
 * clause weight without the pointer), the pointer, or the order layer.
 */
export type FitKind = 'bag' | 'pointer' | 'order';

export const FIT_KINDS: readonly FitKind[] = Object.freeze(['bag', 'pointer', 'order']);

/** One report of the fit phase: a fit finished, or ITERATION_REPORT more iterations of one. */
export interface FitReport {
  /** Fits done. */
  done: number;
  /** The most fits the phase may make: it never grows, and equals `done` at the end. */
  total: number;
  /** Iterations of the fit under way, on an iteration report. */
  iteration?: number;
  /** Whether the total can fall no more. */
  settled: boolean;
  /**
   * The fits still to make, by kind: `sure` ones run unless an outcome rules their step out;
   * `contingent` ones run only where a trial before them wins (a probe on one fold, a stronger
   * penalty, a larger clause weight). Together they are the total's fits left (on an iteration
   * report, the fit under way among them).
   */
  sure: Readonly<Record<FitKind, number>>;
  contingent: Readonly<Record<FitKind, number>>;
  /** The kind of the fit that just finished (`iteration` undefined), else of the one under way. */
  kind: FitKind;
}

type Counts = Record<FitKind, number>;
const zero = (): Counts => ({ bag: 0, pointer: 0, order: 0 });

/**
 * The fits a search may still make, counted at the most up front and lowered as steps are ruled
 * out, so the total never grows. A fit is `sure` (it runs unless an outcome rules its step out)
 * or contingent (it runs only where a trial before it wins). The clause weights' fits and the
 * final fit take the kind of the best model so far (`best`).
 */
export class FitPlan {
  private readonly sure: Counts = zero();
  private readonly contingent: Counts = zero();
  private sureAsBest = 0;
  private contingentAsBest = 0;
  private done = 0;
  private settled = false;
  /** The kind of the best model so far. */
  best: FitKind = 'bag';

  constructor(private readonly onFit?: (report: FitReport) => void) {}

  /** Counts fits of a kind (or the best model's) that the search may make. */
  add(kind: FitKind | 'best', sure: number, contingent = 0): void {
    if (kind === 'best') {
      this.sureAsBest += sure;
      this.contingentAsBest += contingent;
    } else {
      this.sure[kind] += sure;
      this.contingent[kind] += contingent;
    }
  }

  /**
   * Counts a layer's trial (add) or rules it out (the sign -1): a probe on one fold, then its k
   * folds where the probe wins, or (not probed) its k folds alone.
   */
  trial(kind: FitKind, k: number, probed: boolean, sign: 1 | -1 = 1): void {
    this.add(kind, sign * (probed ? 1 : k), sign * (probed ? k : 0));
  }

  /** A trial won: `fits` of the kind's contingent fits will run. */
  confirm(kind: FitKind | 'best', fits: number): void {
    this.add(kind, fits, -fits);
  }

  /** `fits` of the kind's contingent (else sure) fits will not run. */
  ruleOut(kind: FitKind | 'best', fits: number, contingent = true): void {
    if (contingent) this.add(kind, 0, -fits);
    else this.add(kind, -fits, 0);
  }

  /** Nothing more can be ruled out: the total is the number of fits the phase will make. */
  settle(): void {
    this.settled = true;
  }

  /** A fit of this kind finished (it was a sure one). */
  finished(kind: FitKind, asBest = false): void {
    if (asBest) this.sureAsBest--;
    else this.sure[kind]--;
    this.done++;
    this.onFit?.(this.report(kind, undefined));
  }

  /** Every ITERATION_REPORT iterations of the fit under way (a sure fit of this kind). */
  iteration(kind: FitKind, iteration: number): void {
    this.onFit?.(this.report(kind, iteration));
  }

  private report(kind: FitKind, iteration: number | undefined): FitReport {
    const sure = { ...this.sure };
    const contingent = { ...this.contingent };
    sure[this.best] += this.sureAsBest;
    contingent[this.best] += this.contingentAsBest;
    const left = (c: Counts) => c.bag + c.pointer + c.order;
    return {
      done: this.done,
      total: this.done + left(sure) + left(contingent),
      ...(iteration === undefined ? {} : { iteration }),
      settled: this.settled,
      sure,
      contingent,
      kind,
    };
  }
}

/**
 * A fit of a kind not yet timed, in bag-of-words fits: the medians over seven files (the project's
 * four and three CLINC150 draws) in a first run of tools/bench/train-eta.ts. Over the twelve files
 * of docs/benchmarks.md ("The fit phase's time left, by kind") a pointer fit took 17-37 bag fits
 * and an order fit 37-96.
 */
export const KIND_COST: Readonly<Counts> = Object.freeze({ bag: 1, pointer: 18, order: 46 });

/**
 * The time left in the fit phase: each kind's sure fits times the mean time of that kind's fits
 * done (a kind not yet timed: KIND_COST times a timed kind's), less the time the fit under way has
 * run (up to its kind's time). Contingent fits are left out: a trial usually loses, and counting
 * them made the estimate 2.7 to 6.5 times too long where they lost (docs/benchmarks.md); where
 * one wins, the time left rises.
 */
export class FitClock {
  private readonly spent: Counts = zero();
  private readonly fits: Counts = zero();
  private last: number;

  constructor(private readonly now: () => number = Date.now) {
    this.last = now();
  }

  /** Milliseconds left after this report, or undefined until a fit has finished. */
  read(report: FitReport): number | undefined {
    const now = this.now();
    if (report.iteration === undefined) {
      this.spent[report.kind] += now - this.last;
      this.fits[report.kind]++;
      this.last = now;
    }
    const timed = FIT_KINDS.find((k) => this.fits[k] > 0);
    if (timed === undefined) return undefined;
    const unit = this.spent[timed] / this.fits[timed] / KIND_COST[timed];
    const each = (k: FitKind) =>
      this.fits[k] > 0 ? this.spent[k] / this.fits[k] : unit * KIND_COST[k];
    let left = 0;
    for (const k of FIT_KINDS) left += report.sure[k] * each(k);
    // The fit under way (on an iteration report) is one of them: what it has run comes off, up to
    // its kind's time, so one that runs long leaves the fits after it counted.
    if (report.iteration !== undefined) left -= Math.min(now - this.last, each(report.kind));
    return Math.max(0, left);
  }
}
