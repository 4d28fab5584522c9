/** The result cards: answers (the element's own views), latency, prompt tokens, JSON. */
import { html, nothing, type TemplateResult } from 'lit';
import { cssProps } from '../element/clef-decide/css-props.js';
import { renderAnswers } from '../element/clef-decide/answer-view.js';
import { untrainedNote } from '../element/clef-decide/untrained-view.js';
import type { PlaygroundView } from './view-state.js';
import { isTinyFixture, TINY_WARNING } from './examples.js';
import { prettyJson } from './log-format.js';
import { renderPrompt } from './token-view.js';

function errorBox(app: PlaygroundView): TemplateResult | typeof nothing {
  const e = app.decideError;
  if (!e) return nothing;
  return html`<div class="error" role="alert">
    <p>
      <code>${e.code}</code>${e.status ? html` <code>HTTP ${e.status}</code>` : nothing}
      ${e.message}
    </p>
    ${e.body ? html`<pre class="code">${JSON.stringify(e.body, null, 2)}</pre>` : nothing}
  </div>`;
}

export function renderAnswersCard(app: PlaygroundView): TemplateResult {
  const result = app.result;
  const info = app.info;
  return html`<section
    class="card answers-card"
    aria-labelledby="answers-h"
    aria-busy=${app.deciding ? 'true' : 'false'}
  >
    <div class="card-head">
      <h2 id="answers-h">Answers</h2>
      ${result ? html`<span class="muted">${result.response.usage.input_tokens} input tokens</span>` : nothing}
    </div>
    ${errorBox(app)}
    ${
      result
        ? html`${
            info && isTinyFixture(info.packageUrl, info.model)
              ? html`<p class="warning small">${TINY_WARNING}</p>`
              : nothing
          }
          ${untrainedNote(result.untrained)} ${renderAnswers(result.response)}`
        : html`<p class="muted placeholder">Press <strong>Decide</strong> to see the answers.</p>`
    }
    <div class="sr-only" role="status" aria-live="polite">
      ${result ? `Decided: ${Object.keys(result.response.answers).length} answers.` : ''}
    </div>
  </section>`;
}

export function renderLatency(app: PlaygroundView): TemplateResult | typeof nothing {
  const t = app.result?.timings;
  if (!t) return nothing;
  const parts = [
    ['encode', t.encodeMs],
    ['backbone', t.backboneMs],
    ['head', t.headMs],
  ] as const;
  const sum = parts.reduce((n, [, v]) => n + v, 0) || 1;
  const other = Math.max(0, t.totalMs - sum);
  return html`<section class="card" aria-labelledby="latency-h">
    <div class="card-head">
      <h2 id="latency-h">Latency</h2>
      <span class="muted"><strong>${t.totalMs.toFixed(1)} ms</strong> in all</span>
    </div>
    <div class="stack" aria-hidden="true">
      ${parts.map(
        ([name, v]) =>
          html`<div class=${`seg ${name}`} ${cssProps({ 'flex-grow': String(v / sum) })}></div>`,
      )}
    </div>
    <dl class="latency">
      ${parts.map(
        ([name, v]) =>
          html`<div>
            <dt><span class=${`dot ${name}`}></span>${name}</dt>
            <dd>${v.toFixed(1)} ms</dd>
          </div>`,
      )}
      <div>
        <dt>queue and transfer</dt>
        <dd>${other.toFixed(1)} ms</dd>
      </div>
    </dl>
    <p class="muted small">
      ${t.backboneTokens} tokens through the backbone ·
      ${t.prefixHit ? 'state prefix reused from the cache' : 'no cached prefix'}
    </p>
  </section>`;
}

export function renderPromptCard(app: PlaygroundView): TemplateResult {
  const view = app.prompt;
  return html`<section class="card" aria-labelledby="prompt-h">
    <div class="card-head">
      <h2 id="prompt-h">Prompt tokens</h2>
      ${view ? html`<span class="muted">${view.encoded.inputIds.length} tokens</span>` : nothing}
    </div>
    ${
      view
        ? html`<p class="legend small">
              <span class="tok state">state</span>
              ${view.questionIds.map(
                (id, i) =>
                  html`<span class="tok instruction" ${cssProps({ '--q': String(i % 6) })}
                      >${id}</span
                    ><span class="tok option" ${cssProps({ '--q': String(i % 6) })}
                      >${id} options</span
                    >`,
              )}
              <span class="tok template">template</span>
            </p>
            ${renderPrompt(view)}`
        : html`<p class="muted">
            ${app.promptError ?? 'The prompt appears once a model is loaded.'}
          </p>`
    }
  </section>`;
}

function jsonPanel(tab: string, text: string): TemplateResult {
  // prettier-ignore
  return html`<pre id="json-panel" class="code json" role="tabpanel" tabindex="0" aria-labelledby=${`json-tab-${tab}`}>${text}</pre>`;
}

export function renderJson(app: PlaygroundView): TemplateResult | typeof nothing {
  const result = app.result;
  if (!result) return nothing;
  const tab = app.jsonTab;
  const tabButton = (name: 'request' | 'response', label: string) =>
    html`<button
      type="button"
      role="tab"
      id=${`json-tab-${name}`}
      aria-controls="json-panel"
      aria-selected=${tab === name ? 'true' : 'false'}
      @click=${() => (app.jsonTab = name)}
    >
      ${label}
    </button>`;
  const text = tab === 'request' ? result.requestText : prettyJson(result.json);
  return html`<section class="card" aria-labelledby="json-h">
    <div class="card-head">
      <h2 id="json-h">JSON</h2>
      <div class="segmented" role="tablist" aria-label="Which JSON">
        ${tabButton('request', 'Request')} ${tabButton('response', 'Response')}
      </div>
    </div>
    ${jsonPanel(tab, text)}
    ${
      tab === 'response'
        ? html`<p class="muted small">
            Indented for reading; otherwise exactly the engine's JSON text, keys in request order.
          </p>`
        : nothing
    }
  </section>`;
}
