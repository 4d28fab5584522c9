/**
 * The request form for a trained model: its trained questions, with the instructions and option
 * descriptions its training requests used (manifest `training`, `info().training`), so that the
 * playground asks what the model knows rather than the last model's question. Pure.
 */
import type { JsonValue } from '../protocol/types.js';
import type { TrainingSummary } from '../wire/telemetry.js';
import type { FormQuestion, FormState } from './request-form.js';

/** A description as the form's text field holds it ('' = none). */
function descriptionText(d: JsonValue | undefined): string {
  if (d === null || d === undefined) return '';
  return typeof d === 'string' ? d : JSON.stringify(d);
}

export function trainedForm(
  training: TrainingSummary,
  model: string,
  stateText: string,
): FormState {
  const questions = training.questions.map((q): FormQuestion => {
    // The descriptions' keys are in the order the training requests listed the options.
    const order = q.descriptions ? Object.keys(q.descriptions) : [];
    const options = [...order, ...q.options.filter((o) => !order.includes(o))];
    return {
      id: q.id,
      type: 'choice',
      instructions: q.instructions ?? '',
      options: options.map((name) => ({
        name,
        description: descriptionText(q.descriptions?.[name]?.[0]),
      })),
      levels: [],
      yes: '',
      no: '',
    };
  });
  return { model, stateMode: 'text', stateText, questions };
}
