/**
 * The baseline a careful engineer tries first: multinomial naive Bayes on word counts (Laplace
 * smoothing), one per trained question, fitted on the same training part as the model. The card
 * shows its accuracy beside the model's, so a user sees whether the model earned its place.
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import { renderValue } from '../../protocol/render.js';
import { exp, log } from './portable-math.js';
import { lineKey } from './repeats.js';
import { words } from './words.js';

export function stateText(example: LabelledExample): string {
  return renderValue(example.valid.state);
}

/** A fitted naive Bayes for one question: log priors and per-option word log-likelihoods. */
export interface NaiveBayes {
  options: string[];
  logPrior: Float64Array;
  logLikelihood: Map<string, Float64Array>;
  /** log P(unseen word | option). */
  logUnseen: Float64Array;
}

export function fitNaiveBayes(
  examples: readonly LabelledExample[],
  question: string,
  alpha = 1,
): NaiveBayes | null {
  const options: string[] = [];
  const labelled: Array<{ text: string; option: number }> = [];
  for (const e of examples) {
    const label = e.labels.get(question);
    const q = e.valid.questions.find((x) => x.id === question);
    if (label === undefined || q === undefined) continue;
    const id = (promptOptions(q)[label] as [string, unknown])[0];
    let o = options.indexOf(id);
    if (o < 0) o = options.push(id) - 1;
    labelled.push({ text: stateText(e), option: o });
  }
  if (labelled.length === 0) return null;
  const C = options.length;
  const docs = new Float64Array(C);
  const counts = new Map<string, Float64Array>();
  const totals = new Float64Array(C);
  for (const { text, option } of labelled) {
    docs[option] = (docs[option] as number) + 1;
    for (const w of words(text)) {
      let c = counts.get(w);
      if (c === undefined) counts.set(w, (c = new Float64Array(C)));
      c[option] = (c[option] as number) + 1;
      totals[option] = (totals[option] as number) + 1;
    }
  }
  const V = counts.size + 1;
  const logPrior = docs.map((d) => log(d / labelled.length));
  const logUnseen = totals.map((t) => log(alpha / (t + alpha * V)));
  const logLikelihood = new Map<string, Float64Array>();
  for (const [w, c] of counts)
    logLikelihood.set(
      w,
      c.map((n, o) => log((n + alpha) / ((totals[o] as number) + alpha * V))),
    );
  return { options, logPrior, logLikelihood, logUnseen };
}

/** The option id naive Bayes picks for a text (among `allowed`, when given). */
export function naiveBayesChoice(nb: NaiveBayes, text: string, allowed?: readonly string[]) {
  const scores = nb.logPrior.slice();
  for (const w of words(text)) {
    const l = nb.logLikelihood.get(w) ?? nb.logUnseen;
    for (let o = 0; o < scores.length; o++) scores[o] = (scores[o] as number) + (l[o] as number);
  }
  let best = -1;
  for (let o = 0; o < scores.length; o++) {
    if (allowed !== undefined && !allowed.includes(nb.options[o] as string)) continue;
    if (best < 0 || (scores[o] as number) > (scores[best] as number)) best = o;
  }
  return best < 0 ? null : (nb.options[best] as string);
}

/** Points above naive Bayes a model must score to have earned its place. */
export const EARNED_MARGIN = 0.03;

/** Whether the model beat naive Bayes (by EARNED_MARGIN), matched it, or lost to it. */
export function baselineVerdict(
  model: number,
  baseline: number,
): 'earned' | 'level' | 'worse' | 'unmeasured' {
  if (!Number.isFinite(model) || !Number.isFinite(baseline)) return 'unmeasured';
  if (model >= baseline + EARNED_MARGIN) return 'earned';
  return model >= baseline ? 'level' : 'worse';
}

/** Whether the model is at least level with logistic regression, which is all it must be. */
export function logisticVerdict(
  model: number,
  baseline: number,
): 'level-or-ahead' | 'behind' | 'unmeasured' {
  if (!Number.isFinite(model) || !Number.isFinite(baseline)) return 'unmeasured';
  return model >= baseline ? 'level-or-ahead' : 'behind';
}

/**
 * The two-sided exact sign test (McNemar's exact test) on the lines where the model and a
 * baseline disagree: the probability of a split at least this uneven if each were as likely as the
 * other to be the one right, 2 · Σ_{i ≤ min} C(n, i) / 2ⁿ (at most 1). 1 where they never disagree.
 * Each term is summed from its logarithm, so n may be in the thousands.
 */
export function signTestP(modelOnly: number, baselineOnly: number): number {
  const n = modelOnly + baselineOnly;
  const k = Math.min(modelOnly, baselineOnly);
  let logTerm = -n * log(2);
  let sum = exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += log((n - i + 1) / i);
    sum += exp(logTerm);
  }
  return Math.min(1, 2 * sum);
}

/** Below this sign-test probability a split is called unlikely to be chance. */
export const CHANCE_LEVEL = 0.05;

/** The lines only the model, and only naive Bayes, got right, and signTestP of the two. */
export interface Disagreements {
  modelOnly: number;
  baselineOnly: number;
  p: number;
}

