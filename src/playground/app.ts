/**
 * `<clef-playground>`: the offline playground. Light DOM (styled by playground.css); this file
 * holds the state and the actions, the view-*.ts files render it.
 */
import { html, LitElement, type TemplateResult } from 'lit';
import { createClef, pageDecide, type Clef } from '../client/clef.js';
import { registerSystemOneRoute, type SystemOneRouteHandle } from '../client/service-worker.js';
import type { ClefTokenizer } from '../clef/tokenizer.js';
import type { LoadProgress } from '../wire/wire.js';
import type { EngineInfo } from '../wire/telemetry.js';
import { errorDetail, type ClefErrorDetail } from '../element/clef-decide/events.js';
import { parseRequestJson } from '../protocol/json.js';
import { deviceOf } from '../core/devices.js';
import { DecisionLog } from './decision-log.js';
import { answeringEngine, pageRecord } from '../client/records.js';
import { DEFAULT_PACKAGE, PRESETS } from './examples.js';
import { loadLocalPackage, pickFolder } from './local-package.js';
import { exportFileName, toJsonl, type LogEntry } from './log-format.js';
import { formToRequestText, requestTextToForm, type FormState } from './request-form.js';
import { trainedForm } from './trained-form.js';
import {
  pageResources,
  precache,
  registerServiceWorker,
  waitForController,
  type OfflineStatus,
} from './sw-client.js';
import { fetchTokenizer, promptView, type PromptView } from './token-view.js';
import { renderPage } from './view-page.js';
import type { DecisionResult, Device, PlaygroundView, Source } from './view-state.js';
import { readSettings, writeSettings } from './settings.js';

export type { DecisionResult, Device, PlaygroundView, Source } from './view-state.js';

export class ClefPlayground extends LitElement implements PlaygroundView {
  static override properties = {
    source: { state: true },
    url: { state: true },
    device: { state: true },
    folder: { state: true },
    loading: { state: true },
    progress: { state: true },
    loadError: { state: true },
    info: { state: true },
    form: { state: true },
    editMode: { state: true },
    rawText: { state: true },
    rawNote: { state: true },
    deciding: { state: true },
    result: { state: true },
    decideError: { state: true },
    prompt: { state: true },
    promptError: { state: true },
    log: { state: true },
    offline: { state: true },
    jsonTab: { state: true },
  };

  declare source: Source;
  declare url: string;
  declare device: Device;
  declare folder: FileSystemDirectoryHandle | null;
  declare loading: boolean;
  declare progress: LoadProgress | null;
  declare loadError: ClefErrorDetail | null;
  declare info: EngineInfo | null;
  declare form: FormState;
  declare editMode: 'form' | 'raw';
  declare rawText: string;
  declare rawNote: string | null;
  declare deciding: boolean;
  declare result: DecisionResult | null;
  declare decideError: ClefErrorDetail | null;
  declare prompt: PromptView | null;
  declare promptError: string | null;
  declare log: LogEntry[];
  declare offline: OfflineStatus;
  declare jsonTab: 'request' | 'response';

  clef: Clef | null = null;
  /** This page answers the same-origin System One routes (POST /v1/systemone ...). */
  private route: SystemOneRouteHandle | null = null;
  private tokenizer: ClefTokenizer | null = null;
  private readonly decisions = new DecisionLog();

  constructor() {
    super();
    const settings = readSettings();
    this.source = settings.source === 'folder' ? 'default' : settings.source;
    this.url = settings.url;
    this.device = settings.device;
    this.folder = null;
    this.loading = false;
    this.progress = null;
    this.loadError = null;
    this.info = null;
    this.form = PRESETS[0]!.form('');
    this.editMode = 'form';
    this.rawText = '';
    this.rawNote = null;
    this.deciding = false;
    this.result = null;
    this.decideError = null;
    this.prompt = null;
    this.promptError = null;
    this.log = [];
    this.offline = { state: 'installing' };
    this.jsonTab = 'response';
  }

