/**
 * `<clef-train-panel>`: trains a decision model in this page. Load a labelled JSONL (the format
 * `clef-web train` and `calibrate` read), see the label counts, train: the pipeline `clef-web
 * train` runs, in a worker (workers/train.worker.ts), phase by phase with progress; the package
 * is verified and calibrated through this page's engine. Then try it here (`clef-trained`) or
 * download it as a .zip (the package and the Clef release). Nothing is fetched and nothing
 * leaves the browser, the examples included. Light DOM, styled by playground.css.
 *
 * @event clef-trained - A model was trained and saved. `detail`: `{ name, dir }` (its OPFS folder).
 */
import { html, LitElement, nothing, type TemplateResult } from 'lit';
import * as Comlink from 'comlink';
import { createClef, type Clef } from '../client/clef.js';
import type {
  PageTrainFailure,
  PageVerifyHost,
  TrainProgress,
  TrainResult,
  TrainWorkerApi,
} from '../train-web/train-wire.js';
import { loadLocalPackage } from './local-package.js';
import { folderName, removeTrainedPackage, saveTrainedPackage } from './trained-store.js';
import { zipStored } from './zip.js';

export interface ClefTrainedDetail {
  name: string;
  dir: FileSystemDirectoryHandle;
}

/** Examples per question and option, read from the file before training (bad lines skipped). */
export function labelCounts(text: string): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let labels: unknown;
    try {
      labels = (JSON.parse(line) as { labels?: unknown }).labels;
    } catch {
      continue; // the check phase reports every bad line with its number
    }
    if (labels === null || typeof labels !== 'object') continue;
    for (const [question, answer] of Object.entries(labels as Record<string, unknown>)) {
      const perQuestion = counts.get(question) ?? new Map<string, number>();
      counts.set(question, perQuestion);
      const option = String(answer);
      perQuestion.set(option, (perQuestion.get(option) ?? 0) + 1);
    }
  }
  return counts;
}

/** The OPFS folder the verify phase loads the package from (removed after the run). */
const VERIFYING = '.verifying';

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function secondsLeft(p: TrainProgress): string {
  return p.etaMs === undefined ? '' : `, about ${Math.ceil(p.etaMs / 1000)} s left`;
}

export class ClefTrainPanel extends LitElement {
  static override properties = {
    _text: { state: true },
    _fileName: { state: true },
    _busy: { state: true },
    _progress: { state: true },
    _result: { state: true },
    _failure: { state: true },
  };

  declare private _text: string | null;
  declare private _fileName: string;
  declare private _busy: boolean;
  declare private _progress: TrainProgress | null;
  declare private _result: TrainResult | null;
  declare private _failure: PageTrainFailure | null;
  private files: Record<string, Uint8Array> = {};
  private release: Record<string, Uint8Array> = {};
  private saved: FileSystemDirectoryHandle | null = null;

