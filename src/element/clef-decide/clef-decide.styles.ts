/**
 * Styles of `<clef-decide>`. `answerStyles` holds the answer views' rules, class-scoped so the
 * playground can adopt the same sheet in light DOM; `decideStyles` the host and error (the
 * progress bar's are progress-bar.ts').
 * Every colour and size goes through a `--clef-*` custom property with a default for light and
 * dark colour schemes.
 */
import { css } from 'lit';

export const answerStyles = css`
  .clef-answers {
    --_bar: var(--clef-bar-color, #9bb8f0);
    --_chosen: var(--clef-bar-chosen-color, #2458d6);
    --_track: var(--clef-bar-track-color, rgb(120 130 145 / 0.18));
    --_muted: var(--clef-muted-color, #4f5866);
    --_height: var(--clef-bar-height, 0.55rem);
    --_radius: var(--clef-radius, 999px);
    display: grid;
    gap: var(--clef-gap, 1rem);
  }
  @media (prefers-color-scheme: dark) {
    .clef-answers {
      --_bar: var(--clef-bar-color, #3f5e9c);
      --_chosen: var(--clef-bar-chosen-color, #7ea6ff);
      --_track: var(--clef-bar-track-color, rgb(160 170 190 / 0.18));
      --_muted: var(--clef-muted-color, #aeb7c4);
    }
  }
  .clef-answer {
    display: grid;
    gap: 0.4rem;
    min-width: 0;
  }
  .clef-head {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 0.25rem 0.6rem;
  }
  .clef-question {
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .clef-value {
    font-weight: 600;
    color: var(--_chosen);
    overflow-wrap: anywhere;
  }
  .clef-note {
    color: var(--_muted);
    font-size: 0.85em;
  }
  .clef-unsure,
  .clef-sure {
    margin: 0 0 0.35rem;
    font-size: 0.9em;
  }
  .clef-unsure {
    padding: 0.35rem 0.6rem;
    border-left: 3px solid var(--clef-unsure-color, #b7791f);
    background: color-mix(in srgb, var(--clef-unsure-color, #b7791f) 10%, transparent);
  }
  .clef-unsure ul {
    margin: 0.2rem 0 0;
    padding-left: 1.2rem;
  }
  .clef-sure {
    color: var(--_muted);
  }
  .clef-bars {
    display: grid;
    grid-template-columns: minmax(3rem, max-content) minmax(4rem, 1fr) 3.4rem;
    align-items: center;
    gap: 0.3rem 0.6rem;
    font-size: 0.9em;
  }
  .clef-option {
    max-width: 16rem;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
  .clef-option.clef-chosen {
    font-weight: 600;
  }
  .clef-expected {
    color: var(--_muted);
    font-style: italic;
  }
  .clef-detail {
    color: var(--_muted);
  }
  .clef-bar,
  .clef-scale {
    position: relative;
    height: var(--_height);
    border-radius: var(--_radius);
    background: var(--_track);
    overflow: hidden;
  }
  .clef-fill {
    height: 100%;
    border-radius: inherit;
    background: var(--_bar);
    transition: width 180ms ease-out;
  }
  .clef-bar.clef-chosen .clef-fill {
    background: var(--_chosen);
  }
  .clef-pct {
    min-width: 3.4rem;
    font-variant-numeric: tabular-nums;
    text-align: end;
    color: var(--_muted);
  }
  .clef-scale {
    overflow: visible;
    background: linear-gradient(to right, var(--_track), var(--_bar));
  }
  .clef-marker {
    position: absolute;
    top: 50%;
    width: calc(var(--_height) * 1.9);
    aspect-ratio: 1;
    border-radius: 50%;
    background: var(--_chosen);
    border: 2px solid var(--clef-background, Canvas);
    transform: translate(-50%, -50%);
    transition: left 180ms ease-out;
  }
  @media (prefers-reduced-motion: reduce) {
    .clef-fill,
    .clef-marker {
      transition: none;
    }
  }
  /* Last, to win over .clef-bars' own columns. One column grid for every answer's bars, so all bars start and end at the same x. */
  @supports (grid-template-columns: subgrid) {
    .clef-answers {
      grid-template-columns: fit-content(45%) minmax(4rem, 1fr) auto;
      column-gap: 0.6rem;
    }
    .clef-answer,
    .clef-bars {
      grid-column: 1 / -1;
      grid-template-columns: subgrid;
    }
    .clef-head {
      grid-column: 1 / -1;
    }
  }
`;

export const decideStyles = css`
  :host {
    display: block;
    font-family: var(--clef-font, system-ui, sans-serif);
    line-height: 1.4;
    color: var(--clef-text-color, inherit);
    --_error: var(--clef-error-color, #b42318);
    --_muted: var(--clef-muted-color, #4f5866);
    --_accent: var(--clef-accent-color, #2458d6);
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --_error: var(--clef-error-color, #ff9b8f);
      --_muted: var(--clef-muted-color, #aeb7c4);
      --_accent: var(--clef-accent-color, #7ea6ff);
    }
  }
  :host([hidden]) {
    display: none;
  }
  .wrap {
    display: grid;
    gap: var(--clef-gap, 1rem);
  }
  .busy .clef-answers {
    opacity: 0.6;
    transition: opacity 120ms;
  }
  .error {
    display: flex;
    flex-wrap: wrap;
    gap: 0.5rem 1rem;
    align-items: center;
    padding: 0.6rem 0.8rem;
    border: 1px solid var(--_error);
    border-radius: var(--clef-radius-box, 0.5rem);
    color: var(--_error);
  }
  .error code {
    font-size: 0.85em;
  }
  .error button {
    font: inherit;
    padding: 0.25rem 0.8rem;
    border-radius: 0.4rem;
    border: 1px solid currentColor;
    background: transparent;
    color: inherit;
    cursor: pointer;
  }
  .error button:focus-visible {
    outline: 2px solid var(--_accent);
    outline-offset: 2px;
  }
  .empty {
    color: var(--_muted);
    font-size: 0.9em;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
`;
