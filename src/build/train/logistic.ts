/**
 * The second baseline a careful engineer tries: multinomial logistic regression on word and
 * adjacent word-pair counts, scikit-learn's form (C · Σ cross-entropy + ½ |w|², the intercepts not
 * penalised), fitted by the trainer's L-BFGS with its portable exp and log, so the same file gives
 * the same figures in Node and in the page. Its strength C is chosen from LOGISTIC_CS
 * (logisticFigures) on the same folds or held-out part that chose the model's λ.
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { promptOptions } from '../../clef/prompt.js';
import { DisagreementCount, stateText } from './baseline.js';
import type { BaselineReport, LogisticFigures, ModelRight } from './baseline.js';
import { minimize } from './lbfgs.js';
import { exp, log } from './portable-math.js';
import { words } from './words.js';

/** The strengths tried: scikit-learn's default and a decade either side. */
export const LOGISTIC_CS = [0.1, 1, 10] as const;

/**
 * Weights (features × labels, intercepts included) above which the baseline is not fitted. L-BFGS
 * keeps 21 vectors of that size (168 MB at this limit). Measured (docs/benchmarks.md, "Logistic
 * regression on the card"): 2,000 CLINC150 queries of 20 intents have 0.15 million and their 15
 * fits take 13 s; of 143 intents, 1.15 million, 79 s and 469 MB; the whole file 4.7 million.
 */
export const LOGISTIC_MAX_WEIGHTS = 1_000_000;

/**
 * Work (feature occurrences × labels, summed over the fits) above which the baseline is not fitted:
 * a fit's pass costs its rows' feature occurrences times the labels, and a fit makes at most 500
 * iterations. Measured at about 1.1 µs a unit on the 2-core machine of docs/benchmarks.md (2,000
 * CLINC150 queries of 20 intents: 10.6 million, 13 s), so at most about a minute.
 */
export const LOGISTIC_MAX_WORK = 50_000_000;

/** Word and adjacent word-pair counts of a text, keyed `w:word` and `p:word word`. */
export function wordPairCounts(text: string): Map<string, number> {
  const w = words(text);
  const out = new Map<string, number>();
  const add = (f: string): void => void out.set(f, (out.get(f) ?? 0) + 1);
  w.forEach((x, i) => {
    add(`w:${x}`);
    if (i > 0) add(`p:${w[i - 1] as string} ${x}`);
  });
  return out;
}

export type Featurize = (text: string) => Map<string, number>;

/** The features a fit would have and their occurrences: what LOGISTIC_MAX_* are checked on. */
export function featureCount(texts: Iterable<string>, featurize: Featurize = wordPairCounts) {
  const seen = new Set<string>();
  let occurrences = 0;
  for (const t of texts)
    for (const k of featurize(t).keys()) {
      seen.add(k);
      occurrences++;
    }
  return { features: seen.size, occurrences };
}

export interface LogisticModel {
  /** The labels it was fitted on, in the order `logProbabilities` gives them. */
  labels: readonly string[];
  /** log P(label | text) for each label. */
  logProbabilities(text: string): Float64Array;
}

/**
 * Fits the model on `examples` at strength `c`. Rows are stored compressed (feature ids and
 * counts), so a pass costs the examples' feature occurrences times the labels.
 */
