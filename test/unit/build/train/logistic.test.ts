/**
 * The second baseline on the card (logistic.ts): logistic regression on word and word-pair counts.
 *
 * - The fit is checked against the optimality conditions of its objective (C · Σ cross-entropy +
 *   ½ |w|², intercepts free), written here independently: at the minimum each feature's weights
 *   equal −C · Σ (p − y) x over the lines that have it, and the intercepts' gradient C · Σ (p − y)
 *   vanishes. The weights are read back through the model's answers alone (a text of one word
 *   against the empty text), on fresh random files. Tolerance: L-BFGS stops at a relative
 *   improvement of 1e-12, where the worst residual measured was 2.0e-4 (seeds 1 to
 *   10), so the bound is 1e-3.
 * - It reads word order where naive Bayes cannot, is judged on the same lines as the model, and
 *   is not fitted above its weight limit, which the card says.
 */
import { describe, expect, it } from 'vitest';
import { parseLabelledExamples, type LabelledExample } from '../../../../src/calibrate/examples.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import { baselineFigures, logisticVerdict } from '../../../../src/build/train/baseline.js';
import { modelCard } from '../../../../src/build/train/card.js';
import {
  fitLogistic,
  LOGISTIC_CS,
  LOGISTIC_MAX_WEIGHTS,
  LOGISTIC_MAX_WORK,
  logisticFigures,
} from '../../../../src/build/train/logistic.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { cardFacts } from '../../support/card-facts.js';

const LABELS = ['alpha', 'beta', 'gamma'];

/** Word counts and adjacent-pair counts, by splitting on spaces (the test's own). */
function features(text: string): Map<string, number> {
  const w = text.split(' ').filter((x) => x !== '');
  const out = new Map<string, number>();
  w.forEach((x, i) => {
    out.set(`w:${x}`, (out.get(`w:${x}`) ?? 0) + 1);
    if (i > 0) out.set(`p:${w[i - 1]} ${x}`, (out.get(`p:${w[i - 1]} ${x}`) ?? 0) + 1);
  });
  return out;
}

function randomFile(rng: Rng, n: number) {
  return Array.from({ length: n }, () => {
    const length = 2 + rng.int(5);
    const ws = Array.from({ length }, () => `w${rng.int(10)}`);
    // Labels lean on the first word, with noise, so the fit is neither trivial nor separable.
    const lean = Number(ws[0]?.slice(1)) % 3;
    const label = LABELS[rng.uniform() < 0.6 ? lean : rng.int(3)] as string;
    return { text: ws.join(' '), label };
  });
}

describe('the logistic regression fit', () => {
  it('meets its optimality conditions on fresh random files', () => {
    const SEED = testSeed('logistic-fit');
    const rng = new Rng(SEED);
    let worst = 0;
    for (let trial = 0; trial < 6; trial++) {
      const file = randomFile(rng, 30 + rng.int(30));
      const c = LOGISTIC_CS[trial % 3] as number;
      const model = fitLogistic(file, c);
      expect([...model.labels]).toEqual([...new Set(file.map((e) => e.label))].sort());
      const K = model.labels.length;
      const p = file.map((e) => model.logProbabilities(e.text).map(Math.exp));
      const residual = (i: number, k: number) =>
        (p[i]?.[k] as number) - (file[i]?.label === model.labels[k] ? 1 : 0);
      // Intercepts: C · Σ (p − y) = 0.
      for (let k = 0; k < K; k++) {
        let g = 0;
        file.forEach((_, i) => (g += residual(i, k)));
        worst = Math.max(worst, Math.abs(c * g));
      }
      // A word's weights, against the first label's (softmax fixes only their differences).
      const empty = model.logProbabilities('');
      for (let j = 0; j < 10; j++) {
        const word = `w${j}`;
        const alone = model.logProbabilities(word);
        for (let k = 1; k < K; k++) {
          const fitted =
            (alone[k] as number) -
            (empty[k] as number) -
            ((alone[0] as number) - (empty[0] as number));
          let stationary = 0;
          file.forEach((e, i) => {
            const x = features(e.text).get(`w:${word}`) ?? 0;
            stationary -= c * (residual(i, k) - residual(i, 0)) * x;
          });
          worst = Math.max(worst, Math.abs(fitted - stationary));
        }
      }
      // A word pair's weights: the pair's text less its two words alone.
      const [a, b] = (file[0]?.text ?? '').split(' ');
      const pair = model.logProbabilities(`${a} ${b}`);
      const lpA = model.logProbabilities(a as string);
      const lpB = model.logProbabilities(b as string);
      const pairWeight = (k: number) =>
        (pair[k] as number) - (lpA[k] as number) - (lpB[k] as number) + (empty[k] as number);
      for (let k = 1; k < K; k++) {
        let stationary = 0;
        file.forEach((e, i) => {
          const x = features(e.text).get(`p:${a} ${b}`) ?? 0;
          stationary -= c * (residual(i, k) - residual(i, 0)) * x;
        });
        worst = Math.max(worst, Math.abs(pairWeight(k) - pairWeight(0) - stationary));
      }
    }
    console.log(
      `[logistic-fit] ${seedLine('logistic-fit', SEED)}: worst optimality residual ${worst.toExponential(2)}`,
    );
    expect(worst, seedLine('logistic-fit', SEED)).toBeLessThan(1e-3);
  });
});

