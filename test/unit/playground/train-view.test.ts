/**
 * What the Train panel says about a trained model beside its two baselines (train-view.ts
 * renderResult), read from the template itself: the words a user sees, without a DOM.
 */
import { describe, expect, it } from 'vitest';
import type { TemplateResult } from 'lit';
import { renderCounts, renderResult } from '../../../src/playground/train-view.js';
import type { InputSummary } from '../../../src/train-web/train-wire.js';
import { trainResult as result } from '../support/train-result.js';

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

const actions = { use: () => {}, download: () => {} };

describe('the Train panel beside the baselines', () => {
  it('says the model earned its place where it leads naive Bayes by 3 points and the regression', () => {
    const shown = words(renderResult(result(0.8, 0.7, 0.78), actions, 1));
    expect(shown).toContain('naive Bayes 70.0%: the model earned its place');
    expect(shown).toContain('(right alone: the model 12, naive Bayes 2; sign test p 0.013)');
    expect(shown).toContain('logistic regression 78.0%: the model is level or ahead');
    expect(shown).toContain('(right alone: the model 3, logistic regression 8; sign test p 0.227)');
  });

  it('does not, where logistic regression is ahead', () => {
    const shown = words(renderResult(result(0.8, 0.7, 0.85), actions, 1));
    expect(shown).not.toContain('earned its place');
    expect(shown).toContain('naive Bayes 70.0%: 3 points or more above it');
    expect(shown).toContain('logistic regression 85.0%: better: the model did not earn its place');
  });

  it('says where the regression was not fitted, with the reason on hover', () => {
    const t = renderResult(result(0.8, 0.7, null), actions, 1);
    expect(words(t)).toContain('logistic regression not fitted');
    expect(markup(t)).toContain('title=not fitted: `route` would have 1,147,432 weights');
  });

  it('says how many threads the fits ran on', () => {
    expect(words(renderResult(result(0.8, 0.7, 0.78), actions, 1))).toContain(
      'fitted on 1 thread ·',
    );
    expect(words(renderResult(result(0.8, 0.7, 0.78), actions, 3))).toContain(
      'fitted on 3 threads ·',
    );
  });

  it('lists what train found in the file (repeats.ts), and nothing where it found nothing', () => {
    const note =
      '1 text has different labels on different lines, …: "refund" (route): a on line 3, b on line 9.';
    const t = renderResult(result(0.8, 0.7, 0.78, [note]), actions, 1);
    expect(markup(t)).toContain('data-notes');
    expect(words(t)).toContain(note);
    expect(markup(renderResult(result(0.8, 0.7, 0.78), actions, 1))).not.toContain('data-notes');
  });

  it("lists under the file's counts what train will say of it, and nothing where it says nothing", () => {
    const note =
      '2 lines repeat the text of an earlier line (case, spacing and punctuation aside): …';
    const summary = {
      kind: 'plain',
      encoding: 'utf-8',
      format: 'csv',
      columns: ['text', 'route'],
      examples: 42,
      labels: [{ question: 'route', option: 'a', count: 42 }],
      question: null,
      notes: [note],
    } as const satisfies InputSummary;
    const t = renderCounts(summary, 'tickets.csv');
    expect(markup(t)).toContain('data-file-notes');
    expect(words(t)).toContain(note);
    expect(markup(renderCounts({ ...summary, notes: [] }, 'tickets.csv'))).not.toContain(
      'data-file-notes',
    );
  });
});