export function fitLogistic(
  examples: ReadonlyArray<{ text: string; label: string }>,
  c: number,
  featurize: Featurize = wordPairCounts,
): LogisticModel {
  const labels = [...new Set(examples.map((e) => e.label))].sort();
  const features = new Map<string, number>();
  const starts = [0];
  const ids: number[] = [];
  const counts: number[] = [];
  for (const e of examples) {
    for (const [k, v] of featurize(e.text)) {
      let id = features.get(k);
      if (id === undefined) features.set(k, (id = features.size));
      ids.push(id);
      counts.push(v);
    }
    starts.push(ids.length);
  }
  const C = labels.length;
  const F = features.size;
  const y = examples.map((e) => labels.indexOf(e.label));
  const z = new Float64Array(C);
  const objective = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    for (let i = 0; i < examples.length; i++) {
      const from = starts[i] as number;
      const to = starts[i + 1] as number;
      for (let k = 0; k < C; k++) z[k] = x[F * C + k] as number;
      for (let j = from; j < to; j++) {
        const at = (ids[j] as number) * C;
        const v = counts[j] as number;
        for (let k = 0; k < C; k++) z[k] = (z[k] as number) + v * (x[at + k] as number);
      }
      const lse = logSumExp(z);
      const yi = y[i] as number;
      loss += lse - (z[yi] as number);
      for (let k = 0; k < C; k++) {
        const g = c * (exp((z[k] as number) - lse) - (k === yi ? 1 : 0));
        grad[F * C + k] = (grad[F * C + k] as number) + g;
        for (let j = from; j < to; j++) {
          const at = (ids[j] as number) * C + k;
          grad[at] = (grad[at] as number) + g * (counts[j] as number);
        }
      }
    }
    let penalty = 0;
    for (let i = 0; i < F * C; i++) {
      penalty += (x[i] as number) ** 2;
      grad[i] = (grad[i] as number) + (x[i] as number);
    }
    return c * loss + penalty / 2;
  };
  const fitted =
    C < 2
      ? new Float64Array((F + 1) * C)
      : minimize(objective, new Float64Array((F + 1) * C), {
          maxIterations: 500,
          relativeTolerance: 1e-12,
        }).x;
  return {
    labels,
    logProbabilities(text: string) {
      const out = new Float64Array(C);
      for (let k = 0; k < C; k++) out[k] = fitted[F * C + k] as number;
      for (const [key, v] of featurize(text)) {
        const f = features.get(key);
        if (f === undefined) continue;
        for (let k = 0; k < C; k++) out[k] = (out[k] as number) + v * (fitted[f * C + k] as number);
      }
      const lse = logSumExp(out);
      for (let k = 0; k < C; k++) out[k] = (out[k] as number) - lse;
      return out;
    },
  };
}

function logSumExp(z: Float64Array): number {
  let max = -Infinity;
  for (const v of z) if (v > max) max = v;
  let sum = 0;
  for (const v of z) sum += exp(v - max);
  return max + log(sum);
}

/** A labelled line of one question: its text, its label's option id and the ids it allowed. */
interface Row {
  index: number;
  example: LabelledExample;
  text: string;
  label: string;
  allowed: string[];
}

function rowsOf(examples: readonly LabelledExample[], question: string): Row[] {
  const rows: Row[] = [];
  examples.forEach((example, index) => {
    const label = example.labels.get(question);
    const asked = example.valid.questions.find((x) => x.id === question);
    if (label === undefined || asked === undefined) return;
    const allowed = promptOptions(asked).map(([id]) => id);
    rows.push({
      index,
      example,
      text: stateText(example),
      label: allowed[label] as string,
      allowed,
    });
  });
  return rows;
}

/** The least log-probability a line's label counts for, seen by the fit or not (as sklearn). */
const LOG_FLOOR = log(1e-12);

/**
 * Logistic regression judged like the model and naive Bayes (baselineFigures): on the held-out
 * part, C chosen there by log loss; or out of fold on the model's cross-fit folds, C chosen by the
 * out-of-fold log loss. As the model's λ is, so both were tuned on the lines they are judged on.
 * `onFit` counts the fits (3 per fold, or 3) as they end.
 */
export async function logisticFigures(
  questions: ReadonlyArray<{ id: string }>,
  train: readonly LabelledExample[],
  heldOut: readonly LabelledExample[] | null,
  folds: readonly number[] | null,
  modelRight?: ModelRight,
  onFit?: (done: number, total: number) => void,
): Promise<
  Pick<BaselineReport, 'logisticSkipped'> & { questions: Map<string, LogisticFigures | null> }