  constructor() {
    super();
    this._text = null;
    this._fileName = '';
    this._busy = false;
    this._progress = null;
    this._result = null;
    this._failure = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  private async load(file: File): Promise<void> {
    this._text = await file.text();
    this._fileName = file.name;
    this._result = null;
    this._failure = null;
  }

  private async train(): Promise<void> {
    if (this._text === null || this._busy) return;
    this._busy = true;
    this._result = null;
    this._failure = null;
    this._progress = null;
    this.saved = null;
    const worker = new Worker(new URL('../../workers/train.worker.ts', import.meta.url), {
      type: 'module',
      name: 'clef-train',
    });
    let verifying: Clef | null = null;
    const host: PageVerifyHost = {
      open: async (files) => {
        const dir = await saveTrainedPackage(VERIFYING, files);
        verifying = await createClef({ model: await loadLocalPackage(dir), cache: false });
      },
      decide: async (request) => (await (verifying as Clef | null)!.decide(request)).logits ?? [],
      close: async () => {
        await (verifying as Clef | null)?.dispose();
        verifying = null;
      },
    };
    try {
      const api = Comlink.wrap<TrainWorkerApi>(worker);
      const outcome = await api.train(
        { examples: this._text },
        Comlink.proxy((p: TrainProgress) => (this._progress = p)),
        Comlink.proxy(host),
      );
      if (!outcome.ok) {
        this._failure = outcome.failure;
        return;
      }
      this.files = outcome.files;
      this.release = outcome.release;
      this.saved = await saveTrainedPackage(folderName(outcome.result.name), outcome.files);
      this._result = outcome.result;
    } catch (e) {
      this._failure = { code: 'train_failed', message: (e as Error).message };
    } finally {
      await host.close().catch(() => undefined);
      await removeTrainedPackage(VERIFYING).catch(() => undefined);
      worker.terminate();
      this._busy = false;
    }
  }

  private useModel(): void {
    const result = this._result;
    if (!result || !this.saved) return;
    const detail: ClefTrainedDetail = { name: result.name, dir: this.saved };
    this.dispatchEvent(new CustomEvent('clef-trained', { detail, bubbles: true }));
  }

  private download(): void {
    const result = this._result;
    if (!result) return;
    const entries: Array<[string, Uint8Array]> = [
      ...Object.entries(this.files).map(([p, b]): [string, Uint8Array] => [
        `${result.name}/${p}`,
        b,
      ]),
      ...Object.entries(this.release).map(([p, b]): [string, Uint8Array] => [
        `${result.name}-release/${p}`,
        b,
      ]),
    ];
    const a = document.createElement('a');
    a.href = URL.createObjectURL(
      new Blob([zipStored(entries) as Uint8Array<ArrayBuffer>], { type: 'application/zip' }),
    );
    a.download = `${name}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  private renderCounts(text: string): TemplateResult {
    const counts = labelCounts(text);
    return html`<table class="label-counts" aria-label="Label counts">
      <caption>
        ${this._fileName}
      </caption>
      <tr>
        <th>question</th>
        <th>option</th>
        <th>examples</th>
      </tr>
      ${[...counts].flatMap(([question, options]) =>
        [...options].map(
          ([option, n]) =>
            html`<tr>
              <td>${question}</td>
              <td>${option}</td>
              <td>${n}</td>
            </tr>`,
        ),
      )}
    </table>`;
  }

  private renderResult(r: TrainResult): TemplateResult {
    return html`<div class="train-result" data-model=${r.name}>
      <p>
        <strong>${r.name}</strong>: ${r.examples.train} examples trained, ${r.examples.heldOut} held
        out. The package gives the fitted model's probabilities to within
        <span data-delta>${r.maxPackageDeltaP.toExponential(2)}</span> on ${r.verified} held-out
        examples run through this page's engine;
        ${r.calibrated ? 'calibrated on the held-out part' : 'too few held-out examples to calibrate'}.
      </p>
      ${r.heldOut.questions.map(
        (q) =>
          html`<table class="recall" data-question=${q.id}>
            <caption>
              ${q.id}: held-out accuracy
              <span data-accuracy>${pct(q.accuracy)}</span>
              (${q.answered})
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
      <p class="muted" data-timings>
        ${Object.entries(r.timingsMs)
          .map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)} s`)
          .join(' · ')}
      </p>
      <button type="button" @click=${() => this.useModel()}>Use this model here</button>
      <button type="button" @click=${() => this.download()}>Download .zip</button>
    </div>`;
  }

  protected override render(): TemplateResult {
    const p = this._progress;
    return html`<section class="card train" aria-label="Train">
      <h2>Train a model on your labelled examples</h2>
      <p class="hint">
        A JSONL file, one <code>{"request": ..., "labels": {"id": "option"}}</code> a line (choice
        questions; at least 5 examples an option). It trains in this page, with the code
        <code>clef-web train</code> runs; the examples never leave it.
      </p>
      <input
        type="file"
        accept=".jsonl,.json,.txt"
        aria-label="Training data (labelled JSONL)"
        ?disabled=${this._busy}
        @change=${(e: Event) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (file) void this.load(file);
        }}
      />
      ${this._text === null ? nothing : this.renderCounts(this._text)}
      <button
        type="button"
        class="primary"
        ?disabled=${this._text === null || this._busy}
        @click=${() => void this.train()}
      >
        Train
      </button>
      ${
        this._busy && p
          ? html`<p class="progress-note" data-phase=${p.phase}>
              ${p.phase}: ${p.done}/${p.total}${secondsLeft(p)}${p.message ? ` — ${p.message}` : ''}
            </p>`
          : nothing
      }
      ${
        this._failure
          ? html`<pre class="error" role="alert" data-code=${this._failure.code}>
${this._failure.message}</pre>`
          : nothing
      }
      ${this._result ? this.renderResult(this._result) : nothing}
    </section>`;
  }
}

if (!customElements.get('clef-train-panel')) {
  customElements.define('clef-train-panel', ClefTrainPanel);
}

declare global {
  interface HTMLElementTagNameMap {
    'clef-train-panel': ClefTrainPanel;
  }
  interface HTMLElementEventMap {
    'clef-trained': CustomEvent<ClefTrainedDetail>;
  }
}
