/** The decision log card: every decision kept in IndexedDB, newest first. */
import { html, nothing, type TemplateResult } from 'lit';
import { percent } from '../element/clef-decide/answer-view.js';
import type { SystemOneResponse } from '../protocol/types.js';
import type { PlaygroundView } from './view-state.js';
import type { LogEntry } from './log-format.js';

const SHOWN = 50;

function summary(responseJson: string): string {
  try {
    const response = JSON.parse(responseJson) as SystemOneResponse;
    return Object.entries(response.answers)
      .map(([id, a]) =>
        a.type === 'choice'
          ? `${id}: ${a.choice}`
          : a.type === 'noul'
            ? `${id}: ${percent(a.noul)} yes`
            : `${id}: ${a.score.toFixed(2)}`,
      )
      .join(' · ');
  } catch {
    return '';
  }
}

function row(app: PlaygroundView, entry: LogEntry): TemplateResult {
  const time = new Date(entry.time);
  return html`<tr>
    <td><time datetime=${entry.time}>${time.toLocaleString()}</time></td>
    <td>${entry.model}</td>
    <td>${entry.device}</td>
    <td><code title=${entry.packageSha256}>${entry.packageSha256.slice(0, 8)}</code></td>
    <td class="summary">${summary(entry.response)}</td>
    <td>
      <button type="button" class="link" @click=${() => app.restore(entry)}>
        Edit again<span class="sr-only"> (request of ${time.toLocaleString()})</span>
      </button>
    </td>
  </tr>`;
}

export function renderLog(app: PlaygroundView): TemplateResult {
  const entries = [...app.log].reverse();
  return html`<section class="card log" aria-labelledby="log-h">
    <div class="card-head">
      <h2 id="log-h">
        Decision log <span class="count" data-testid="log-count">${app.log.length}</span>
      </h2>
      <div class="buttons">
        <button
          type="button"
          class="secondary"
          ?disabled=${app.log.length === 0}
          @click=${() => app.exportLog()}
        >
          Export JSONL
        </button>
        <button
          type="button"
          class="secondary danger"
          ?disabled=${app.log.length === 0}
          @click=${() => {
            if (confirm(`Delete all ${app.log.length} logged decisions?`)) void app.clearLog();
          }}
        >
          Clear
        </button>
      </div>
    </div>
    <p class="muted small">
      Kept in this browser (IndexedDB) with the request, the response, the model, the package hash
      and the device.
    </p>
    ${
      entries.length === 0
        ? html`<p class="muted">No decisions yet.</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Logged decisions">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Model</th>
                  <th scope="col">Device</th>
                  <th scope="col">Package</th>
                  <th scope="col">Answers</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${entries.slice(0, SHOWN).map((e) => row(app, e))}
              </tbody>
            </table>
            ${
              entries.length > SHOWN
                ? html`<p class="muted small">
                    ${entries.length - SHOWN} older decisions are in the export.
                  </p>`
                : nothing
            }
          </div>`
    }
  </section>`;
}
