import { LitElement, type PropertyValues, type TemplateResult } from 'lit';
import { BUNDLED_MODEL_PATH } from '../../wire/assets.js';
import type { LoadProgress } from '../../wire/wire.js';
import type { EngineInfo } from '../../wire/telemetry.js';
import type { JsonValue, Question, SystemOneRequest } from '../../protocol/types.js';
import { describeDecision } from './answer-view.js';
import { answerStyles, decideStyles } from './clef-decide.styles.js';
import {
  engineKey,
  sharedRegistry,
  type DeviceChoice,
  type EngineLease,
} from './engine-registry.js';
import { errorDetail, type ClefDecisionDetail, type ClefErrorDetail } from './events.js';
import { questionsFromChildren } from './question-elements.js';
import { progressBarStyles } from './progress-bar.js';
import { warnUnknownAttributes } from './unknown-attributes.js';
import { BoundField } from './bound-field.js';
import { decideOnEngine } from './decide-on-engine.js';
import { decideView } from './decide-view.js';

export type DecideState = string | JsonValue[] | { [key: string]: JsonValue };

/** Attributes of the declarative children whose change re-decides. */
const QUESTION_ATTRIBUTES = ['name', 'instructions', 'value', 'yes', 'no'];

/**
 * Decides about a state with a System One model running in the page, and shows per question the
 * chosen option with a probability bar for every option (a score as its expected level, a yes/no
 * as P(yes)). Elements asking for the same model and device share one engine and one download.
 *
 * @summary A private, in-page decision: state + questions in, probabilities out.
 *
 * @event clef-decision - A decision arrived. `detail`: `{ request, response, json, timings,
 *   calibrated?, untrained? }` (`calibrated`: prediction sets and abstention, with
 *   `calibrated`/`abstain-below`; `untrained`: what a trained model was not trained on).
 * @event clef-error - Loading or deciding failed. `detail`: `{ error, code, status?, body?, message, phase }`.
 * @event clef-progress - Model load progress. `detail`: `LoadProgress`.
 *
 * @slot header - Shown above the answers (a title, an explanation).
 * @slot empty - Shown while there is nothing to decide yet.
 * @slot answer-{id} - Replaces the default view of question `{id}`'s answer.
 * @slot footer - Shown below the answers.
 *
 * @csspart base - The wrapper of everything.
 * @csspart answers - The list of answers.
 * @csspart answer - One question's answer (also `answer-choice`, `answer-noul`, `answer-score`).
 * @csspart label - A question's id.
 * @csspart value - A question's chosen option, yes/no or expected level.
 * @csspart option - An option's label next to its bar (`option-chosen` for the chosen one).
 * @csspart bar - A probability bar's track (`bar-chosen` for the chosen option).
 * @csspart fill - A probability bar's filled part.
 * @csspart scale - A score's rubric scale; `marker` is its expected-level dot.
 * @csspart progress - Model load progress.
 * @csspart error - An error message; `retry` is its button.
 * @csspart empty - The placeholder before the first decision.
 * @csspart unsure - The "not sure" note of an abstaining calibrated answer; `set` its list,
 *   `set-option` each option of the prediction set.
 * @csspart sure - The note of a calibrated answer that does not abstain.
 * @csspart untrained - The warning above the answers when the request asks a question, option or
 *   description the model was not trained on (`detail.untrained`; packages `clef-web train` wrote).
 *
 * @cssprop --clef-bar-color - Fill of the bars.
 * @cssprop --clef-bar-chosen-color - Fill of the chosen option's bar, and the answer's colour.
 * @cssprop --clef-bar-track-color - The bars' empty part.
 * @cssprop --clef-bar-height - Height of a bar (default 0.55rem).
 * @cssprop --clef-radius - Corner radius of the bars.
 * @cssprop --clef-gap - Space between answers.
 * @cssprop --clef-font - Font family.
 * @cssprop --clef-text-color - Text colour (default: inherited).
 * @cssprop --clef-muted-color - Secondary text.
 * @cssprop --clef-accent-color - Progress bar and focus ring.
 * @cssprop --clef-error-color - Errors.
 * @cssprop --clef-unsure-color - Accent of the "not sure" note (default amber).
 * @cssprop --clef-background - Background behind the score marker's ring.
 */
export class ClefDecide extends LitElement {
  static override styles = [answerStyles, decideStyles, progressBarStyles];