/**
 * Counts the lines only the model, and only a baseline, got right, for the sign test: a line and
 * its copies once (repeats.ts lineKey), since the same models judge them alike.
 */
export class DisagreementCount {
  private readonly counted = new Set<string>();
  private modelOnly = 0;
  private baselineOnly = 0;

  add(
    example: LabelledExample,
    label: number | string,
    model: boolean | undefined,
    baseline: boolean,
  ): void {
    // A line the model was not judged on leaves its copies to be counted.
    if (model === undefined) return;
    const key = lineKey(example, label);
    if (this.counted.has(key)) return;
    this.counted.add(key);
    if (model === true && !baseline) this.modelOnly++;
    if (model === false && baseline) this.baselineOnly++;
  }

  result(): Disagreements {
    const { modelOnly, baselineOnly } = this;
    return { modelOnly, baselineOnly, p: signTestP(modelOnly, baselineOnly) };
  }
}

/** A sign test's probability as the card and the CLI print it. */
export const formatP = (p: number): string => (p < 0.001 ? 'under 0.001' : p.toFixed(3));

/** The disagreements in a few words (the CLI's line, the Train panel). */
export function chanceNote(d: Disagreements, baseline = 'naive Bayes'): string {
  if (d.modelOnly + d.baselineOnly === 0) return 'both got the same lines right';
  const reading = d.p < CHANCE_LEVEL ? 'unlikely to be chance' : 'could be chance';
  return `${d.modelOnly} line${d.modelOnly === 1 ? '' : 's'} right by the model alone, ${d.baselineOnly} by ${baseline} alone: ${reading} (sign test, p ${formatP(d.p)})`;
}

export interface BaselineReport {
  method: 'naive Bayes on word counts';
  /** Per trained question: its accuracy on the same text the model was judged on. */
  questions: Array<{
    id: string;
    answered: number;
    accuracy: number;
    /** The model against it (baselineVerdict), on the same text. */
    verdict?: ReturnType<typeof baselineVerdict>;
    /**
     * Where the model's answers were given: the lines only the model got right, those only naive
     * Bayes got right, and signTestP of the two.
     */
    disagreements?: Disagreements;
    /**
     * Logistic regression on word and word-pair counts (logistic.ts), judged on the same lines;
     * null where it was not fitted (`logisticSkipped` says why).
     */
    logistic?: LogisticFigures | null;
  }>;
  /** Why logistic regression was not fitted, where it was not. */
  logisticSkipped?: string;
}

/** The second baseline's figures for a question. */
export interface LogisticFigures {
  accuracy: number;
  /** The strength C chosen (LOGISTIC_CS), as the model's λ was. */
  c: number;
  /** The model against it (logisticVerdict), on the same lines. */
  verdict?: ReturnType<typeof logisticVerdict>;
  /** As for naive Bayes: the lines only the model, and only the regression, got right. */
  disagreements?: Disagreements;
}

/** Whether the model answered an example's question right (undefined: not judged). */
export type ModelRight = (questionId: string, example: LabelledExample) => boolean | undefined;

/**
 * Naive Bayes judged like the model: fitted on the training part and scored on `judged` when
 * that is the held-out part, or on each fold from the other folds (the model's cross-fit folds)
 * when the model was judged out of fold.
 */
export function baselineFigures(
  questions: ReadonlyArray<{ id: string }>,
  train: readonly LabelledExample[],
  heldOut: readonly LabelledExample[] | null,
  folds: readonly number[] | null,
  modelRight?: ModelRight,
): BaselineReport {
  const tally = new Map(
    questions.map((q) => [q.id, { right: 0, n: 0, disagreements: new DisagreementCount() }]),
  );
  const judge = (fitOn: readonly LabelledExample[], judgeOn: readonly LabelledExample[]) => {
    for (const q of questions) {
      const nb = fitNaiveBayes(fitOn, q.id);
      const t = tally.get(q.id) as NonNullable<ReturnType<typeof tally.get>>;
      for (const e of judgeOn) {
        const label = e.labels.get(q.id);
        const asked = e.valid.questions.find((x) => x.id === q.id);
        if (label === undefined || asked === undefined) continue;
        const ids = promptOptions(asked).map(([id]) => id);
        t.n++;
        const right = nb !== null && naiveBayesChoice(nb, stateText(e), ids) === ids[label];
        if (right) t.right++;
        t.disagreements.add(e, label, modelRight?.(q.id, e), right);
      }
    }
  };
  if (heldOut !== null) judge(train, heldOut);
  else if (folds !== null) {
    const k = Math.max(...folds) + 1;
    for (let f = 0; f < k; f++)
      judge(
        train.filter((_, i) => folds[i] !== f),
        train.filter((_, i) => folds[i] === f),
      );
  }
  return {
    method: 'naive Bayes on word counts',
    questions: questions.map((q) => {
      const t = tally.get(q.id) as NonNullable<ReturnType<typeof tally.get>>;
      return {
        id: q.id,
        answered: t.n,
        accuracy: t.n === 0 ? NaN : t.right / t.n,
        ...(modelRight === undefined ? {} : { disagreements: t.disagreements.result() }),
      };
    }),
  };
}
