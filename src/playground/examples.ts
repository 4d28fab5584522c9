/** The playground's example requests and its model sources. */
import { BUNDLED_MODEL_PATH } from '../wire/assets.js';
import type { FormState } from './request-form.js';

/** The bundled model: clef-nano (made by `clef-web train` on CLINC150; card in its folder). */
export const DEFAULT_PACKAGE = BUNDLED_MODEL_PATH;
export const DEFAULT_PACKAGE_NOTE =
  'clef-nano, a small model trained to route messages among the CLINC150 intents';

/** What clef-nano can and cannot answer (its model card says more). */
export const NANO_NOTE =
  'clef-nano answers choice questions whose option ids are CLINC150 intent names (plus none); ' +
  'its yes/no and score answers mean nothing';

/** The random-weight test fixture (`npm run models:tiny`), for development. */
const TINY_PACKAGE = '/models/tiny/';

/** Said wherever the tiny fixture's answers are shown. */
export const TINY_WARNING = 'tiny random-weight model: its answers mean nothing';

export function isTinyFixture(packageUrl: string, model: string): boolean {
  return model === 'clef-tiny' || new URL(packageUrl, location.href).pathname === TINY_PACKAGE;
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

/**
 * A support message routed among eight CLINC150 intents plus `none` (out of scope), the kind of
 * request clef-nano was trained on; the descriptions are tools/train/intent-descriptions.json's,
 * which its training requests use too.
 */
export function clincRoutingForm(model: string): FormState {
  const intents: Array<[string, string]> = [
    ['report_fraud', 'Reports fraudulent charges.'],
    ['card_declined', 'Asks why their card was declined.'],
    ['transactions', 'Asks for recent transactions.'],
    ['freeze_account', 'Wants to freeze a bank account.'],
    ['report_lost_card', 'Reports a lost or stolen card.'],
    ['replacement_card_duration', 'Asks how long a replacement card takes to arrive.'],
    ['pay_bill', 'Wants to pay a bill.'],
    ['transfer', 'Wants to move money between accounts.'],
    ['none', 'The message matches none of the other options.'],
  ];
  return {
    model,
    stateMode: 'text',
    stateText:
      "There are two charges on my card from a shop I've never been to, I think someone stole " +
      'my card number',
    questions: [
      {
        id: 'route',
        type: 'choice',
        instructions: 'Route this message to the team that handles it.',
        options: intents.map(([name, description]) => ({ name, description })),
        levels: [],
        yes: '',
        no: '',
      },
    ],
  };
}

/** The examples the request editor offers, first the one a fresh page starts with. */
export const PRESETS: ReadonlyArray<{ id: string; label: string; form(model: string): FormState }> =
  [
    { id: 'clinc', label: 'Route among CLINC150 intents', form: clincRoutingForm },
    { id: 'triage', label: 'Ticket triage (three question types)', form: exampleForm },
  ];
