/**
 * What the Train panel (train-panel.ts) shows about a file and a trained model: pure Lit
 * templates and the small rules behind them (a long label table summarised, a model named after
 * its file).
 */
import { html, nothing, type TemplateResult } from 'lit';
import type { InputSummary, TrainResult } from '../train-web/train-wire.js';
import { folderName } from './trained-store.js';

/** Label rows the counts table shows; the rest are summed up in one line. */
export const SHOWN_LABELS = 20;

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** A model name from a file name: `tickets.csv` → `tickets`. */
export function nameFromFile(fileName: string): string {
  return folderName(fileName.replace(/\.[^.]*$/, '')) || 'model';
}

/** The counts table's rows: the first SHOWN_LABELS, then how many more and their examples. */
export function shownLabels(labels: InputSummary['labels']): {
  rows: InputSummary['labels'];
  more: { labels: number; examples: number } | null;
} {
  const rows = labels.slice(0, SHOWN_LABELS);
  const rest = labels.slice(SHOWN_LABELS);
  return {
    rows,
    more:
      rest.length === 0
        ? null
        : { labels: rest.length, examples: rest.reduce((n, l) => n + l.count, 0) },
  };
}

/** Notes as a list: the file's before training (`file`), the run's after it. */
function renderNotes(
  notes: readonly string[],
  of: 'file' | 'run',
): TemplateResult | typeof nothing {
  if (notes.length === 0) return nothing;
  const items = notes.map((note) => html`<li>${note}</li>`);
  return of === 'file'
    ? html`<ul class="train-notes" data-file-notes>
        ${items}
      </ul>`
    : html`<ul class="train-notes" data-notes>
        ${items}
      </ul>`;
}

/**
 * The label counts the file holds (the first SHOWN_LABELS rows, then how many more), and what
 * `train` will say of its repeated lines.
 */
export function renderCounts(summary: InputSummary, fileName: string): TemplateResult {
  const { rows, more } = shownLabels(summary.labels);
  return html`<table class="label-counts" aria-label="Label counts">
      <caption>
        ${fileName}: ${summary.examples} example${summary.examples === 1 ? '' : 's'}
        (${summary.encoding})
      </caption>
      <tr>
        <th>question</th>
        <th>option</th>
        <th>examples</th>
      </tr>
      ${rows.map(
        (l) =>
          html`<tr>
            <td>${l.question}</td>
            <td>${l.option}</td>
            <td>${l.count}</td>
          </tr>`,
      )}
      ${
        more
          ? html`<tr class="more">
              <td colspan="3">
                and ${more.labels} more label${more.labels === 1 ? '' : 's'} (${more.examples}
                examples)
              </td>
            </tr>`
          : nothing
      }
    </table>
    ${renderNotes(summary.notes, 'file')}`;
}

const VERDICT = {
  earned: 'the model earned its place',
  level: 'no better than naive Bayes by 3 points',
  worse: 'naive Bayes is better: the model did not earn its place',
  unmeasured: 'not compared',
} as const;

/** The lines only one of the two got right, and the card's sign test on them. */
function chance(
  d: { modelOnly: number; baselineOnly: number; p: number } | undefined,
  baseline: string,
): TemplateResult | typeof nothing {
  if (d === undefined) return nothing;
  const p = d.p < 0.001 ? '< 0.001' : d.p.toFixed(3);
  return html`<span data-chance
    >(right alone: the model ${d.modelOnly}, ${baseline} ${d.baselineOnly}; sign test p ${p})</span
  >`;
}

/** Naive Bayes' figures, then logistic regression's, beside a question's accuracy. */
function baselines(r: TrainResult, id: string): TemplateResult {
  const b = r.baseline.questions.find((x) => x.id === id);
  const lr = b?.logistic;
  const behind = lr?.verdict === 'behind';
  const nbVerdict =
    b?.verdict === 'earned' && behind
      ? '3 points or more above it'
      : VERDICT[b?.verdict ?? 'unmeasured'];
  return html`naive Bayes <span data-baseline>${pct(b?.accuracy ?? NaN)}</span>: ${nbVerdict}
    ${chance(b?.disagreements, 'naive Bayes')};
    ${
      lr == null
        ? html`logistic regression
            <span data-logistic title=${r.baseline.logisticSkipped ?? ''}>not fitted</span>`
        : html`logistic regression <span data-logistic>${pct(lr.accuracy)}</span>:
            ${behind ? 'better: the model did not earn its place' : 'the model is level or ahead'}
            ${chance(lr.disagreements, 'logistic regression')}`
    }`;
}

/** The trained model's figures, and what to do with it. */
export function renderResult(
  r: TrainResult,
  actions: { use: () => void; download: () => void },
  threads: number,
): TemplateResult {
  return html`<div class="train-result" data-model=${r.name}>
    <p>
      <strong>${r.name}</strong>: ${r.examples.train} examples trained,
      ${
        r.evaluatedOn === 'cross-fit'
          ? 'each judged out of fold (by a model fitted without it)'
          : `${r.examples.heldOut} held out`
      }.
      The package gives the fitted model's probabilities to within
      <span data-delta>${r.maxPackageDeltaP.toExponential(2)}</span> on ${r.verified} examples run
      through this page's engine;
      ${
        r.calibrated
          ? `calibrated on the ${r.evaluatedOn === 'cross-fit' ? 'out-of-fold answers' : 'held-out part'}`
          : 'too few answers to calibrate'
      }.
    </p>
    ${r.heldOut.questions.map(
      (q) =>
        html`<table class="recall" data-question=${q.id}>
          <caption>
            ${q.id}: ${r.evaluatedOn === 'cross-fit' ? 'out-of-fold' : 'held-out'} accuracy
            <span data-accuracy>${pct(q.accuracy)}</span>
            (${q.answered}); ${baselines(r, q.id)}
          </caption>
          <tr>
            <th>option</th>
            <th>held out</th>
            <th>recall</th>
          </tr>
          ${Object.entries(q.recall).map(
            ([id, f]) =>
              html`<tr>
                <td>${id}</td>
                <td>${f.n}</td>
                <td>${pct(f.recall)}</td>
              </tr>`,
          )}
        </table>`,
    )}
    ${renderNotes(r.notes, 'run')}
    <p class="muted" data-timings>
      fitted on <span data-threads>${threads}</span> ${threads === 1 ? 'thread' : 'threads'} ·
      ${Object.entries(r.timingsMs)
        .map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)} s`)
        .join(' · ')}
    </p>
    <button type="button" @click=${actions.use}>Use this model here</button>
    <button type="button" @click=${actions.download}>Download .zip</button>
  </div>`;
}