> {
  const k = heldOut === null && folds !== null ? Math.max(...folds) + 1 : 1;
  const total = questions.length * LOGISTIC_CS.length * k;
  let done = 0;
  const skipped: string[] = [];
  const out = new Map<string, LogisticFigures | null>();
  for (const q of questions) {
    const rows = rowsOf(train, q.id);
    const labels = new Set(rows.map((r) => r.label)).size;
    const counted = featureCount(rows.map((r) => r.text));
    const weights = (counted.features + 1) * labels;
    const work = counted.occurrences * labels * LOGISTIC_CS.length * k;
    const n = (x: number) => x.toLocaleString('en-US');
    const over =
      weights > LOGISTIC_MAX_WEIGHTS
        ? `would have ${n(weights)} weights (word and word-pair features × options), more than the ${n(LOGISTIC_MAX_WEIGHTS)} it is fitted at`
        : work > LOGISTIC_MAX_WORK
          ? `would take ${n(work)} steps (feature occurrences × options × ${LOGISTIC_CS.length * k} fits, each up to 500 iterations), more than the ${n(LOGISTIC_MAX_WORK)} it is fitted at (about a minute)`
          : null;
    if (over !== null) {
      skipped.push(`\`${q.id}\` ${over}`);
      out.set(q.id, null);
      done += LOGISTIC_CS.length * k;
      onFit?.(done, total);
      continue;
    }
    const judged = heldOut !== null ? rowsOf(heldOut, q.id) : folds !== null ? rows : [];
    // Per strength, each judged line's log-probabilities and the labels they are over.
    const candidates = [];
    for (const c of LOGISTIC_CS) {
      const answers = new Map<Row, { lp: Float64Array; labels: readonly string[] }>();
      const fitAndJudge = async (fitOn: Row[], judgeOn: Row[]) => {
        const model = fitLogistic(fitOn, c);
        for (const r of judgeOn)
          answers.set(r, { lp: model.logProbabilities(r.text), labels: model.labels });
        // A turn of the event loop between fits: a signal (Ctrl-C) is heard, and onFit may stop.
        await new Promise((resolve) => setTimeout(resolve, 0));
        onFit?.(++done, total);
      };
      if (heldOut !== null) await fitAndJudge(rows, judged);
      else if (folds !== null)
        for (let f = 0; f < k; f++)
          await fitAndJudge(
            rows.filter((r) => folds[r.index] !== f),
            rows.filter((r) => folds[r.index] === f),
          );
      let loss = 0;
      for (const [r, a] of answers) {
        const at = a.labels.indexOf(r.label);
        loss -= at < 0 ? LOG_FLOOR : Math.max(a.lp[at] as number, LOG_FLOOR);
      }
      candidates.push({ c, answers, loss });
    }
    const best = candidates.reduce((a, b) => (b.loss < a.loss ? b : a));
    let right = 0;
    const disagreements = new DisagreementCount();
    for (const r of judged) {
      const a = best.answers.get(r);
      let pick = -1;
      a?.labels.forEach((id, i) => {
        if (r.allowed.includes(id) && (pick < 0 || (a.lp[i] as number) > (a.lp[pick] as number)))
          pick = i;
      });
      const ok = a !== undefined && pick >= 0 && a.labels[pick] === r.label;
      if (ok) right++;
      disagreements.add(r.example, r.label, modelRight?.(q.id, r.example), ok);
    }
    out.set(q.id, {
      accuracy: judged.length === 0 ? NaN : right / judged.length,
      c: best.c,
      ...(modelRight === undefined ? {} : { disagreements: disagreements.result() }),
    });
  }
  return {
    questions: out,
    ...(skipped.length > 0 ? { logisticSkipped: `not fitted: ${skipped.join('; ')}.` } : {}),
  };
}
