// The model card's "What it does not know": where the scope layer was tried and left out, the
// card says what that means for a message that names an option to set it aside, and what to add
// to the file (measured on the bikeshop task: docs/benchmarks.md, "Tasks written after the
// trainer was settled"); where the scope layer was kept, or never tried, it does not.
import { describe, expect, it } from 'vitest';
import { modelCard, type CardFacts } from '../../../../src/build/train/card.js';
import { cardFacts } from '../../support/card-facts.js';

const facts = (layers: Partial<CardFacts['selection']>): CardFacts =>
  cardFacts({ selection: layers });

const ADVICE = /names one option to set it aside .* add a few lines that do it to the file/;

describe('the card on negation', () => {
  it('says what to add where the scope layer was tried and left out', () => {
    const card = modelCard(facts({ scopeTried: true, orderTried: true }));
    expect(card).toContain('tried and did not help out of fold here');
    expect(card).toMatch(ADVICE);
    expect(card).toContain('docs/training.md, §4');
  });

  it('does not where the scope layer was kept', () => {
    const card = modelCard(facts({ scopeTried: true, scope: true, scopeCues: 'every' }));
    expect(card).toContain('leaving out the words in the scope of a negation');
    expect(card).not.toMatch(ADVICE);
  });

  it('does not where the layers were never tried (the file was already answered out of fold)', () => {
    const card = modelCard(facts({}));
    expect(card).toContain('not tried: `auto` tries them');
    expect(card).not.toMatch(ADVICE);
  });
});

// The clause weight reads the later clause as what holds; on two-clause lines that speak of two
// things it weighs the later thing more too, and urgency answered 10 of 12 such lines wrong
// (docs/benchmarks.md, "Pooling clause by clause: a trial"). The card says so where it is kept.
describe('the card on the clause weight', () => {
  const TWO_THINGS =
    /the first clause is the one that counts \("payments are offline, the internal wiki works"\), that lean is wrong: the later clause's words weigh more whatever thing they name/;

  it('names the lines it reads wrongly where the weight was kept', () => {
    const card = modelCard(
      facts({
        scopeTried: true,
        scope: true,
        scopeCues: 'every',
        clauseTried: true,
        clauseWeight: 1,
      }),
    );
    expect(card).toContain('weigh e^1 = 2.72 times as much');
    expect(card).toMatch(TWO_THINGS);
  });

  it('says nothing of it where no weight was kept', () => {
    const card = modelCard(
      facts({ scopeTried: true, scope: true, scopeCues: 'every', clauseTried: true }),
    );
    expect(card).not.toContain('times as much as those before it');
    expect(card).not.toMatch(TWO_THINGS);
  });
});
