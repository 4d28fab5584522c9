/**
 * The model-loading progress bar of `<clef-decide>` and the playground: one markup and one sheet.
 * The element adopts `progressBarStyles` in its shadow root, the playground in its light DOM
 * (main.ts). The sheet's defaults are the element's look; a host restyles it through the
 * `--_progress-*` properties on `.progress` (the playground does, in playground.css).
 */
import { css, html, type TemplateResult } from 'lit';
import { ifDefined } from 'lit/directives/if-defined.js';
import type { LoadProgress } from '../../wire/wire.js';
import { cssProps } from './css-props.js';
import { progressPercent, progressText } from './progress-text.js';

/** The words, then a track filled to the percentage (sliding while there is none to show). */
export function progressBar(p: LoadProgress | null): TemplateResult {
  const pct = progressPercent(p);
  const text = progressText(p);
  return html`<div class="progress" part="progress">
    <span aria-hidden="true">${text}</span>
    <div
      class=${pct === undefined ? 'progress-track indeterminate' : 'progress-track'}
      role="progressbar"
      aria-label="Loading the model"
      aria-valuemin="0"
      aria-valuemax="100"
      aria-valuenow=${ifDefined(pct)}
      aria-valuetext=${text}
    >
      <div class="progress-fill" ${cssProps({ width: `${pct ?? 0}%` })}></div>
    </div>
  </div>`;
}

export const progressBarStyles = css`
  .progress {
    display: grid;
    gap: var(--_progress-gap, 0.35rem);
    font-size: var(--_progress-font-size, 0.9em);
    color: var(--_progress-text, var(--_muted));
  }
  .progress-track {
    height: 0.35rem;
    border-radius: 999px;
    background: var(--_progress-track, rgb(120 130 145 / 0.2));
    overflow: hidden;
  }
  .progress-fill {
    height: 100%;
    background: var(--_progress-fill, var(--_accent));
    transition: var(--_progress-motion, width 120ms linear);
  }
  .progress-track.indeterminate .progress-fill {
    width: 35% !important;
    animation: clef-progress-slide 1.1s ease-in-out infinite alternate;
  }
  @keyframes clef-progress-slide {
    from {
      transform: translateX(-10%);
    }
    to {
      transform: translateX(200%);
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .progress-track.indeterminate .progress-fill {
      animation: none;
    }
  }
`;
