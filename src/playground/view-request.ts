/** The request editor: a question builder, or the raw request JSON. */
import { html, nothing, type TemplateResult } from 'lit';
import type { QuestionType } from '../protocol/types.js';
import type { PlaygroundView } from './view-state.js';
import { PRESETS } from './examples.js';
import {
  formToRequestText,
  freshId,
  newQuestion,
  type FormQuestion,
  type FormState,
} from './request-form.js';
import { untrainedParts, type UntrainedPart } from '../core/untrained.js';
import { parseRequestJson } from '../protocol/json.js';
import { validateRequest } from '../protocol/validate.js';

const TYPE_LABEL: Record<QuestionType, string> = {
  choice: 'choice',
  noul: 'yes/no',
  score: 'score',
};

function value(e: Event): string {
  return (e.target as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value;
}

/** Ctrl/Cmd+Enter decides from any field. */
function decideKey(app: PlaygroundView) {
  return (e: KeyboardEvent) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void app.decide();
    }
  };
}

function editQuestion(app: PlaygroundView, index: number, change: Partial<FormQuestion>): void {
  const questions = app.form.questions.map((q, i) => (i === index ? { ...q, ...change } : q));
  app.setForm({ ...app.form, questions });
}

function optionsEditor(app: PlaygroundView, q: FormQuestion, index: number): TemplateResult {
  const set = (options: FormQuestion['options']) => editQuestion(app, index, { options });
  return html`<div class="rows" role="group" aria-label=${`Options of ${q.id}`}>
    ${q.options.map(
      (o, j) =>
        html`<div class="option-row">
          <input
            aria-label=${`Option ${j + 1} name`}
            .value=${o.name}
            @input=${(e: Event) =>
              set(q.options.map((x, k) => (k === j ? { ...x, name: value(e) } : x)))}
          />
          <input
            aria-label=${`Option ${j + 1} description`}
            placeholder="description (optional)"
            .value=${o.description}
            @input=${(e: Event) =>
              set(q.options.map((x, k) => (k === j ? { ...x, description: value(e) } : x)))}
          />
          <button
            type="button"
            class="icon"
            aria-label=${`Remove option ${o.name || j + 1}`}
            @click=${() => set(q.options.filter((_, k) => k !== j))}
          >
            ×
          </button>
        </div>`,
    )}
    <button
      type="button"
      class="link"
      @click=${() => set([...q.options, { name: `option_${q.options.length + 1}`, description: '' }])}
    >
      + option
    </button>
  </div>`;
}

function levelsEditor(app: PlaygroundView, q: FormQuestion, index: number): TemplateResult {
  const set = (levels: string[]) => editQuestion(app, index, { levels });
  return html`<div class="rows" role="group" aria-label=${`Levels of ${q.id}`}>
    ${q.levels.map(
      (level, j) =>
        html`<div class="option-row level">
          <span class="level-n" aria-hidden="true">${j}</span>
          <input
            aria-label=${`Level ${j} description`}
            .value=${level}
            @input=${(e: Event) => set(q.levels.map((x, k) => (k === j ? value(e) : x)))}
          />
          <button
            type="button"
            class="icon"
            aria-label=${`Remove level ${j}`}
            @click=${() => set(q.levels.filter((_, k) => k !== j))}
          >
            ×
          </button>
        </div>`,
    )}
    <button type="button" class="link" @click=${() => set([...q.levels, ''])}>+ level</button>
  </div>`;
}

function noulEditor(app: PlaygroundView, q: FormQuestion, index: number): TemplateResult {
  return html`<div class="option-row two">
    <input
      aria-label=${`What yes means for ${q.id}`}
      placeholder="yes means… (optional)"
      .value=${q.yes}
      @input=${(e: Event) => editQuestion(app, index, { yes: value(e) })}
    />
    <input
      aria-label=${`What no means for ${q.id}`}
      placeholder="no means… (optional)"
      .value=${q.no}
      @input=${(e: Event) => editQuestion(app, index, { no: value(e) })}
    />
  </div>`;
}

function questionEditor(app: PlaygroundView, q: FormQuestion, index: number): TemplateResult {
  const form = app.form;
  return html`<fieldset class="question" data-type=${q.type}>
    <legend><span class="tag">${TYPE_LABEL[q.type]}</span> ${q.id || '(no id)'}</legend>
    <button
      type="button"
      class="icon remove-q"
      aria-label=${`Remove question ${q.id}`}
      @click=${() => app.setForm({ ...form, questions: form.questions.filter((_, i) => i !== index) })}
    >
      ×
    </button>
    <div class="q-grid">
      <label class="field"
        >Id
        <input .value=${q.id} @input=${(e: Event) => editQuestion(app, index, { id: value(e) })}
      /></label>
      <label class="field"
        >Type
        <select
          @change=${(e: Event) => editQuestion(app, index, { ...newQuestion(value(e) as QuestionType, q.id), instructions: q.instructions })}
        >
          ${(['choice', 'noul', 'score'] as const).map(
            (t) => html`<option value=${t} ?selected=${t === q.type}>${TYPE_LABEL[t]}</option>`,
          )}
        </select></label
      >
    </div>
    <label class="field"
      >Instructions
      <input
        placeholder=${`(none: the id "${q.id}" is used)`}
        .value=${q.instructions}
        @input=${(e: Event) => editQuestion(app, index, { instructions: value(e) })}
    /></label>
    ${
      q.type === 'choice'
        ? optionsEditor(app, q, index)
        : q.type === 'score'
          ? levelsEditor(app, q, index)
          : noulEditor(app, q, index)
    }
  </fieldset>`;
}

