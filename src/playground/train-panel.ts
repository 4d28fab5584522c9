/**
 * `<clef-train-panel>`: trains a decision model in this page. Pick a file: a plain one (CSV with
 * a header, or JSONL of `{"text", "label"}`: choose its columns, edit the question) or labelled
 * System One requests (`clef-web train --examples`). The train worker reads it as `clef-web train`
 * does, with the same checks and the same messages, and the panel shows the label counts; then
 * train: the pipeline `clef-web train` runs, in the worker (workers/train.worker.ts), its fits on
 * as many thread workers as the Threads field says (./train-threads.ts), phase by phase; the
 * package is verified and calibrated through this page's engine. Then try it here
 * (`clef-trained`) or download it as a .zip named after the model (the package and the Clef
 * release). Nothing is fetched and nothing leaves the browser. Light DOM, styled by playground.css.
 *
 * @event clef-trained - A model was trained and saved. `detail`: `{ name, dir }` (its OPFS folder).
 */
import { html, LitElement, nothing, type TemplateResult } from 'lit';
import * as Comlink from 'comlink';
import { createClef, type Clef } from '../client/clef.js';
import type {
  InputSummary,
  PageTrainFailure,
  PageVerifyHost,
  PickedFile,
  TrainProgress,
  TrainResult,
  TrainWorkerApi,
} from '../train-web/train-wire.js';
import { loadLocalPackage } from './local-package.js';
import { folderName, removeTrainedPackage, saveTrainedPackage } from './trained-store.js';
import { zipStored } from './zip.js';
import {
  defaultThreads,
  MAX_THREADS,
  startThreadWorkers,
  type ThreadWorkers,
} from './train-threads.js';
import { nameFromFile, renderCounts, renderResult } from './train-view.js';

export interface ClefTrainedDetail {
  name: string;
  dir: FileSystemDirectoryHandle;
}

/** The OPFS folder the verify phase loads the package from (removed after the run). */
const VERIFYING = '.verifying';

function secondsLeft(p: TrainProgress): string {
  return p.etaMs === undefined ? '' : `, about ${Math.ceil(p.etaMs / 1000)} s left`;
}

export class ClefTrainPanel extends LitElement {
  static override properties = {
    _file: { state: true },
    _summary: { state: true },
    _columns: { state: true },
    _textColumn: { state: true },
    _labelColumn: { state: true },
    _question: { state: true },
    _name: { state: true },
    _threads: { state: true },
    _busy: { state: true },
    _progress: { state: true },
    _result: { state: true },
    _failure: { state: true },
  };

  declare private _file: { bytes: Uint8Array; name: string } | null;
  declare private _summary: InputSummary | null;
  /** The columns the file offers (from its summary, or from a refusal that names them). */
  declare private _columns: string[];
  declare private _textColumn: string | undefined;
  declare private _labelColumn: string | undefined;
  /** The question's JSON as edited; null: the one the file's labels make. */
  declare private _question: string | null;
  declare private _name: string;
  declare private _threads: number;
  declare private _busy: boolean;
  declare private _progress: TrainProgress | null;
  declare private _result: TrainResult | null;
  declare private _failure: PageTrainFailure | null;
  private worker: Worker | null = null;
  /** The thread workers of the run under way. */
  private threads: ThreadWorkers | null = null;
  private remote: Comlink.Remote<TrainWorkerApi> | null = null;
  private files: Record<string, Uint8Array> = {};
  private release: Record<string, Uint8Array> = {};
  private saved: FileSystemDirectoryHandle | null = null;
  /** The threads the last run's fits ran on. */
  private ranOn = 1;
  /** Only the latest inspection's answer counts (a user may change columns quickly). */
  private inspection = 0;

  constructor() {
    super();
    this._file = null;
    this._summary = null;
    this._columns = [];
    this._textColumn = undefined;
    this._labelColumn = undefined;
    this._question = null;
    this._name = '';
    this._threads = defaultThreads();
    this._busy = false;
    this._progress = null;
    this._result = null;
    this._failure = null;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.threads?.end();
    this.worker?.terminate();
    this.worker = null;
    this.remote = null;
  }