function examples(lines: ReadonlyArray<{ text: string; label: string }>, options: string[]) {
  const criteria = Object.fromEntries(options.map((o) => [o, null]));
  return parseLabelledExamples(
    lines
      .map(({ text, label }) =>
        JSON.stringify({
          request: { model: 'm', state: text, questions: { route: { type: 'choice', criteria } } },
          labels: { route: label },
        }),
      )
      .join('\n'),
    { validateRequest: (b) => validateRequest(b) },
  );
}

describe('the second baseline beside the model', () => {
  // Which of two words comes first decides the label: a bag of words is at chance.
  const filler = ['please', 'check', 'the', 'report', 'today', 'again', 'for', 'me'];
  const orderLines = (rng: Rng, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const first = i % 2 === 0;
      const pick = () => filler[rng.int(filler.length)] as string;
      return {
        text: `${pick()} ${pick()} ${first ? 'north omega' : 'omega north'} ${pick()}`,
        label: first ? 'first' : 'second',
      };
    });

  it('reads word order from its word pairs, out of fold, where naive Bayes cannot', async () => {
    const SEED = testSeed('logistic-order');
    const train = examples(orderLines(new Rng(SEED), 60), ['first', 'second']);
    const folds = train.map((_, i) => i % 5);
    const lr = (await logisticFigures([{ id: 'route' }], train, null, folds)).questions.get(
      'route',
    );
    const nb = baselineFigures([{ id: 'route' }], train, null, folds).questions[0];
    expect(lr?.accuracy, seedLine('logistic-order', SEED)).toBeGreaterThanOrEqual(0.95);
    expect(nb?.accuracy, seedLine('logistic-order', SEED)).toBeLessThanOrEqual(0.75);
  });

  it('chooses C by log loss on the held-out part and counts the lines only one got right', async () => {
    const rng = new Rng(testSeed('logistic-held-out'));
    const lines = randomFile(rng, 50);
    const all = examples(lines, LABELS);
    const train = all.slice(0, 35);
    const heldOut = all.slice(35);
    const skipped = heldOut[0]?.line;
    const modelRight = (_: string, e: LabelledExample) =>
      e.line === skipped ? undefined : e.line % 2 === 0;
    const ticks: Array<[number, number]> = [];
    const lr = (
      await logisticFigures([{ id: 'route' }], train, heldOut, null, modelRight, (d, t) =>
        ticks.push([d, t]),
      )
    ).questions.get('route');
    expect(ticks).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const text = (e: LabelledExample) => String(e.valid.state);
    const label = (e: LabelledExample) => LABELS[e.labels.get('route') as number] as string;
    const rows = train.map((e) => ({ text: text(e), label: label(e) }));
    const losses = LOGISTIC_CS.map((c) => {
      const m = fitLogistic(rows, c);
      return heldOut.reduce(
        (s, e) => s - (m.logProbabilities(text(e))[m.labels.indexOf(label(e))] as number),
        0,
      );
    });
    expect(lr?.c).toBe(LOGISTIC_CS[losses.indexOf(Math.min(...losses))]);
    const m = fitLogistic(rows, lr?.c as number);
    let right = 0;
    let modelOnly = 0;
    let baselineOnly = 0;
    // The sign test counts a line and its copies once (these random lines repeat now and then).
    const counted = new Set<string>();
    for (const e of heldOut) {
      const lp = m.logProbabilities(text(e));
      const ok = m.labels[lp.indexOf(Math.max(...lp))] === label(e);
      if (ok) right++;
      if (counted.has(`${text(e)} ${label(e)}`)) continue;
      counted.add(`${text(e)} ${label(e)}`);
      const model = modelRight('route', e);
      if (model === true && !ok) modelOnly++;
      if (model === false && ok) baselineOnly++;
    }
    expect(lr?.accuracy).toBe(right / heldOut.length);
    expect(lr?.disagreements?.modelOnly).toBe(modelOnly);
    expect(lr?.disagreements?.baselineOnly).toBe(baselineOnly);
    expect(modelOnly + baselineOnly).toBeGreaterThan(0);
  });

  /** logisticFigures on 5 folds of `lines` lines of `length` words, the labels in turn. */
  const outOfFold = (
    lines: number,
    labels: number,
    word: (line: number, at: number) => string,
    length: number,
  ) => {
    const options = Array.from({ length: labels }, (_, i) => `o${i}`);
    const file = Array.from({ length: lines }, (_, i) => ({
      text: Array.from({ length }, (_, j) => word(i, j)).join(' '),
      label: options[i % labels] as string,
    }));
    const train = examples(file, options);
    return logisticFigures(
      [{ id: 'route' }],
      train,
      null,
      train.map((_, i) => i % 5),
    );
  };

  it('is not fitted above its weight limit, and says so', async () => {
    const rng = new Rng(testSeed('logistic-limit'));
    // 1,000 lines of 12 words never seen elsewhere, 50 labels: about 23,000 features × 50.
    const lr = await outOfFold(1000, 50, (i, j) => `x${i}y${j}z${rng.int(1000)}`, 12);
    expect(lr.questions.get('route')).toBeNull();
    expect(lr.logisticSkipped).toMatch(
      /^not fitted: `route` would have 1,1\d\d,\d\d\d weights \(word and word-pair features × options\), more than the 1,000,000 it is fitted at/,
    );
    expect(LOGISTIC_MAX_WEIGHTS).toBe(1_000_000);
    const card = modelCard(
      cardFacts({
        baseline: {
          method: 'naive Bayes on word counts',
          questions: [{ id: 'team', answered: 10, accuracy: 0.5, logistic: null }],
          logisticSkipped: lr.logisticSkipped as string,
        },
      }),
    );
    expect(card).toMatch(/\| `team` \| n\/a \| 50\.0% \| not fitted \| /);
    expect(card).toContain('Logistic regression was not fitted: `route` would have');
  });

  it('is not fitted where its fits would take too long, and says so', async () => {
    const rng = new Rng(testSeed('logistic-work'));
    // 2,000 lines of 30 words of 50, 40 labels: few weights (about 2,550 features × 40), but
    // about 55 feature occurrences a line × 40 labels × 15 fits each pass.
    const lr = await outOfFold(2000, 40, () => `v${rng.int(50)}`, 30);
    expect(lr.questions.get('route')).toBeNull();
    expect(lr.logisticSkipped).toMatch(
      /^not fitted: `route` would take [\d,]+ steps \(feature occurrences × options × 15 fits, each up to 500 iterations\), more than the 50,000,000 it is fitted at \(about a minute\)\.$/,
    );
    expect(LOGISTIC_MAX_WORK).toBe(50_000_000);
  });
});

