/**
 * The warning shown above the answers when the request asks what the model was not trained on
 * (`DecisionWire.untrained`: a question, option id or description outside the package's
 * `training` section). Those answers carry no information. Pure Lit template; the playground
 * shows the same note.
 */
import { html, nothing, type TemplateResult } from 'lit';
import type { UntrainedPart } from '../../core/untrained.js';

export function untrainedNote(
  parts: readonly UntrainedPart[] | undefined,
): TemplateResult | typeof nothing {
  if (!parts || parts.length === 0) return nothing;
  return html`<div
    class="clef-unsure clef-untrained"
    part="untrained"
    role="note"
    data-untrained=${parts.length}
  >
    <strong>Not trained for this</strong>
    <span class="clef-note"
      >: the answers below carry no information where the model was not trained.</span
    >
    <ul>
      ${parts.map((p) => html`<li data-kind=${p.kind}>${p.message}</li>`)}
    </ul>
  </div>`;
}
