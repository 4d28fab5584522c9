/**
 * What the Train panel says about a trained model beside its two baselines (train-view.ts
 * renderResult), read from the template itself: the words a user sees, without a DOM.
 */
import { describe, expect, it } from 'vitest';
import type { TemplateResult } from 'lit';
import { renderResult } from '../../../src/playground/train-view.js';
import type { TrainResult } from '../../../src/train-web/train-wire.js';

/** A template's markup with its values in place (nested templates and lists included). */
function markup(v: unknown): string {
  if (v === null || v === undefined || typeof v === 'symbol' || typeof v === 'function') return '';
  if (Array.isArray(v)) return v.map(markup).join('');
  if (typeof v === 'object' && 'strings' in v && 'values' in v) {
    const t = v as TemplateResult;
    return t.strings.reduce(
      (out, s, i) => out + s + (i < t.values.length ? markup(t.values[i]) : ''),
      '',
    );
  }
  return String(v);
}

/** The words shown: the markup without its tags, its spaces folded. */
const words = (t: TemplateResult) =>
  markup(t)
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ');

function result(model: number, naiveBayes: number, logistic: number | null): TrainResult {
  const verdict = model >= naiveBayes + 0.03 ? 'earned' : model >= naiveBayes ? 'level' : 'worse';
  return {
    name: 'shop',
    examples: { train: 100, heldOut: 0 },
    evaluatedOn: 'cross-fit',
    maxPackageDeltaP: 1e-5,
    verified: 100,
    calibrated: true,
    timingsMs: { fit: 1000 },
    heldOut: {
      questions: [{ id: 'route', answered: 100, accuracy: model, recall: {}, confusions: [] }],
    },
    baseline: {
      method: 'naive Bayes on word counts',
      questions: [
        {
          id: 'route',
          answered: 100,
          accuracy: naiveBayes,
          verdict,
          disagreements: { modelOnly: 12, baselineOnly: 2, p: 0.013 },
          logistic:
            logistic === null
              ? null
              : {
                  accuracy: logistic,
                  c: 1,
                  verdict: model >= logistic ? 'level-or-ahead' : 'behind',
                  disagreements: { modelOnly: 3, baselineOnly: 8, p: 0.227 },
                },
        },
      ],
      ...(logistic === null
        ? { logisticSkipped: 'not fitted: `route` would have 1,147,432 weights' }
        : {}),
    },
  } as unknown as TrainResult;
}

const actions = { use: () => {}, download: () => {} };

describe('the Train panel beside the baselines', () => {
  it('says the model earned its place where it leads naive Bayes by 3 points and the regression', () => {
    const shown = words(renderResult(result(0.8, 0.7, 0.78), actions));
    expect(shown).toContain('naive Bayes 70.0%: the model earned its place');
    expect(shown).toContain('(right alone: the model 12, naive Bayes 2; sign test p 0.013)');
    expect(shown).toContain('logistic regression 78.0%: the model is level or ahead');
    expect(shown).toContain('(right alone: the model 3, logistic regression 8; sign test p 0.227)');
  });

  it('does not, where logistic regression is ahead', () => {
    const shown = words(renderResult(result(0.8, 0.7, 0.85), actions));
    expect(shown).not.toContain('earned its place');
    expect(shown).toContain('naive Bayes 70.0%: 3 points or more above it');
    expect(shown).toContain('logistic regression 85.0%: better: the model did not earn its place');
  });

  it('says where the regression was not fitted, with the reason on hover', () => {
    const t = renderResult(result(0.8, 0.7, null), actions);
    expect(words(t)).toContain('logistic regression not fitted');
    expect(markup(t)).toContain('title=not fitted: `route` would have 1,147,432 weights');
  });
});