describe("the card's verdict against both baselines", () => {
  const card = (model: number, nb: number, lr: number) =>
    modelCard(
      cardFacts({
        heldOut: {
          questions: [{ id: 'team', answered: 100, accuracy: model, recall: {}, confusions: [] }],
        },
        baseline: {
          method: 'naive Bayes on word counts',
          questions: [
            {
              id: 'team',
              answered: 100,
              accuracy: nb,
              logistic: {
                accuracy: lr,
                c: 1,
                verdict: logisticVerdict(model, lr),
                disagreements: { modelOnly: 11, baselineOnly: 10, p: 1 },
              },
            },
          ],
        },
      }),
    );

  it('says the model earned its place only when it is also level with logistic regression', () => {
    expect(card(0.8, 0.7, 0.8)).toContain('| `team` | 80.0% | 70.0% | 80.0% | earned its place |');
    const behind = card(0.8, 0.7, 0.85);
    expect(behind).not.toContain('earned its place');
    expect(behind).toContain(
      '| `team` | 80.0% | 70.0% | 85.0% | 3 points or more above naive Bayes, but **logistic regression is better here**',
    );
    expect(card(0.71, 0.7, 0.75)).toContain(
      'level with naive Bayes (within 3 points); **logistic regression is better here**',
    );
    expect(card(0.6, 0.7, 0.75)).toContain(
      '**naive Bayes is better here**, and logistic regression too:',
    );
  });

  it('prints the sign test against logistic regression too', () => {
    expect(card(0.8, 0.7, 0.8)).toContain(
      '- `team`: on the 21 lines where this model and logistic regression disagree, this model was right on 11 and logistic regression on 10. Were neither better, a split at least this uneven would come with probability 1.000 (exact sign test): the difference could be chance.',
    );
  });
});