  /** Light DOM: the page's stylesheet applies, and tests and extensions see plain markup. */
  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.start();
  }

  private async start(): Promise<void> {
    void this.refreshLog();
    try {
      const registration = await registerServiceWorker();
      if (!registration) {
        this.offline = { state: 'unsupported', reason: 'this browser has no service workers' };
      } else if (!(await waitForController(5000))) {
        this.offline = { state: 'failed', reason: 'the service worker did not take control' };
      }
    } catch (e) {
      this.offline = { state: 'unsupported', reason: (e as Error).message };
    }
    // Only now: a worker created while the page is controlled is controlled too, so all the
    // engine fetches (runtime wasm, package files) pass through the service worker.
    await this.loadModel();
  }

  /** The package URL the current source points at. */
  packageUrl(): string | null {
    if (this.source === 'default') return DEFAULT_PACKAGE;
    if (this.source === 'url') return this.url.trim() || null;
    return null;
  }

  async loadModel(): Promise<void> {
    this.loadError = null;
    this.loading = true;
    this.progress = null;
    const previousModel = this.info?.model;
    try {
      this.route?.stop();
      this.route = null;
      await this.clef?.dispose().catch(() => undefined);
      this.clef = null;
      this.info = null;
      this.tokenizer = null;
      let url = this.packageUrl();
      if (this.source === 'folder') {
        if (!this.folder) throw new Error('Choose a folder first');
        url = await loadLocalPackage(this.folder);
      }
      if (!url)
        throw new Error('Enter the URL of a package folder (the one holding manifest.json)');
      writeSettings({ source: this.source, url: this.url, device: this.device });
      this.clef = await createClef({
        model: url,
        device: this.device,
        // A picked folder is already on disk: no copy into Cache Storage.
        cache: this.source !== 'folder',
        onProgress: (p) => (this.progress = p),
      });
      this.info = await this.clef.info();
      // Unmodified System One clients on this origin reach this engine through the worker.
      this.route = await registerSystemOneRoute(this.clef).catch(() => null);
      if (
        !this.form.model ||
        this.form.model === previousModel ||
        this.form.model === 'clef-tiny'
      ) {
        this.form = { ...this.form, model: this.info.model };
      }
      this.tokenizer = await fetchTokenizer(this.info.packageUrl);
      this.updatePrompt();
      void this.makeOffline(this.info);
    } catch (e) {
      this.loadError = errorDetail(e, 'load');
    } finally {
      this.loading = false;
    }
  }

  async pickFolder(): Promise<void> {
    try {
      this.folder = await pickFolder();
      await this.loadModel();
    } catch (e) {
      if ((e as Error).name === 'AbortError') return; // the user closed the picker
      this.loadError = errorDetail(e, 'load');
    }
  }

  /** Loads a package folder given as a handle (the picker's result, or OPFS in tests). */
  async loadFromDirectory(dir: FileSystemDirectoryHandle): Promise<void> {
    this.source = 'folder';
    this.folder = dir;
    await this.loadModel();
  }

  async useTrainedModel(dir: FileSystemDirectoryHandle): Promise<void> {
    await this.loadFromDirectory(dir);
    const info = this.info;
    if (!info?.training) return;
    // The last model's question means nothing to this one: ask what it was trained on.
    const stateText = this.form.stateMode === 'text' ? this.form.stateText : '';
    this.result = null;
    this.rawNote = null;
    this.editMode = 'form';
    this.setForm(trainedForm(info.training, info.model, stateText));
  }

  private async makeOffline(info: EngineInfo): Promise<void> {
    if (!navigator.serviceWorker?.controller) return;
    this.offline = { state: 'caching' };
    try {
      const urls = pageResources();
      if (!info.packageUrl.includes('/local-packages/')) {
        const manifestUrl = new URL('manifest.json', info.packageUrl).href;
        const manifest = (await (await fetch(manifestUrl)).json()) as { files: { path: string }[] };
        urls.push(manifestUrl, ...manifest.files.map((f) => new URL(f.path, info.packageUrl).href));
      }
      const result = await precache(urls);
      // The js device fetched no onnxruntime file and needs none: the package is its runtime.
      const runtime =
        deviceOf(info.device).runtime === 'js' || result.ort.some((u) => u.endsWith('.wasm'));
      this.offline =
        result.failed.length === 0 && runtime
          ? { state: 'ready', cachedFiles: result.cached.length }
          : {
              state: 'failed',
              reason: runtime
                ? `not cached: ${result.failed.join('; ')}`
                : 'the runtime is not cached',
            };
    } catch (e) {
      this.offline = { state: 'failed', reason: (e as Error).message };
    }
  }

  /** The request text the editor currently describes (throws on a JSON syntax error). */
  requestText(): string {
    return this.editMode === 'form' ? formToRequestText(this.form) : this.rawText;
  }

  updatePrompt(): void {
    if (!this.tokenizer || !this.info) return;
    try {
      this.prompt = promptView(this.tokenizer, this.requestText(), this.info.contextTokens);
      this.promptError = null;
    } catch (e) {
      this.prompt = null;
      this.promptError = (e as Error).message;
    }
  }

  async decide(): Promise<void> {
    const clef = this.clef;
    const info = this.info;
    if (!clef || !info || this.deciding) return;
    this.decideError = null;
    let requestText: string;
    let body: unknown;
    try {
      requestText = this.requestText();
      body = parseRequestJson(requestText);
    } catch (e) {
      // Not JSON at all: said as such, like the HTTP route's 400.
      this.decideError = {
        error: e as Error,
        code: 'json_syntax',
        message: (e as Error).message,
        phase: 'decide',
      };
      return;
    }
    this.updatePrompt();
    this.deciding = true;
    try {
      // The view reads no logits: the playground's own decide brings none across.
      const wire = await (pageDecide(clef) ?? clef.decide)(body);
      this.result = { requestText, ...wire };
      await this.decisions.add({
        time: new Date().toISOString(),
        model: wire.response.model,
        packageUrl: info.packageUrl,
        packageSha256: info.manifestSha256,
        device: info.device,
        request: requestText,
        response: wire.json,
        timings: wire.timings,
        record: await pageRecord('playground', body, wire, null, answeringEngine(info)),
      });
      await this.refreshLog();
    } catch (e) {
      this.decideError = errorDetail(e, 'decide');
    } finally {
      this.deciding = false;
    }
  }

  setForm(form: FormState): void {
    this.form = form;
    this.updatePrompt();
  }

  /** Replaces the request with one of the examples, asking the loaded model. */
  applyPreset(id: string): void {
    const preset = PRESETS.find((p) => p.id === id);
    if (!preset) return;
    this.rawNote = null;
    this.editMode = 'form';
    this.setForm(preset.form(this.info?.model ?? this.form.model));
  }

  setEditMode(mode: 'form' | 'raw'): void {
    if (mode === this.editMode) return;
    if (mode === 'raw') {
      try {
        this.rawText = formToRequestText(this.form);
      } catch (e) {
        this.rawNote = `The state is not valid JSON: ${(e as Error).message}`;
        return;
      }
      this.rawNote = null;
      this.editMode = 'raw';
    } else {
      const parsed = requestTextToForm(this.rawText);
      if ('reason' in parsed) {
        this.rawNote = `The form cannot show this request (${parsed.reason}); edit it as JSON.`;
        return;
      }
      this.rawNote = null;
      this.form = parsed.form;
      this.editMode = 'form';
    }
    this.updatePrompt();
  }

  setRawText(text: string): void {
    this.rawText = text;
    this.updatePrompt();
  }

  /** Puts a logged request back into the editor. */
  restore(entry: LogEntry): void {
    this.rawText = entry.request;
    this.editMode = 'raw';
    this.setEditMode('form');
    this.updatePrompt();
  }

  async refreshLog(): Promise<void> {
    try {
      this.log = await this.decisions.all();
    } catch {
      this.log = [];
    }
  }

  async clearLog(): Promise<void> {
    await this.decisions.clear();
    await this.refreshLog();
  }

  exportLog(): void {
    const blob = new Blob([toJsonl(this.log)], { type: 'application/x-ndjson' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = exportFileName(new Date());
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  protected override render(): TemplateResult {
    return html`${renderPage(this)}`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'clef-playground': ClefPlayground;
  }
}