function addQuestion(app: PlaygroundView, type: QuestionType): void {
  const base = type === 'noul' ? 'yes_no' : type;
  const form: FormState = app.form;
  app.setForm({
    ...form,
    questions: [...form.questions, newQuestion(type, freshId(form.questions, base))],
  });
}

function formEditor(app: PlaygroundView): TemplateResult {
  const form = app.form;
  const onKey = decideKey(app);
  return html`<label class="field"
      >Model name
      <input .value=${form.model} @input=${(e: Event) => app.setForm({ ...form, model: value(e) })}
    /></label>
    <div class="state-head">
      <label for="state-text">State</label>
      <div class="segmented" role="radiogroup" aria-label="State format">
        ${(['text', 'json'] as const).map(
          (mode) =>
            html`<button
              type="button"
              role="radio"
              aria-checked=${form.stateMode === mode ? 'true' : 'false'}
              @click=${() => app.setForm({ ...form, stateMode: mode })}
            >
              ${mode === 'text' ? 'Text' : 'JSON'}
            </button>`,
        )}
      </div>
    </div>
    <textarea
      id="state-text"
      class=${form.stateMode === 'json' ? 'code' : ''}
      rows="4"
      .value=${form.stateText}
      @input=${(e: Event) => app.setForm({ ...form, stateText: value(e) })}
      @keydown=${onKey}
    ></textarea>
    <div class="questions" @keydown=${onKey}>
      ${form.questions.map((q, i) => questionEditor(app, q, i))}
    </div>
    <div class="add">
      <span class="muted">Add a question:</span>
      <button type="button" class="chip" @click=${() => addQuestion(app, 'choice')}>
        + choice
      </button>
      <button type="button" class="chip" @click=${() => addQuestion(app, 'noul')}>+ yes/no</button>
      <button type="button" class="chip" @click=${() => addQuestion(app, 'score')}>+ score</button>
    </div>`;
}

/** What the request being edited asks that the loaded model was not trained on ([] if unknown). */
export function untrainedNow(app: PlaygroundView): UntrainedPart[] {
  if (!app.info?.training) return [];
  try {
    const body = parseRequestJson(
      app.editMode === 'form' ? formToRequestText(app.form) : app.rawText,
    );
    return untrainedParts(app.info.training, validateRequest(body));
  } catch {
    return []; // not a valid request yet: Decide says why
  }
}

function untrainedWarning(app: PlaygroundView): TemplateResult | typeof nothing {
  const parts = untrainedNow(app);
  if (parts.length === 0) return nothing;
  return html`<div class="warning small" role="note" data-testid="untrained-note">
    ⚠ ${app.info?.model} was not trained on ${parts.length === 1 ? 'part' : `${parts.length} parts`}
    of this request; those answers carry no information:
    <ul>
      ${parts.map((p) => html`<li>${p.message}</li>`)}
    </ul>
  </div>`;
}

export function renderRequest(app: PlaygroundView): TemplateResult {
  return html`<section class="card" aria-labelledby="request-h">
    <div class="card-head">
      <h2 id="request-h">Request</h2>
      <label class="preset"
        >Example
        <select
          @change=${(e: Event) => {
            app.applyPreset(value(e));
            (e.target as HTMLSelectElement).value = '';
          }}
        >
          <option value="">choose…</option>
          ${PRESETS.map((p) => html`<option value=${p.id}>${p.label}</option>`)}
        </select>
      </label>
      <div class="segmented" role="radiogroup" aria-label="Editor">
        <button
          type="button"
          role="radio"
          aria-checked=${app.editMode === 'form' ? 'true' : 'false'}
          @click=${() => app.setEditMode('form')}
        >
          Form
        </button>
        <button
          type="button"
          role="radio"
          aria-checked=${app.editMode === 'raw' ? 'true' : 'false'}
          @click=${() => app.setEditMode('raw')}
        >
          Raw JSON
        </button>
      </div>
    </div>
    ${app.rawNote ? html`<p class="note" role="status">${app.rawNote}</p>` : nothing}
    ${
      app.editMode === 'form'
        ? formEditor(app)
        : html`<label class="sr-only" for="raw-json">Request JSON</label>
            <textarea
              id="raw-json"
              class="code raw"
              spellcheck="false"
              .value=${app.rawText}
              @input=${(e: Event) => app.setRawText(value(e))}
              @keydown=${decideKey(app)}
            ></textarea>`
    }
    ${untrainedWarning(app)}
    <div class="actions">
      <button
        type="button"
        class="primary"
        ?disabled=${!app.clef || app.deciding}
        @click=${() => app.decide()}
      >
        ${app.deciding ? 'Deciding…' : 'Decide'}
      </button>
      <span class="muted"><kbd>Ctrl</kbd> + <kbd>Enter</kbd></span>
    </div>
  </section>`;
}
