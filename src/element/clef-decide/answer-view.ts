/**
 * How an answer looks: per question the chosen option, and a probability bar (role=meter) for
 * every option. Pure Lit templates over a System One response, shared by `<clef-decide>` and
 * the playground; the styles are `answerStyles` in clef-decide.styles.ts (class-scoped, so they
 * work in a shadow root and in light DOM).
 *
 * Visible labels and percentages are aria-hidden: each meter carries the same facts in its own
 * accessible name and value text, so a screen reader hears them once.
 */
import { html, nothing, type TemplateResult } from 'lit';
import { cssProps } from './css-props.js';
import type {
  Answer,
  ChoiceAnswer,
  Description,
  NoulAnswer,
  ScoreAnswer,
  SystemOneResponse,
} from '../../protocol/types.js';

/** 0.4159 → "41.6%". */
export function percent(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

/** A level or option description as one line of text (objects and arrays as JSON). */
export function descriptionText(description: Description | undefined): string {
  if (description === null || description === undefined) return '';
  if (typeof description === 'string') return description;
  return JSON.stringify(description);
}

function bar(
  questionId: string,
  label: string,
  p: number,
  chosen: boolean,
  detail = '',
): TemplateResult {
  const value = Math.round(p * 1000) / 10;
  return html`<span
      class="clef-option${chosen ? ' clef-chosen' : ''}"
      part="option${chosen ? ' option-chosen' : ''}"
      aria-hidden="true"
      title=${detail || label}
      >${label}${detail ? html` <span class="clef-detail">${detail}</span>` : nothing}</span
    >
    <div
      class="clef-bar${chosen ? ' clef-chosen' : ''}"
      part="bar${chosen ? ' bar-chosen' : ''}"
      role="meter"
      aria-label=${`${questionId}: ${label}${chosen ? ' (chosen)' : ''}`}
      aria-valuemin="0"
      aria-valuemax="100"
      aria-valuenow=${value}
      aria-valuetext=${percent(p)}
    >
      <div class="clef-fill" part="fill" ${cssProps({ width: `${value}%` })}></div>
    </div>
    <span class="clef-pct" aria-hidden="true">${percent(p)}</span>`;
}

function head(id: string, value: TemplateResult | string, note: string): TemplateResult {
  return html`<div class="clef-head">
    <span class="clef-question" part="label">${id}</span>
    <span class="clef-value" part="value">${value}</span>
    <span class="clef-note">${note}</span>
  </div>`;
}

function choiceView(id: string, a: ChoiceAnswer): TemplateResult {
  return html`${head(id, a.choice, `${percent(a.confidence)} confident`)}
    <div class="clef-bars">
      ${Object.entries(a.probabilities).map(([option, p]) => bar(id, option, p, option === a.choice))}
    </div>`;
}

function noulView(id: string, a: NoulAnswer): TemplateResult {
  const yes = a.noul >= 0.5;
  return html`${head(id, yes ? 'yes' : 'no', `P(yes) ${percent(a.noul)}`)}
    <div class="clef-bars">${bar(id, 'yes', a.noul, yes)}</div>`;
}

function scoreView(id: string, a: ScoreAnswer): TemplateResult {
  const levels = Object.keys(a.probabilities);
  const top = levels.length - 1;
  const best = levels.reduce((b, l) => (a.probabilities[l]! > a.probabilities[b]! ? l : b));
  const position = top > 0 ? (a.score / top) * 100 : 0;
  return html`${head(id, a.score.toFixed(2), `expected level, 0 to ${top}`)}
    <div class="clef-bars">
      <span class="clef-option clef-expected" aria-hidden="true">expected</span>
      <div
        class="clef-scale"
        part="scale"
        role="meter"
        aria-label=${`${id}: expected level`}
        aria-valuemin="0"
        aria-valuemax=${top}
        aria-valuenow=${a.score}
        aria-valuetext=${`${a.score.toFixed(2)} of ${top}`}
      >
        <div class="clef-marker" part="marker" ${cssProps({ left: `${position}%` })}></div>
      </div>
      <span class="clef-pct" aria-hidden="true">${a.score.toFixed(2)}</span>
      ${levels.map((level) =>
        bar(id, level, a.probabilities[level]!, level === best, descriptionText(a.legend[level])),
      )}
    </div>`;
}

/** One question's answer, as a `part="answer"` group. */
export function renderAnswer(id: string, answer: Answer): TemplateResult {
  const body =
    answer.type === 'choice'
      ? choiceView(id, answer)
      : answer.type === 'noul'
        ? noulView(id, answer)
        : scoreView(id, answer);
  return html`<div
    class=${`clef-answer clef-${answer.type}`}
    part=${`answer answer-${answer.type}`}
    role="group"
    aria-label=${id}
    data-question=${id}
  >
    ${body}
  </div>`;
}

/** Every answer of a response, in the response's (= the request's) question order. */
export function renderAnswers(
  response: SystemOneResponse,
  wrap: (id: string, view: TemplateResult) => TemplateResult = (_id, view) => view,
): TemplateResult {
  return html`<div class="clef-answers" part="answers">
    ${Object.entries(response.answers).map(([id, a]) => wrap(id, renderAnswer(id, a)))}
  </div>`;
}

/** One sentence per answer, for a live region: "route: billing, 41.6%." */
export function describeDecision(response: SystemOneResponse): string {
  return Object.entries(response.answers)
    .map(([id, a]) => {
      if (a.type === 'choice') return `${id}: ${a.choice}, ${percent(a.confidence)}.`;
      if (a.type === 'noul')
        return `${id}: ${a.noul >= 0.5 ? 'yes' : 'no'}, P(yes) ${percent(a.noul)}.`;
      const top = Object.keys(a.probabilities).length - 1;
      return `${id}: ${a.score.toFixed(2)} of ${top}.`;
    })
    .join(' ');
}