  /**
   * The worker's API: one Comlink proxy per worker, kept as long as the worker (a dropped proxy,
   * once collected, tells the worker to stop listening).
   */
  private api(): Comlink.Remote<TrainWorkerApi> {
    if (this.worker === null) {
      this.worker = new Worker(new URL('../../workers/train.worker.ts', import.meta.url), {
        type: 'module',
        name: 'clef-train',
      });
      this.remote = Comlink.wrap<TrainWorkerApi>(this.worker);
    }
    return this.remote as Comlink.Remote<TrainWorkerApi>;
  }

  /** The file as the worker reads it: bytes, name, the question and columns chosen. */
  private picked(): PickedFile {
    const file = this._file as { bytes: Uint8Array; name: string };
    const plain =
      this._textColumn === undefined && this._labelColumn === undefined
        ? undefined
        : { textColumn: this._textColumn, labelColumn: this._labelColumn };
    return {
      bytes: file.bytes,
      name: file.name,
      ...(this._question === null ? {} : { question: this._question }),
      ...(plain ? { plain } : {}),
    };
  }

  private async load(file: File): Promise<void> {
    this._file = { bytes: new Uint8Array(await file.arrayBuffer()), name: file.name };
    this._name = nameFromFile(file.name);
    this._textColumn = undefined;
    this._labelColumn = undefined;
    this._question = null;
    this._columns = [];
    this._result = null;
    await this.inspect();
  }

  /** Reads the file in the worker: the summary, or the refusal `clef-web train` would print. */
  private async inspect(): Promise<void> {
    if (this._file === null) return;
    const n = ++this.inspection;
    this._summary = null;
    this._failure = null;
    let outcome: Awaited<ReturnType<TrainWorkerApi['inspect']>>;
    try {
      outcome = await this.api().inspect(this.picked());
    } catch (e) {
      outcome = { ok: false, failure: { code: 'train_failed', message: (e as Error).message } };
    }
    if (n !== this.inspection) return;
    if (outcome.ok) {
      this._summary = outcome.summary;
      if (outcome.summary.columns.length > 0) this._columns = outcome.summary.columns;
    } else {
      this._failure = outcome.failure;
      const columns = (outcome.failure.details as { columns?: unknown } | undefined)?.columns;
      if (Array.isArray(columns)) this._columns = columns.map(String);
    }
  }

