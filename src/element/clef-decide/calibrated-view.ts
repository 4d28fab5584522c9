/**
 * The calibrated part of an answer (opt-in: `calibrated` or `abstain-below` on `<clef-decide>`):
 * a "not sure" note listing the prediction set's options with their calibrated probabilities
 * when the question abstains, else a one-line "sure" note. Pure Lit templates.
 */
import { html, type TemplateResult } from 'lit';
import type { CalibratedDecision, CalibratedQuestion } from '../../calibrate/decision.js';
import { percent } from './answer-view.js';

export function calibratedQuestion(
  decision: CalibratedDecision | undefined,
  id: string,
): CalibratedQuestion | undefined {
  const q = decision?.questions.find((x) => x.id === id);
  return q?.calibrated ? q : undefined;
}

/** The note shown above question `id`'s answer, or nothing when it was not calibrated. */
export function calibratedNote(q: CalibratedQuestion): TemplateResult {
  const coverage = percent(q.coverage).replace('.0%', '%');
  if (!q.abstain) {
    return html`<div class="clef-sure" part="sure" data-set=${q.set.join(' ')}>
      Sure: ${q.top}, ${percent(q.confidence)} calibrated
    </div>`;
  }
  const p = (option: string) => q.probabilities[q.options.indexOf(option)] ?? 0;
  return html`<div class="clef-unsure" part="unsure" role="note" data-set=${q.set.join(' ')}>
    <strong>Not sure</strong>
    <span class="clef-note"
      >${q.set.length > 1 ? `one of these (${coverage} set)` : 'below the confidence asked'}:</span
    >
    <ul part="set">
      ${q.set.map((o) => html`<li part="set-option">${o} <span class="clef-pct">${percent(p(o))}</span></li>`)}
    </ul>
  </div>`;
}
