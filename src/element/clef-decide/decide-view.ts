/**
 * What `<clef-decide>` shows (clef-decide.ts): its slots around the answers, load progress, an
 * error with its retry button, each answer with its calibrated note, the untrained warning, and
 * the live region that announces each decision to screen readers.
 */
import { html, nothing, type TemplateResult } from 'lit';
import type { LoadProgress } from '../../wire/wire.js';
import { renderAnswers } from './answer-view.js';
import { calibratedNote, calibratedQuestion } from './calibrated-view.js';
import { untrainedNote } from './untrained-view.js';
import type { ClefDecisionDetail, ClefErrorDetail } from './events.js';
import { progressBar } from './progress-bar.js';

/** The element's state as its view reads it. */
export interface DecideViewState {
  result: ClefDecisionDetail | null;
  error: ClefErrorDetail | null;
  loaded: boolean;
  deciding: boolean;
  progress: LoadProgress | null;
  /** The answers region's accessible name (default "Decision"). */
  label: string | undefined;
  announcement: string;
  retry: () => void;
}

function errorView(e: ClefErrorDetail, retry: () => void): TemplateResult {
  return html`<div class="error" part="error" role="alert">
    <span>${e.message}</span>
    <code>${e.code}</code>
    <button part="retry" type="button" @click=${retry}>Retry</button>
  </div>`;
}

export function decideView(view: DecideViewState): TemplateResult {
  const { result, error, deciding } = view;
  const loading = !view.loaded && !error;
  return html`<div class=${deciding ? 'wrap busy' : 'wrap'} part="base">
    <slot name="header"></slot>
    ${loading ? progressBar(view.progress) : nothing}
    ${error ? errorView(error, view.retry) : nothing}
    <section aria-label=${view.label || 'Decision'} aria-busy=${deciding ? 'true' : 'false'}>
      ${result ? untrainedNote(result.untrained) : nothing}
      ${
        result
          ? renderAnswers(result.response, (id, answer) => {
              const q = calibratedQuestion(result.calibrated, id);
              const note = q ? calibratedNote(q) : nothing;
              return html`<slot name=${`answer-${id}`}>${note}${answer}</slot>`;
            })
          : error || loading
            ? nothing
            : html`<div class="empty" part="empty">
                <slot name="empty">${deciding ? 'Deciding…' : 'Nothing to decide yet.'}</slot>
              </div>`
      }
    </section>
    <slot name="footer"></slot>
    <div class="sr-only" role="status" aria-live="polite" aria-atomic="true">
      ${view.announcement}
    </div>
  </div>`;
}
