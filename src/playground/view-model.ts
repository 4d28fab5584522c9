/** The model card: where the package comes from, the device, load progress, what runs. */
import { html, nothing, type TemplateResult } from 'lit';
import type { EngineInfo } from '../wire/telemetry.js';
import { progressBar } from '../element/clef-decide/progress-bar.js';
import type { PlaygroundView, Device, Source } from './view-state.js';
import { DEFAULT_PACKAGE_NOTE, isTinyFixture, NANO_NOTE, TINY_WARNING } from './examples.js';
import { canPickFolders } from './local-package.js';
import { DEVICE_NAMES } from '../core/devices.js';

/** 'auto', then the engine's devices, best first. */
const DEVICE_CHOICES: readonly Device[] = ['auto', ...DEVICE_NAMES];

function deviceWhy(info: EngineInfo, asked: Device): string {
  if (info.fallbackReason) return info.fallbackReason;
  if (asked !== 'auto') return `asked for ${asked}`;
  return info.deviceReason;
}

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`;
}

function facts(app: PlaygroundView, info: EngineInfo): TemplateResult {
  return html`<dl class="facts">
    <dt>Model</dt>
    <dd>
      <strong>${info.model}</strong> · ${info.dtype}
      ${info.aliases.length ? html`<span class="muted">(also ${info.aliases.join(', ')})</span>` : nothing}
    </dd>
    <dt>Device</dt>
    <dd data-testid="device">
      <strong>${info.device}</strong>${info.adapter ? ` · ${info.adapter}` : ''}
      <span class="muted">— ${deviceWhy(info, app.device)}</span>
    </dd>
    <dt>Threads</dt>
    <dd>
      ${info.threads}${crossOriginIsolated ? '' : html` <span class="muted">(page not cross-origin isolated)</span>`}
    </dd>
    <dt>Context</dt>
    <dd>${info.contextTokens.toLocaleString('en')} tokens</dd>
    <dt>Package</dt>
    <dd><code title=${info.manifestSha256}>${info.manifestSha256.slice(0, 16)}…</code></dd>
    <dt>Load</dt>
    <dd>
      ${ms(info.loadMs.total)}
      <span class="muted">
        (fetch ${ms(info.loadMs.download)}, verify ${ms(info.loadMs.verify)}, compile
        ${ms(info.loadMs.compile)})</span
      >
    </dd>
    ${
      info.cacheProblem
        ? html`<dt>Cache</dt>
            <dd class="muted">${info.cacheProblem}</dd>`
        : nothing
    }
  </dl>`;
}

function sourceRadio(app: PlaygroundView, value: Source, label: TemplateResult | string) {
  return html`<label class="radio">
    <input
      type="radio"
      name="source"
      .value=${value}
      .checked=${app.source === value}
      @change=${() => (app.source = value)}
    />
    <span>${label}</span>
  </label>`;
}

export function renderModel(app: PlaygroundView): TemplateResult {
  const info = app.info;
  return html`<section class="card" aria-labelledby="model-h">
    <h2 id="model-h">Model</h2>
    <fieldset class="sources">
      <legend class="sr-only">Model package</legend>
      ${sourceRadio(
        app,
        'default',
        html`Bundled model <small class="muted">${DEFAULT_PACKAGE_NOTE}</small>`,
      )}
      ${sourceRadio(app, 'url', 'A package URL')}
      ${sourceRadio(app, 'folder', 'A folder on this computer')}
    </fieldset>
    ${
      app.source === 'url'
        ? html`<label class="field"
            >Package URL
            <input
              type="url"
              placeholder="https://example.com/clef-flash-q4/"
              .value=${app.url}
              @input=${(e: Event) => (app.url = (e.target as HTMLInputElement).value)}
          /></label>`
        : nothing
    }
    ${
      app.source === 'folder'
        ? html`<p class="folder">
            ${
              canPickFolders()
                ? html`<button type="button" @click=${() => app.pickFolder()}>
                    Choose folder…
                  </button>`
                : html`<span class="muted">This browser cannot open folders.</span>`
            }
            <span class="muted"
              >${app.folder ? app.folder.name : 'A converted package folder'}</span
            >
          </p>`
        : nothing
    }
    <div class="row">
      <label class="field inline"
        >Device
        <select
          .value=${app.device}
          @change=${(e: Event) => (app.device = (e.target as HTMLSelectElement).value as Device)}
        >
          ${DEVICE_CHOICES.map(
            (d) => html`<option value=${d} ?selected=${app.device === d}>${d}</option>`,
          )}
        </select></label
      >
      <button
        type="button"
        class="secondary"
        ?disabled=${app.loading || app.source === 'folder'}
        @click=${() => app.loadModel()}
      >
        ${info ? 'Reload' : 'Load'}
      </button>
    </div>
    ${app.loading ? progressBar(app.progress) : nothing}
    ${
      app.loadError
        ? html`<p class="error" role="alert">
            <code>${app.loadError.code}</code> ${app.loadError.message}
          </p>`
        : nothing
    }
    ${
      info && isTinyFixture(info.packageUrl, info.model)
        ? html`<p class="warning" data-testid="tiny-warning">⚠ ${TINY_WARNING}.</p>`
        : info?.model === 'clef-nano'
          ? html`<p class="note" data-testid="nano-note">${NANO_NOTE}.</p>`
          : nothing
    }
    ${info ? facts(app, info) : nothing}
  </section>`;
}
