// What a request asks beyond a trained package's training (src/core/untrained.ts), and the form
// the playground switches to for a trained model (src/playground/trained-form.ts): pure, on the
// `training` section `clef-web train` writes (test/unit/node/train/train.test.ts checks that
// section).
import { describe, expect, it } from 'vitest';
import { untrainedParts, type TrainedQuestions } from '../../../src/core/untrained.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import { formToRequestText } from '../../../src/playground/request-form.js';
import { trainedForm } from '../../../src/playground/trained-form.js';
import type { TrainingSummary } from '../../../src/wire/telemetry.js';

const TRAINING: TrainingSummary = {
  method: 'clef-web train',
  questions: [
    {
      id: 'route',
      type: 'choice',
      options: ['abuse', 'billing', 'other'],
      instructions: 'Which team should handle this message?',
      descriptions: { billing: ['Payments', 'Money'], abuse: ['Trust and safety'], other: [null] },
    },
  ],
  examples: { train: 10, heldOut: 2 },
  heldOutAccuracy: { route: 1 },
  seed: 1,
  note: '',
};

const ask = (questions: object) =>
  untrainedParts(TRAINING, validateRequest({ model: 'm', state: 'hi', questions }));

describe('untrainedParts', () => {
  it('nothing for the trained question, with any of its trained descriptions, or a subset of its options', () => {
    const criteria = { abuse: 'Trust and safety', billing: 'Money', other: null };
    expect(ask({ route: { type: 'choice', criteria } })).toEqual([]);
    expect(
      ask({ route: { type: 'choice', criteria: { billing: 'Payments', other: null } } }),
    ).toEqual([]);
    // Another id, the trained options: the model reads options and descriptions, not ids.
    expect(ask({ team: { type: 'choice', criteria } })).toEqual([]);
  });

  it('names an untrained question, option and description', () => {
    const parts = ask({
      route: { type: 'choice', criteria: { billing: 'Refunds', sales: null, other: null } },
      urgent: { type: 'noul' },
    });
    expect(parts.map((p) => [p.question, p.kind, p.option])).toEqual([
      ['route', 'description', 'billing'],
      ['route', 'option', 'sales'],
      ['urgent', 'question', undefined],
    ]);
    expect(parts[0]!.message).toBe(
      'question "route": option "billing" has a description the model was not trained with ("Refunds"; trained: "Payments" or "Money")',
    );
    expect(parts[1]!.message).toBe(
      'question "route": option "sales" was not trained (the trained options: abuse, billing, other)',
    );
    expect(parts[2]!.message).toMatch(
      /^question "urgent" was not trained: no trained question has its id or all its options/,
    );
    // The trained id asked as another type is not the trained question either.
    expect(ask({ route: { type: 'noul' } })[0]!.kind).toBe('question');
  });

  it('only ids and options for a package trained before descriptions were recorded; nothing without a training section', () => {
    const old: TrainedQuestions = { questions: [{ id: 'route', options: ['a', 'b'] }] };
    const request = validateRequest({
      model: 'm',
      state: 's',
      questions: { route: { type: 'choice', criteria: { a: 'x', c: null } } },
    });
    expect(untrainedParts(old, request).map((p) => p.option)).toEqual(['c']);
    expect(untrainedParts(null, request)).toEqual([]);
  });
});

describe('trainedForm', () => {
  it('asks the trained question as the training requests did, keeping the typed state', () => {
    const form = trainedForm(TRAINING, 'support-router', 'my parcel is late');
    const request = JSON.parse(formToRequestText(form));
    expect(request).toEqual({
      model: 'support-router',
      state: 'my parcel is late',
      questions: {
        route: {
          type: 'choice',
          instructions: 'Which team should handle this message?',
          criteria: { billing: 'Payments', abuse: 'Trust and safety', other: null },
        },
      },
    });
    expect(untrainedParts(TRAINING, validateRequest(request))).toEqual([]);
  });
});
