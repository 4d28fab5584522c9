/** The playground's starting request and its model sources. */
import type { FormState } from './request-form.js';

export const DEFAULT_PACKAGE = '/models/tiny/';

/** Said wherever the bundled model's answers are shown. */
export const TINY_WARNING = 'tiny random-weight model: its answers mean nothing';

export function isTinyFixture(packageUrl: string, model: string): boolean {
  return model === 'clef-tiny' || new URL(packageUrl, location.href).pathname === DEFAULT_PACKAGE;
}

export function exampleForm(model: string): FormState {
  return {
    model,
    stateMode: 'text',
    stateText:
      'Hi, my card was charged twice for order #4471 and support has not answered in a week. ' +
      'I need the money back before my rent is due on Friday.',
    questions: [
      {
        id: 'route',
        type: 'choice',
        instructions: 'Which team should handle this ticket?',
        options: [
          { name: 'billing', description: 'Payments, refunds, invoices' },
          { name: 'shipping', description: 'Parcels and delivery' },
          { name: 'account', description: 'Logins and settings' },
          { name: 'other', description: '' },
        ],
        levels: [],
        yes: '',
        no: '',
      },
      {
        id: 'urgent',
        type: 'noul',
        instructions: 'Does the customer need an answer today?',
        options: [],
        levels: [],
        yes: '',
        no: '',
      },
      {
        id: 'severity',
        type: 'score',
        instructions: 'How much harm does the problem cause the customer?',
        options: [],
        levels: ['none', 'an annoyance', 'costs money', 'urgent financial harm'],
        yes: '',
        no: '',
      },
    ],
  };
}
