// The committed clef-nano package (models/clef-nano): it loads and verifies, and
// routes plain support messages to the CLINC150 intent a person would pick (labels written by
// hand here, not taken from the model), with `none` for an out-of-scope question. A smoke check
// of the shipped artefact; the model card's figures come from tools/bench/train-clinc.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { parseRequestJson } from '../../../src/protocol/json.js';

const INTENTS: Record<string, string> = {
  report_fraud: 'Reports fraudulent charges.',
  card_declined: 'Asks why their card was declined.',
  transactions: 'Asks for recent transactions.',
  freeze_account: 'Wants to freeze a bank account.',
  report_lost_card: 'Reports a lost or stolen card.',
  replacement_card_duration: 'Asks how long a replacement card takes to arrive.',
  pay_bill: 'Wants to pay a bill.',
  transfer: 'Wants to move money between accounts.',
  none: 'The message matches none of the other options.',
};

const CASES: Array<[string, string]> = [
  [
    "There are two charges on my card from a shop I've never been to, I think someone stole my card number",
    'report_fraud',
  ],
  ['my card got declined at the grocery store even though I have money, why?', 'card_declined'],
  ['how long until the new card you are sending me shows up', 'replacement_card_duration'],
  ['can you move 200 dollars from checking into my savings account', 'transfer'],
  ['what is the weather going to be like in paris tomorrow', 'none'],
];

let engine: NodeEngine;

beforeAll(async () => {
  engine = await loadNodePackage('models/clef-nano', { threads: 1 });
}, 60_000);

afterAll(async () => {
  await engine?.dispose();
});

describe('the bundled clef-nano package', () => {
  it('is named clef-nano and routes support messages among CLINC150 intents', async () => {
    const got: string[] = [];
    for (const [state] of CASES) {
      const body = parseRequestJson(
        JSON.stringify({
          model: 'clef-nano',
          state,
          questions: {
            route: {
              type: 'choice',
              instructions: 'Route this message to the team that handles it.',
              criteria: INTENTS,
            },
          },
        }),
      );
      const d = await engine.decide(body);
      expect(d.response.model).toBe('clef-nano');
      const route = d.response.answers.route as { choice: string; confidence: number };
      got.push(route.choice);
    }
    expect(got).toEqual(CASES.map(([, intent]) => intent));
  });
});
