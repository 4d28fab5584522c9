/**
 * How far chance explains the model's lead over naive Bayes (baseline.ts signTestP, and the lines
 * the card prints): the exact sign test checked against exact integer arithmetic on fresh random
 * splits, the disagreements counted on the lines both were judged on, and the card's sentence.
 *
 * Tolerance: signTestP sums each term from its logarithm; against BigInt sums of binomial
 * coefficients its relative error was at most 6.9e-13 on n ≤ 1,000 (seeds 1 to 5), so the bound
 * is 1e-10.
 */
import { describe, expect, it } from 'vitest';
import { parseLabelledExamples, type LabelledExample } from '../../../../src/calibrate/examples.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import {
  DisagreementCount,
  baselineFigures,
  chanceNote,
  fitNaiveBayes,
  naiveBayesChoice,
  signTestP,
  stateText,
} from '../../../../src/build/train/baseline.js';
import { modelCard } from '../../../../src/build/train/card.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { seedLine, testSeed } from '../../../support/seed.js';
import { cardFacts } from '../../support/card-facts.js';

/** 2 · Σ_{i ≤ min(b, c)} C(b + c, i) / 2^(b + c), exactly, then rounded once. */
function exactP(b: number, c: number): number {
  const n = BigInt(b + c);
  let coefficient = 1n;
  let sum = 0n;
  for (let i = 0n; i <= BigInt(Math.min(b, c)); i++) {
    if (i > 0n) coefficient = (coefficient * (n - i + 1n)) / i;
    sum += coefficient;
  }
  return Math.min(1, Number(2n * sum) / Number(2n ** n));
}

describe('the exact sign test', () => {
  it('gives the values worked by hand', () => {
    expect(signTestP(0, 0)).toBe(1);
    expect(signTestP(11, 10)).toBe(1);
    expect(signTestP(5, 0)).toBeCloseTo(2 / 32, 15);
    expect(signTestP(1, 9)).toBeCloseTo((2 * (1 + 10)) / 1024, 15);
    expect(signTestP(9, 1)).toBe(signTestP(1, 9));
  });

  it('matches exact integer sums on fresh random splits, up to n = 1,000', () => {
    const SEED = testSeed('baseline-chance');
    const rng = new Rng(SEED);
    let worst = 0;
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + rng.int(1000);
      const b = rng.int(n + 1);
      const want = exactP(b, n - b);
      const got = signTestP(b, n - b);
      if (want < 1e-300) continue; // below float64's range either way
      worst = Math.max(worst, Math.abs(got - want) / want);
    }
    console.log(
      `[baseline-chance] ${seedLine('baseline-chance', SEED)}: worst relative error ${worst.toExponential(2)}`,
    );
    expect(worst, seedLine('baseline-chance', SEED)).toBeLessThan(1e-10);
  });
});

describe("the disagreements beside naive Bayes' accuracy", () => {
  const words = ['refund', 'invoice', 'password', 'login', 'charge', 'locked'];
  const lines = Array.from({ length: 24 }, (_, i) => {
    const a = words[i % 6] as string;
    const b = words[(i * 5 + 1) % 6] as string;
    const label = i % 3 === 0 ? 'login' : 'billing';
    return JSON.stringify({
      request: {
        model: 'm',
        state: `my ${a} and ${b}`,
        questions: { route: { type: 'choice', criteria: { billing: null, login: null } } },
      },
      labels: { route: label },
    });
  });
  const examples = parseLabelledExamples(lines.join('\n'), {
    validateRequest: (b) => validateRequest(b),
  });
  const train = examples.slice(0, 16);
  const heldOut = examples.slice(16);

  it('count the lines only one of the two got right, on the lines the model was judged on', () => {
    // A model right on the even lines, and not judged on one of them.
    const skipped = heldOut[0]?.line;
    const report = baselineFigures([{ id: 'route' }], train, heldOut, null, (_, e) =>
      e.line === skipped ? undefined : e.line % 2 === 0,
    );
    const nb = fitNaiveBayes(train, 'route');
    let modelOnly = 0;
    let baselineOnly = 0;
    // A line and its copies count once (held-out lines 18 and 24 read the same, as do 17 and 23).
    const counted = new Set<string>();
    for (const e of heldOut) {
      if (e.line === skipped) continue;
      const key = `${stateText(e)} ${e.labels.get('route')}`;
      if (counted.has(key)) continue;
      counted.add(key);
      const want = e.labels.get('route') === 0 ? 'billing' : 'login';
      const nbRight =
        nb !== null && naiveBayesChoice(nb, stateText(e), ['billing', 'login']) === want;
      const modelRight = e.line % 2 === 0;
      if (modelRight && !nbRight) modelOnly++;
      if (nbRight && !modelRight) baselineOnly++;
    }
    const d = report.questions[0]?.disagreements;
    expect(modelOnly + baselineOnly).toBeGreaterThan(0);
    expect(d).toEqual({ modelOnly, baselineOnly, p: signTestP(modelOnly, baselineOnly) });
    expect(report.questions[0]?.answered).toBe(heldOut.length);
  });

  it('leave a line the model was not judged on to its copies', () => {
    const [line] = heldOut as [LabelledExample];
    const count = new DisagreementCount();
    count.add(line, 0, undefined, true);
    count.add(line, 0, false, true);
    count.add(line, 0, false, true);
    expect(count.result()).toEqual({ modelOnly: 0, baselineOnly: 1, p: signTestP(0, 1) });
  });

  it('are left out where no model answers were given', () => {
    const report = baselineFigures([{ id: 'route' }], train, heldOut, null);
    expect(report.questions[0]?.disagreements).toBeUndefined();
  });
});

describe("the card's line on chance", () => {
  const facts = (disagreements?: { modelOnly: number; baselineOnly: number; p: number }) =>
    cardFacts({
      baseline: {
        method: 'naive Bayes on word counts',
        questions: [
          { id: 'team', answered: 10, accuracy: 0.7, ...(disagreements ? { disagreements } : {}) },
        ],
      },
    });

  it('says a small lead could be chance, and a large one is unlikely to be', () => {
    expect(modelCard(facts({ modelOnly: 11, baselineOnly: 10, p: signTestP(11, 10) }))).toContain(
      '- `team`: on the 21 lines where this model and naive Bayes disagree, this model was right on 11 and naive Bayes on 10. Were neither better, a split at least this uneven would come with probability 1.000 (exact sign test): the difference could be chance.',
    );
    const card = modelCard(facts({ modelOnly: 30, baselineOnly: 2, p: signTestP(30, 2) }));
    expect(card).toContain('probability under 0.001 (exact sign test): unlikely to be chance.');
    expect(modelCard(facts({ modelOnly: 0, baselineOnly: 0, p: 1 }))).toContain(
      '- `team`: this model and naive Bayes got the same lines right.',
    );
  });

  it('says one line as one line, on the card and in the CLI', () => {
    const one = { modelOnly: 1, baselineOnly: 0, p: signTestP(1, 0) };
    expect(modelCard(facts(one))).toContain(
      '- `team`: on the one line where this model and naive Bayes disagree, this model was right on 1',
    );
    expect(chanceNote(one)).toBe(
      '1 line right by the model alone, 0 by naive Bayes alone: could be chance (sign test, p 1.000)',
    );
  });

  it('is left out where the disagreements were not counted', () => {
    expect(modelCard(facts())).not.toContain('exact sign test');
  });
});
