/**
 * The cross-fitted search of a small training part (fit.ts, under CROSS_FIT_MAX examples): the
 * plain candidates of λ and stronger λ where the grid's strongest wins, then the layers beyond the
 * bag (the scope layer's readings, the pointer after it, a clause weight, the order layer), each
 * kept where it predicts better out of fold, and the final fit of what was kept on every example.
 */
import { fitModel, startsFor, type FitSettings, type FittedModel } from './learner.js';
import type { LayerChoice, LearnerSetup } from './learner-setup.js';
import type { ModelExample } from './model.js';
import { pointerShape } from './pointer.js';
import { bareReading, SCOPE_READINGS, type ScopeCues } from './scope.js';
import {
  assignFolds,
  crossFit,
  FOLDS,
  fitStarts,
  foldRunnerFor,
  heldAnswers,
  score,
  type CandidateScore,
  type CrossFit,
  type ScopeLayerName,
  type TrainPool,
} from './select.js';
import { FitPlan, type FitKind, type FitReport } from './fit-progress.js';
import { isPointer } from './pairs.js';
import {
  CLAUSE_WEIGHTS,
  ITERATION_REPORT,
  LAMBDA_MAX,
  MAX_ITERATIONS,
  ORDER_UNNEEDED_ACCURACY,
  orderSettings,
  POINTER_MAX_OPTIONS,
  POINTER_PAIR_LAMBDA,
} from './layer-settings.js';

export interface LayerSearchOptions {
  /** The training part's examples, every one labelled. */
  examples: readonly ModelExample[];
  /** The learner with these layers beyond the bag (fit.ts learnerSetup, over every example). */
  setupWith: (layer: LayerChoice) => LearnerSetup;
  /** The learner without layers; null where the order layer is forced. */
  plain: LearnerSetup | null;
  /** The learner with the order layer; null where it is not considered. */
  ordered: LearnerSetup | null;
  /** Settings given as they are (no selection), if any. */
  given: FitSettings | undefined;
  /** The plain model's candidate settings: the given ones alone, else the grid. */
  candidates: readonly FitSettings[];
  /**
   * Whether the layers are searched for (`auto`): the scope layer and the pointer tried, the
   * order layer first probed on one fold.
   */
  searchLayers: boolean;
  /** Whether the model gets the order layer whatever it scores (`on`). */
  forceOrder: boolean;
  seed: number;
  /** For each example, the first whose state reads the same (repeats.ts firstCopies). */
  firstCopy?: readonly number[];
  pool?: TrainPool;
  /** Progress, as fit.ts FitPhaseOptions.onFit. */
  onFit?: (report: FitReport) => void;
}

/** Which layers beyond the bag the model has, and which were tried. */
export interface LayersTried {
  /** Whether the model has the order layer, and whether it was tried. */
  order: boolean;
  orderTried: boolean;
  /** Whether the model has the scope layer (scope.ts), and whether it was tried. */
  scope: boolean;
  scopeTried: boolean;
  /** The cues the kept scope layer reads (scope.ts), when it was kept. */
  scopeCues: ScopeCues | null;
  /** Whether the model has the pointer after the scope layer (pointer.ts), and whether it was tried. */
  pointer: boolean;
  pointerTried: boolean;
  /** The kept clause weight (model.ts clauseWeight), if any, and whether one was tried. */
  clauseWeight: number | null;
  clauseTried: boolean;
}

export interface LayerSearch {
  setup: LearnerSetup;
  /** The kept setup and settings, fitted on every example. */
  model: FittedModel;
  /** Folds of the cross-fit: FOLDS, or fewer where there are fewer examples. */
  k: number;
  /** Fold of each training example. */
  folds: number[];
  scores: CandidateScore[];
  layers: LayersTried;
  /** The kept model's out-of-fold logits of every training example. */
  outOfFold: Float64Array[][];
}

