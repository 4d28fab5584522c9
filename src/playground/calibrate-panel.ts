/**
 * `<clef-calibrate-panel>`: the playground's in-page calibration. Loads a JSONL of labelled
 * examples, runs them through the page's engine and fits with `calibrateFromExamples` (the code
 * `clef-web calibrate` runs), shows the figures and a reliability diagram before and after per
 * calibrated group, and exports the calibrated package's two changed files (calibration.json
 * and manifest.json with its entry and SHA-256). Light DOM, styled by playground.css.
 *
 * @event clef-calibrated - A fit succeeded. `detail`: `{ calibration, text }` (the file's text).
 */
import { html, LitElement, nothing, type TemplateResult } from 'lit';
import { unsafeSVG } from 'lit/directives/unsafe-svg.js';
import {
  calibrateFromExamples,
  formatFitReport,
  reliabilitySvg,
  serializeCalibration,
  type CalibrateRunResult,
  type CalibrationFile,
} from '../calibrate/index.js';
import type { Clef } from '../client/clef.js';
import { validateRequest } from '../protocol/validate.js';
import type { EngineInfo } from '../wire/telemetry.js';

export interface ClefCalibratedDetail {
  calibration: CalibrationFile;
  text: string;
}

async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function download(name: string, text: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

export class ClefCalibratePanel extends LitElement {
  static override properties = {
    clef: { attribute: false },
    info: { attribute: false },
    _busy: { state: true },
    _progress: { state: true },
    _result: { state: true },
    _error: { state: true },
  };

  declare clef: Clef | null;
  declare info: EngineInfo | null;
  declare private _busy: boolean;
  declare private _progress: string;
  declare private _result: CalibrateRunResult | null;
  declare private _error: string | null;
  private coverage = 0.9;

  constructor() {
    super();
    this.clef = null;
    this.info = null;
    this._busy = false;
    this._progress = '';
    this._result = null;
    this._error = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  private async run(file: File): Promise<void> {
    const clef = this.clef;
    const info = this.info;
    if (!clef || !info) return;
    this._busy = true;
    this._error = null;
    this._result = null;
    try {
      const models = [info.model, ...info.aliases];
      const limits = { contextTokens: info.contextTokens };
      const result = await calibrateFromExamples(await file.text(), {
        coverage: this.coverage,
        validateRequest: (body) => validateRequest(body, { models, limits }),
        logits: async (request) => (await clef.decide(request)).logits ?? [],
        onProgress: (done, total) => (this._progress = `${done}/${total} examples`),
      });
      this._result = result;
      const text = serializeCalibration(result.calibration);
      const detail: ClefCalibratedDetail = { calibration: result.calibration, text };
      this.dispatchEvent(new CustomEvent('clef-calibrated', { detail, bubbles: true }));
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
    } finally {
      this._busy = false;
    }
  }

  private async exportFiles(): Promise<void> {
    const result = this._result;
    const info = this.info;
    if (!result || !info) return;
    const text = serializeCalibration(result.calibration);
    const bytes = new TextEncoder().encode(text);
    const base = info.packageUrl.endsWith('/') ? info.packageUrl : `${info.packageUrl}/`;
    const manifest = (await (await fetch(new URL('manifest.json', base))).json()) as {
      files: Array<{ path: string; role: string }>;
    };
    const entry = {
      path: 'calibration.json',
      role: 'calibration',
      bytes: bytes.byteLength,
      sha256: await sha256Hex(bytes),
    };
    const files = manifest.files.filter((f) => f.role !== 'calibration' && f.path !== entry.path);
    download('calibration.json', text);
    download(
      'manifest.json',
      `${JSON.stringify({ ...manifest, files: [...files, entry] }, null, 2)}\n`,
    );
  }

  private charts(result: CalibrateRunResult): TemplateResult[] {
    const groups = result.reports.flatMap((r) => [
      { title: r.type, g: r },
      ...r.bands.map((b) => ({ title: `${r.type} ${b.minOptions}-${b.maxOptions}`, g: b })),
    ]);
    return groups.map(({ title, g }) => {
      const svg = reliabilitySvg([
        { title: `${title}, raw`, bins: g.before.reliability, ece: g.before.ece },
        { title: `${title}, calibrated`, bins: g.after.reliability, ece: g.after.ece },
      ]);
      return html`<figure class="reliability" data-group=${title}>${unsafeSVG(svg)}</figure>`;
    });
  }

  protected override render(): TemplateResult {
    const ready = this.clef !== null && this.info !== null && !this._busy;
    const r = this._result;
    return html`<section class="card calibrate" aria-label="Calibrate">
      <h2>Calibrate on your labelled examples</h2>
      <p class="hint">
        A JSONL file, one <code>{"request": ..., "labels": {"id": answer}}</code> a line. It runs in
        this page, with the code <code>clef-web calibrate</code> runs.
      </p>
      <label
        >Coverage
        <select
          @change=${(e: Event) => (this.coverage = Number((e.target as HTMLSelectElement).value))}
        >
          ${[0.8, 0.9, 0.95].map(
            (c) => html`<option value=${c} ?selected=${c === this.coverage}>${c * 100}%</option>`,
          )}
        </select></label
      >
      <input
        type="file"
        accept=".jsonl,.json,.txt"
        aria-label="Calibration data (labelled JSONL)"
        ?disabled=${!ready}
        @change=${(e: Event) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (file) void this.run(file);
        }}
      />
      ${this._busy ? html`<p class="progress-note">Calibrating… ${this._progress}</p>` : nothing}
      ${this._error ? html`<pre class="error" role="alert">${this._error}</pre>` : nothing}
      ${
        r
          ? html`<pre class="fit-report">${formatFitReport(r)}</pre>
              ${this.charts(r)}
              <button type="button" @click=${() => void this.exportFiles()}>
                Export calibration.json + manifest.json
              </button>`
          : nothing
      }
    </section>`;
  }
}

if (!customElements.get('clef-calibrate-panel')) {
  customElements.define('clef-calibrate-panel', ClefCalibratePanel);
}

declare global {
  interface HTMLElementTagNameMap {
    'clef-calibrate-panel': ClefCalibratePanel;
  }
  interface HTMLElementEventMap {
    'clef-calibrated': CustomEvent<ClefCalibratedDetail>;
  }
}
