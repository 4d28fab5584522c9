/** The playground's layout: header, the two columns, the log. */
import { html, nothing, type TemplateResult } from 'lit';
import type { PlaygroundView } from './view-state.js';
import type { ClefTrainedDetail } from './train-panel.js';
import { renderLog } from './view-log.js';
import './calibrate-panel.js';
import './train-panel.js';
import { renderModel } from './view-model.js';
import { renderRequest } from './view-request.js';
import { renderAnswersCard, renderJson, renderLatency, renderPromptCard } from './view-results.js';

function offlineBadge(app: PlaygroundView): TemplateResult {
  const o = app.offline;
  const [cls, text, title] =
    o.state === 'ready'
      ? ['ok', 'Works offline', `${o.cachedFiles} files cached for offline use`]
      : o.state === 'caching'
        ? ['busy', 'Caching for offline…', 'Storing the app, the runtime and the model']
        : o.state === 'installing'
          ? ['busy', 'Starting…', 'Installing the service worker']
          : ['warn', 'Online only', o.reason];
  return html`<span class=${`badge ${cls}`} title=${title} data-offline=${o.state}>${text}</span>`;
}

export function renderPage(app: PlaygroundView): TemplateResult {
  const info = app.info;
  return html`
    <header class="top">
      <div class="brand">
        <h1>clef-web <span>playground</span></h1>
        <p>Decisions by a model running in this tab. Nothing you type leaves the page.</p>
      </div>
      <div class="badges" aria-label="Status">
        ${
          info
            ? html`<span class="badge device" title=${info.adapter ?? ''}>${info.device}</span>`
            : nothing
        }
        ${offlineBadge(app)}
      </div>
    </header>
    <main class="layout">
      <div class="column">${renderModel(app)} ${renderRequest(app)}</div>
      <div class="column">
        ${renderAnswersCard(app)} ${renderLatency(app)} ${renderPromptCard(app)} ${renderJson(app)}
        <clef-calibrate-panel .clef=${app.clef} .info=${app.info}></clef-calibrate-panel>
        <clef-train-panel
          @clef-trained=${(e: CustomEvent<ClefTrainedDetail>) => void app.useTrainedModel(e.detail.dir)}
        ></clef-train-panel>
      </div>
      ${renderLog(app)}
    </main>
  `;
}