/** The search: each candidate cross-fitted on the training part, the best refitted on all of it. */
export async function crossFittedSearch(options: LayerSearchOptions): Promise<LayerSearch> {
  const { examples, setupWith, plain, ordered, given, candidates, pool } = options;
  // Copies of a state share a fold (repeats.ts), so the folds are dealt over distinct states.
  const distinct = options.firstCopy?.filter((first, i) => first === i).length ?? examples.length;
  const k = Math.min(FOLDS, distinct);
  const fold = assignFolds(examples, k, options.seed, options.firstCopy);
  // Every fit the steps below may make, counted at the most and lowered as each step is ruled
  // out, so the progress's total never grows: the plain candidates, the stronger penalties, the
  // scope layer's readings, the pointer and the order layer (each of those two a probe on one
  // fold, then its folds where the probe wins), the clause weights, and the final fit.
  const probeFits = k > 1 ? 1 : 0;
  const classWidth = (plain ?? ordered)?.classWidth ?? 0;
  const scopePossible = options.searchLayers && plain !== null;
  const pointerPossible = scopePossible && classWidth <= POINTER_MAX_OPTIONS;
  const orderProbed = options.searchLayers && probeFits > 0;
  let lambdaSteps = 0;
  if (given === undefined && plain !== null)
    for (let l = Math.max(...candidates.map((c) => c.lambda)) * 10; l <= LAMBDA_MAX; l *= 10)
      lambdaSteps++;
  const plan = new FitPlan(options.onFit);
  plan.best = plain === null ? 'order' : 'bag';
  if (plain !== null) plan.add('bag', candidates.length * k, lambdaSteps * k);
  if (scopePossible) plan.add('bag', (SCOPE_READINGS.length + 1) * k);
  if (pointerPossible) plan.trial('pointer', k, probeFits > 0);
  if (scopePossible) plan.add('best', k, (CLAUSE_WEIGHTS.length - 1) * k);
  if (ordered !== null) plan.trial('order', k, orderProbed);
  // The final fit, each of its starts counted as a fit: the order layer's further starts are
  // contingent on its being kept (sure where it is forced).
  const orderStarts = ordered === null ? 0 : startsFor(ordered) - 1;
  const orderSure = plain === null;
  plan.add('best', 1 + (orderSure ? orderStarts : 0), orderSure ? 0 : orderStarts);
  const ticker = (kind: FitKind, asBest = false) => ({
    onFit: () => plan.finished(kind, asBest),
    onIteration: (iteration: number): void => {
      if (iteration % ITERATION_REPORT === 0) plan.iteration(kind, iteration);
    },
  });
  const scores: CandidateScore[] = [];
  let best: { setup: LearnerSetup; cross: CrossFit } | null = null;
  if (plain !== null) {
    const cross = await crossFit(plain, examples, {
      candidates,
      folds: k,
      foldOf: fold,
      seed: options.seed,
      maxIterations: MAX_ITERATIONS,
      ...ticker('bag'),
      pool,
    });
    scores.push(...cross.scores);
    best = { setup: plain, cross };
  }
  // Where the plain model already answers (nearly) every example out of fold, the scope and
  // order layers have nothing to fix and would only cost time.
  const accuracyOf = (b: typeof best): number =>
    b === null ? 0 : Math.max(...b.cross.scores.map((c) => c.accuracy));
  const lossOf = (b: typeof best): number =>
    b === null ? Infinity : Math.min(...b.cross.scores.map((c) => c.logLoss));
  // The order layer's probe (below) fits the same whatever the steps between find: where the
  // threads run a small file's fits at once, it starts now, beside them, and is judged in its
  // place. The same fit and the same answers, on a thread that would otherwise wait.
  let awaitingOrderProbe = false;
  const orderTicks = ticker('order').onIteration;
  const orderRunner =
    ordered !== null &&
    orderProbed &&
    best !== null &&
    (options.forceOrder || accuracyOf(best) < ORDER_UNNEEDED_ACCURACY)
      ? foldRunnerFor(pool, ordered, examples, fold)
      : null;
  const earlyOrderProbe =
    orderRunner === null || ordered === null
      ? undefined
      : orderRunner
          .fitFolds(ordered, examples, fold, [{ settings: orderSettings(given), fold: 0 }], {
            maxIterations: MAX_ITERATIONS,
            onFitted: () => undefined,
            // Its iterations are reported once the search waits for it, not beside the rest.
            onIteration: (iteration) => {
              if (awaitingOrderProbe) orderTicks(iteration);
            },
          })
          .then((answers) => answers[0] as Float64Array[][]);
  // Where the steps between leave it unjudged (or fail first), its outcome is dropped.
  earlyOrderProbe?.catch(() => undefined);
  // One more candidate's full cross-fit (its k fits are in the count, as sure ones).
  const crossFitOne = (
    setup: LearnerSetup,
    settings: FitSettings,
    kind: FitKind | 'best',
  ): Promise<CrossFit> =>
    crossFit(setup, examples, {
      candidates: [settings],
      folds: k,
      foldOf: fold,
      seed: options.seed,
      maxIterations: MAX_ITERATIONS,
      ...(kind === 'best' ? ticker(plan.best, true) : ticker(kind)),
      pool,
    });
  // Where the grid's strongest penalty wins, a stronger one may win too: each step is one
  // more plain candidate, up to LAMBDA_MAX.
  let stepsLeft = lambdaSteps;
  while (stepsLeft > 0 && plain !== null && best !== null) {
    const settings = best.cross.best;
    const strongest = Math.max(...scores.map((c) => c.settings.lambda));
    if (settings.lambda !== strongest) break;
    stepsLeft--;
    plan.confirm('bag', k);
    const cross = await crossFitOne(plain, { ...settings, lambda: strongest * 10 }, 'bag');
    scores.push(...cross.scores);
    if ((cross.scores[0] as CandidateScore).logLoss >= lossOf(best)) break;
    best = { setup: plain, cross };
  }
  plan.ruleOut('bag', stepsLeft * k);
  const tryScope = scopePossible && best !== null && accuracyOf(best) < ORDER_UNNEEDED_ACCURACY;
  if (scopePossible && !tryScope) plan.ruleOut('bag', (SCOPE_READINGS.length + 1) * k, false);
  // The scope layer (scope.ts) learns nothing of its own, so each of its readings (two, then the
  // better one bare) costs one plain candidate: cross-fitted at the best plain settings, and the
  // one with the lowest out-of-fold cross-entropy is kept where it is lower than the plain
  // model's.
  // (Typed by `as`: set inside tryReading, so TypeScript must not narrow them to null.)
  let scoped = null as { setup: LearnerSetup; cues: ScopeCues } | null;
  // The reading that scored best, kept or not: the pointer is tried on top of it.
  let reading = null as { cues: ScopeCues; logLoss: number } | null;
  if (tryScope && best !== null) {
    const settings = best.cross.best;
    const tryReading = async (cues: ScopeCues): Promise<void> => {
      const setup = setupWith(cues);
      const cross = await crossFitOne(setup, settings, 'bag');
      const score = cross.scores[0] as CandidateScore;
      scores.push({ ...score, layer: scopeLayerName(cues) });
      if (reading === null || score.logLoss < reading.logLoss)
        reading = { cues, logLoss: score.logLoss };
      if (score.logLoss < lossOf(best)) {
        best = { setup, cross };
        scoped = { setup, cues };
      }
    };
    for (const cues of SCOPE_READINGS) await tryReading(cues);
    // The better reading with its cues left out of the bag too: where negated lines lean one
    // way, a cue whose scope took every other word carries that lean alone. A third reading,
    // cross-fitted as the two are (it learns nothing either, and one fold is too few lines to
    // tell readings apart).
    if (reading !== null) await tryReading(bareReading(reading.cues));
  }
  // A candidate fitted without fold 0 and judged on it against the best model's out-of-fold
  // answers there: where it loses (the common case for the layers below) that costs one fit,
  // not k, and it is not cross-fitted.
  const probeFold = async (
    setup: LearnerSetup,
    settings: FitSettings,
    against: { cross: CrossFit },
    /** Its answers on fold 0, where the fit was started earlier (earlyOrderProbe). */
    early?: Promise<Float64Array[][]>,
  ): Promise<{ won: boolean; score: ReturnType<typeof score> }> => {
    const held = examples.filter((_, i) => fold[i] === 0);
    const kind = isPointer(setup.shape.pairs) ? 'pointer' : 'order';
    if (early !== undefined) awaitingOrderProbe = true;
    const answers =
      early !== undefined
        ? await early
        : heldAnswers(
            (
              await fitModel(
                setup,
                examples.filter((_, i) => fold[i] !== 0),
                {
                  settings,
                  maxIterations: MAX_ITERATIONS,
                  onIteration: ticker(kind).onIteration,
                  pool,
                },
              )
            ).params,
            examples,
            fold,
            0,
          );
    plan.finished(kind);
    const bestOut = against.cross.outOfFold.filter((_, i) => fold[i] === 0);
    const probe = score(held, answers);
    return { won: probe.logLoss < score(held, bestOut).logLoss, score: probe };
  };
  // The pointer (pointer.ts) after the scope layer (the kept reading, else the one that scored
  // best: its breaks empty the pointer's memory), at the kept λ: kept where it predicts better
  // out of fold, after it first wins on one fold. It learns a few numbers a word, so a small
  // file can teach it ("fine" takes the thing before it away, "down" adds it).
  const cues = scoped?.cues ?? reading?.cues ?? null;
  const tryPointer = pointerPossible && cues !== null;
  if (pointerPossible && !tryPointer) plan.trial('pointer', k, probeFits > 0, -1);
  let pointed: { setup: LearnerSetup; cues: ScopeCues } | null = null;
  if (tryPointer && cues !== null && best !== null) {
    const setup = setupWith({ cues, pairs: pointerShape(classWidth) });
    const settings = { ...best.cross.best, pairLambda: POINTER_PAIR_LAMBDA };
    const layer = `${scopeLayerName(cues)}+pointer` as const;
    const probe = k > 1 ? await probeFold(setup, settings, best) : { won: true, score: null };
    if (!probe.won && probe.score !== null) {
      scores.push({ settings, ...probe.score, folds: 1, layer });
      plan.ruleOut('pointer', k);
    }
    if (probe.won) {
      if (probe.score !== null) plan.confirm('pointer', k);
      const cross = await crossFitOne(setup, settings, 'pointer');
      const score = cross.scores[0] as CandidateScore;
      scores.push({ ...score, layer });
      if (score.logLoss < lossOf(best)) {
        best = { setup, cross };
        pointed = { setup, cues };
        plan.best = 'pointer';
      }
    }
  }
  // The clause weight on the scope layer (the kept reading, with the pointer where kept; else the
  // reading that scored best, as for the pointer: the marks give the breaks): the words after the
  // state's first break score more in the pooling. It learns nothing of its own, so each weight
  // costs one cross-fit at the kept settings, as a reading does; the next is tried only where
  // this one predicted better.
  const withPointer = pointed !== null && pointed.setup === best?.setup;
  const clauseCues = withPointer && pointed !== null ? pointed.cues : cues;
  const tryClause = scopePossible && clauseCues !== null;
  let clauseSteps = scopePossible ? CLAUSE_WEIGHTS.length : 0;
  let claused: { setup: LearnerSetup; cues: ScopeCues; weight: number } | null = null;
  if (tryClause && clauseCues !== null && best !== null) {
    const settings = best.cross.best;
    const layer = withPointer
      ? (`${scopeLayerName(clauseCues)}+pointer` as const)
      : scopeLayerName(clauseCues);
    for (const [w, weight] of CLAUSE_WEIGHTS.entries()) {
      clauseSteps--;
      if (w > 0) plan.confirm('best', k);
      const setup = setupWith({
        cues: clauseCues,
        ...(withPointer ? { pairs: pointerShape(classWidth) } : {}),
        clauseWeight: weight,
      });
      const cross = await crossFitOne(setup, settings, 'best');
      const score = cross.scores[0] as CandidateScore;
      scores.push({ ...score, layer, clauseWeight: weight });
      if (score.logLoss >= lossOf(best)) break;
      best = { setup, cross };
      claused = { setup, cues: clauseCues, weight };
    }
  }
  // The first weight's fits are sure ones, the rest contingent (each runs where the last won).
  if (clauseSteps > 0 && clauseSteps === CLAUSE_WEIGHTS.length) {
    plan.ruleOut('best', k, false);
    clauseSteps--;
  }
  plan.ruleOut('best', clauseSteps * k);
  // Under `auto` the order layer too first wins on one fold (probeFold): it loses there on the
  // common file, with no contrasting word orders. Nor is it tried where nothing is left to fix.
  const tryOrder =
    ordered !== null && (options.forceOrder || accuracyOf(best) < ORDER_UNNEEDED_ACCURACY);
  if (ordered !== null && !tryOrder) plan.trial('order', k, orderProbed, -1);
  let probed = true;
  if (ordered !== null && tryOrder && orderProbed && best !== null) {
    const settings = orderSettings(given);
    const probe = await probeFold(ordered, settings, best, earlyOrderProbe);
    probed = probe.won;
    if (!probed) {
      scores.push({ settings, ...probe.score, folds: 1, layer: 'order' });
      plan.ruleOut('order', k);
    } else plan.confirm('order', k);
  }
  if (ordered !== null && tryOrder && probed) {
    const cross = await crossFitOne(ordered, orderSettings(given), 'order');
    const score = cross.scores[0] as CandidateScore;
    scores.push({ ...score, layer: 'order' });
    if (options.forceOrder || score.logLoss < lossOf(best)) {
      best = { setup: ordered, cross };
      plan.best = 'order';
    }
  }
  const chosen = best as { setup: LearnerSetup; cross: CrossFit };
  // The cues of the kept scope layer, alone or with the pointer after it, or a clause weight.
  const keptCues =
    [scoped, pointed, claused].find((layer) => layer !== null && layer.setup === chosen.setup)
      ?.cues ?? null;
  const clauseKept = claused !== null && claused.setup === chosen.setup;
  const starts = startsFor(chosen.setup);
  if (!orderSure && starts > 1) plan.confirm('best', starts - 1);
  if (!orderSure && starts === 1) plan.ruleOut('best', orderStarts);
  plan.settle();
  const model = await fitStarts(chosen.setup, examples, {
    settings: chosen.cross.best,
    maxIterations: MAX_ITERATIONS,
    starts,
    onIteration: ticker(plan.best).onIteration,
    onStartFitted: () => plan.finished(plan.best, true),
    pool,
  });
  return {
    setup: chosen.setup,
    model,
    k,
    folds: fold,
    scores,
    layers: {
      order: chosen.setup === ordered,
      orderTried: tryOrder,
      scope: keptCues !== null,
      scopeTried: tryScope,
      scopeCues: keptCues,
      pointer: chosen.setup === pointed?.setup || (clauseKept && withPointer),
      pointerTried: tryPointer,
      clauseWeight: clauseKept && claused !== null ? claused.weight : null,
      clauseTried: tryClause,
    },
    outOfFold: chosen.cross.outOfFold,
  };
}

/** A scope reading's name among the scores: `scope` (every cue), `scope-nominal`, `scope-every-bare`, … */
function scopeLayerName(cues: ScopeCues): ScopeLayerName {
  return cues === 'every' ? 'scope' : `scope-${cues}`;
}
