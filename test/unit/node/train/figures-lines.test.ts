/** What `clef-web train` prints about a trained model beside its two baselines (cli.ts). */
import { describe, expect, it } from 'vitest';
import { figuresLines } from '../../../../src/node/train/cli.js';
import { trainResult } from '../../support/train-result.js';

describe("train's lines beside the baselines", () => {
  it('say the model earned its place where it leads naive Bayes by 3 points and the regression', () => {
    expect(figuresLines(trainResult(0.8, 0.7, 0.78))).toEqual([
      'route: accuracy 80.0% over 100 answers out of fold; naive Bayes 70.0%: the model earned its place; 12 lines right by the model alone, 2 by naive Bayes alone: unlikely to be chance (sign test, p 0.013)',
      '  logistic regression on word and word-pair counts 78.0%: the model is level or ahead; 3 lines right by the model alone, 8 by logistic regression alone: could be chance (sign test, p 0.227)',
    ]);
  });

  it('say it did not where logistic regression is ahead', () => {
    const [nb, lr] = figuresLines(trainResult(0.8, 0.7, 0.85));
    expect(nb).toContain('naive Bayes 70.0%: 3 points or more above it;');
    expect(nb).not.toContain('earned its place');
    expect(lr).toMatch(
      /^ {2}logistic regression on word and word-pair counts 85\.0%: better than the model: the model did NOT earn its place \(see README\.md\);/,
    );
  });

  it('say why the regression was not fitted', () => {
    const lines = figuresLines(trainResult(0.8, 0.7, null));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('logistic regression not fitted: `route` would have 1,147,432 weights');
  });

  it('end with what train found in the file (repeats.ts), where it found anything', () => {
    const note =
      '3 lines repeat the text of an earlier line (case, spacing and punctuation aside): …';
    const lines = figuresLines(trainResult(0.8, 0.7, 0.78, [note]));
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe(note);
  });
});