  private async train(): Promise<void> {
    const summary = this._summary;
    if (this._file === null || summary === null || summary.examples === 0 || this._busy) return;
    this._busy = true;
    this._result = null;
    this._failure = null;
    this._progress = null;
    this.saved = null;
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
      const threads = (this.threads = startThreadWorkers(this._threads));
      const outcome = await Promise.race([
        this.api().train(
          Comlink.transfer(
            {
              file: this.picked(),
              // Labelled requests name their model; a plain file's requests get the name here.
              ...(summary.kind === 'plain' ? { name: this._name.trim() || 'model' } : {}),
              threads: threads.ports,
            },
            threads.ports,
          ),
          Comlink.proxy((p: TrainProgress) => (this._progress = p)),
          Comlink.proxy(host),
        ),
        threads.lost,
      ]);
      if (!outcome.ok) {
        this._failure = outcome.failure;
        return;
      }
      this.files = outcome.files;
      this.release = outcome.release;
      this.ranOn = outcome.threads;
      this.saved = await saveTrainedPackage(folderName(outcome.result.name), outcome.files);
      this._result = outcome.result;
    } catch (e) {
      this._failure = { code: 'train_failed', message: (e as Error).message };
    } finally {
      await host.close().catch(() => undefined);
      await removeTrainedPackage(VERIFYING).catch(() => undefined);
      // A fresh worker for the next run: the in-memory file system and the trainer's memory go.
      this.threads?.end();
      this.threads = null;
      this.worker?.terminate();
      this.worker = null;
      this.remote = null;
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
    a.download = `${folderName(result.name)}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  private columnPicker(
    label: string,
    value: string | undefined,
    fallback: string,
    set: (v: string) => void,
  ) {
    const options = [...new Set([...this._columns, value ?? fallback])];
    return html`<label class="field inline"
      >${label}
      <select
        ?disabled=${this._busy}
        @change=${(e: Event) => {
          set((e.target as HTMLSelectElement).value);
          void this.inspect();
        }}
      >
        ${options.map(
          (c) => html`<option value=${c} ?selected=${c === (value ?? fallback)}>${c}</option>`,
        )}
      </select></label
    >`;
  }

  /** Columns, question and name, for a plain file (labelled requests carry their own). */
  private renderPlainSettings(): TemplateResult | typeof nothing {
    const summary = this._summary;
    const plain = summary?.kind === 'plain' || (summary === null && this._columns.length > 0);
    if (!plain) return nothing;
    const question = summary?.question;
    const labelFallback = question?.id ?? 'label';
    return html`<div class="plain-settings">
      ${
        this._columns.length > 0
          ? html`${this.columnPicker('Text column', this._textColumn, 'text', (v) => (this._textColumn = v))}
            ${this.columnPicker('Label column', this._labelColumn, labelFallback, (v) => (this._labelColumn = v))}`
          : nothing
      }
      <label class="field"
        >Question (System One JSON; its options are the labels)
        <textarea
          class="code"
          rows="6"
          aria-label="Question"
          ?disabled=${this._busy}
          .value=${this._question ?? question?.json ?? ''}
          @change=${(e: Event) => {
            const text = (e.target as HTMLTextAreaElement).value;
            this._question = text.trim() === '' ? null : text;
            void this.inspect();
          }}
        ></textarea>
      </label>
      ${
        question?.generated && this._question === null
          ? html`<p class="hint">
              Made from the labels: add instructions and descriptions, and ask the model the same
              way later.
            </p>`
          : nothing
      }
      <label class="field"
        >Model name
        <input
          aria-label="Model name"
          .value=${this._name}
          ?disabled=${this._busy}
          @input=${(e: Event) => (this._name = (e.target as HTMLInputElement).value)}
      /></label>
    </div>`;
  }

  /**
   * How many threads the fits run on (thread workers; `clef-web train --threads`): each holds its
   * own copy of the examples, so fewer use less memory. One only where the page is not
   * cross-origin isolated.
   */
  private renderThreads(): TemplateResult {
    const isolated = globalThis.crossOriginIsolated;
    return html`<label class="field inline"
      >Threads
      <input
        type="number"
        min="1"
        max=${MAX_THREADS}
        step="1"
        aria-label="Threads"
        title=${isolated ? 'Each thread holds its own copy of the examples' : 'Threads need a cross-origin-isolated page (COOP/COEP)'}
        .value=${String(this._threads)}
        ?disabled=${this._busy || !isolated}
        @change=${(e: Event) => {
          const input = e.target as HTMLInputElement;
          const n = Number(input.value);
          this._threads = Number.isInteger(n) ? Math.max(1, Math.min(MAX_THREADS, n)) : 1;
          input.value = String(this._threads);
        }}
    /></label>`;
  }

  protected override render(): TemplateResult {
    const p = this._progress;
    const ready = this._summary !== null && this._summary.examples > 0;
    return html`<section class="card train" aria-label="Train">
      <h2>Train a model on your labelled examples</h2>
      <p class="hint">
        A CSV with a header (a text column and a label column), JSONL of
        <code>{"text": ..., "label": ...}</code>, or labelled System One requests (one
        <code>{"request": ..., "labels": {"id": "option"}}</code> a line); UTF-8, or UTF-16 with a
        byte-order mark. At least 5 examples a label. It trains in this page, with the code
        <code>clef-web train</code> runs; the examples never leave it.
      </p>
      <input
        type="file"
        accept=".csv,.tsv,.jsonl,.ndjson,.json,.txt"
        aria-label="Training data"
        ?disabled=${this._busy}
        @change=${(e: Event) => {
          const file = (e.target as HTMLInputElement).files?.[0];
          if (file) void this.load(file);
        }}
      />
      ${this.renderPlainSettings()}
      ${this._summary ? renderCounts(this._summary, this._file?.name ?? '') : nothing}
      ${this.renderThreads()}
      <button
        type="button"
        class="primary"
        ?disabled=${!ready || this._busy}
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
      ${
        this._result
          ? renderResult(
              this._result,
              {
                use: () => this.useModel(),
                download: () => this.download(),
              },
              this.ranOn,
            )
          : nothing
      }
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