  static override properties = {
    model: { type: String },
    modelName: { type: String, attribute: 'model-name' },
    device: { type: String },
    state: { attribute: 'state' },
    htmlFor: { type: String, attribute: 'for' },
    questions: { attribute: false },
    debounce: { type: Number },
    label: { type: String },
    calibrated: { type: Boolean },
    abstainBelow: { type: Number, attribute: 'abstain-below' },
    record: { type: Boolean },
    shared: { type: Boolean },
    _progress: { state: true },
    _loaded: { state: true },
    _deciding: { state: true },
    _result: { state: true },
    _error: { state: true },
    _announcement: { state: true },
  };

  /** URL of the model package (the folder holding manifest.json); default: bundled clef-nano. */
  declare model: string;
  /** The System One model name to ask for; default: the loaded package's own name. */
  declare modelName: string | undefined;
  /** 'auto' (js, WebGPU or WASM: see createClef's `device`), 'js', 'webgpu' or 'wasm'. */
  declare device: DeviceChoice;
  /** What to decide about: text, or (as a property) a JSON object or array. */
  declare state: DecideState | undefined;
  /** Id of a form field (or form) whose value is the state; re-decides as it changes. */
  declare htmlFor: string | undefined;
  /** Questions in System One shape; when null, the declarative children are used. */
  declare questions: Record<string, Question> | null;
  /** Milliseconds to wait after typing in the bound field before deciding. */
  declare debounce: number;
  /** Accessible name of the answers region (default "Decision"). */
  declare label: string | undefined;
  /** Ask for calibrated answers (the package must ship a calibration: `clef-web calibrate`). */
  declare calibrated: boolean;
  /** Abstain ("not sure") also under this calibrated confidence, in [0, 1]; implies calibrated. */
  declare abstainBelow: number | undefined;
  /**
   * Keep a decision record of each answer in this origin's IndexedDB (docs/records.md;
   * `createClef().exportRecords()` reads them back as JSONL). Records never leave the browser.
   */
  declare record: boolean;
  /**
   * One engine for every tab of this origin showing this model (createClef({ shared: true })):
   * loaded once, in a SharedWorker; a dedicated worker where the browser has none.
   */
  declare shared: boolean;

  declare private _progress: LoadProgress | null;
  declare private _loaded: boolean;
  declare private _deciding: boolean;
  declare private _result: ClefDecisionDetail | null;
  declare private _error: ClefErrorDetail | null;
  declare private _announcement: string;

  private lease: EngineLease | null = null;
  private controller: AbortController | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The field the `for` attribute names: typing in it cancels what is in flight. */
  private readonly field = new BoundField(this, () => {
    // What is in flight describes text that is gone: cancel it now, decide after a pause.
    this.controller?.abort();
    this.schedule(this.debounce);
  });
  private needsEngine = false;
  private readonly observer = new MutationObserver(() => {
    if (this.questions == null) this.schedule(30);
  });

  constructor() {
    super();
    this.model = BUNDLED_MODEL_PATH;
    this.device = 'auto';
    this.questions = null;
    this.debounce = 300;
    this.calibrated = false;
    this.record = false;
    this.shared = false;
    this._progress = null;
    this._loaded = false;
    this._deciding = false;
    this._result = null;
    this._error = null;
    this._announcement = '';
  }

  /** The latest decision (request, response, json, timings), or null. */
  get decision(): ClefDecisionDetail | null {
    return this._result;
  }

  /** The latest error, or null. */
  get error(): ClefErrorDetail | null {
    return this._error;
  }

  /**
   * The engine's info once the model is loaded (device, why, package hash), read from the engine
   * now: its counters are current, not those of the load.
   */
  async info(): Promise<EngineInfo> {
    if (!this.lease) throw new Error('<clef-decide> is not connected');
    await this.lease.info;
    return (await this.lease.clef).info();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    warnUnknownAttributes(this, ClefDecide.properties);
    // The engine is acquired on the first update, once properties set right after
    // appending the element are in: no load of the default model that is then dropped.
    this.needsEngine = true;
    this.requestUpdate(); // a reconnected element gets its engine back
    this.observer.observe(this, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: QUESTION_ATTRIBUTES,
    });
    this.bindField();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.observer.disconnect();
    this.field.unbind();
    clearTimeout(this.timer);
    this.controller?.abort();
    this.controller = null;
    this.lease?.release();
    this.lease = null;
    this._deciding = false;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!this.isConnected) return;
    if (
      this.needsEngine ||
      changed.has('model') ||
      changed.has('device') ||
      changed.has('shared')
    ) {
      this.needsEngine = false;
      this.connectEngine();
    }
    if (changed.has('htmlFor') && this.hasUpdated) this.bindField();
    const inputs = [
      ...['state', 'questions', 'modelName', 'model', 'device', 'shared'],
      ...['calibrated', 'abstainBelow'],
    ] as const;
    if (inputs.some((k) => changed.has(k)) || !this.hasUpdated) this.schedule(0);
  }

  /**
   * Decides now (cancelling any decision in flight) and resolves to the decision, or to null
   * when there is nothing to decide or a newer request replaced this one. Failures are shown
   * in place and dispatched as `clef-error`; this never rejects.
   */
  async decide(): Promise<ClefDecisionDetail | null> {
    clearTimeout(this.timer);
    const questions = this.questions ?? questionsFromChildren(this);
    const state: DecideState | undefined = this.field.read(this.state);
    if (!questions || state === undefined || state === '' || !this.isConnected) return null;
    if (!this.lease) this.connectEngine();
    const lease = this.lease!;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this._deciding = true;
    let phase: 'load' | 'decide' = 'load';
    try {
      const clef = await lease.clef;
      const model = this.modelName || (await lease.info).model;
      phase = 'decide';
      if (controller.signal.aborted) return null;
      const request: SystemOneRequest = { model, state, questions };
      const wire = await decideOnEngine(clef, request, {
        signal: controller.signal,
        calibrated: this.calibrated,
        abstainBelow: this.abstainBelow,
        record: this.record,
      });
      // Replaced, or cancelled by typing: the answer describes a state that is gone.
      if (this.controller !== controller || controller.signal.aborted) return null;
      const detail: ClefDecisionDetail = { request, ...wire };
      this._result = detail;
      this._error = null;
      this._announcement = describeDecision(wire.response);
      this.dispatchEvent(
        new CustomEvent('clef-decision', { detail, bubbles: true, composed: true }),
      );
      return detail;
    } catch (error) {
      // Superseded requests end quietly; load failures are reported once, by connectEngine.
      if (this.controller !== controller || controller.signal.aborted || phase === 'load') {
        return null;
      }
      this.fail(error, 'decide');
      return null;
    } finally {
      if (this.controller === controller) {
        this.controller = null;
        this._deciding = false;
      }
    }
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.decide(), delay);
  }

  private connectEngine(): void {
    const key = engineKey(this.model, this.device, this.shared);
    if (this.lease?.key === key) return;
    this.lease?.release();
    this._loaded = false;
    this._error = null;
    const onProgress = (progress: LoadProgress) => {
      if (key !== engineKey(this.model, this.device, this.shared)) return;
      this._progress = progress;
      this.dispatchEvent(
        new CustomEvent('clef-progress', { detail: progress, bubbles: true, composed: true }),
      );
    };
    const lease = sharedRegistry().acquire(this.model, this.device, onProgress, this.shared);
    this.lease = lease;
    lease.info.then(
      () => {
        if (this.lease !== lease) return;
        this._loaded = true;
        this._progress = null;
      },
      (error: unknown) => {
        if (this.lease !== lease) return;
        this.fail(error, 'load');
      },
    );
  }

  private fail(error: unknown, phase: 'load' | 'decide'): void {
    const detail = errorDetail(error, phase);
    this._error = detail;
    this._result = null;
    this._announcement = '';
    this.dispatchEvent(new CustomEvent('clef-error', { detail, bubbles: true, composed: true }));
  }

  private retry(): void {
    if (this._error?.phase === 'load') {
      // The registry forgot the failed load: releasing and acquiring again starts a new one.
      this.lease?.release();
      this.lease = null;
      this.connectEngine();
    }
    this._error = null;
    void this.decide();
  }

  private bindField(): void {
    if (this.field.bind(this.htmlFor, () => this.bindField()) && this.hasUpdated) {
      this.schedule(0);
    }
  }

  private readonly onRetry = (): void => this.retry();

  protected override render(): TemplateResult {
    return decideView({
      result: this._result,
      error: this._error,
      loaded: this._loaded,
      deciding: this._deciding,
      progress: this._progress,
      label: this.label,
      announcement: this._announcement,
      retry: this.onRetry,
    });
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'clef-decide': ClefDecide;
  }
}
