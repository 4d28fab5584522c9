/**
 * The suggested playground preset for clef-nano: a support message routed among eight CLINC150
 * intents (descriptions from intent-descriptions.json) plus `none`. No noul question: clef-nano's
 * noul answers stay near 0.5 (the fine-tuning did not teach them). Prints the body and the
 * package's answers through the Node engine, so the preset's behaviour is checked before it is
 * shown.
 *
 *   npx tsx tools/nano/preset.ts [--package models/clef-nano] [--body-only]
 */
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { NONE_DESCRIPTION, NONE_OPTION, readDescriptions, type RequestBody } from './requests.js';

const ROUTES = [
  'report_fraud',
  'card_declined',
  'transactions',
  'freeze_account',
  'report_lost_card',
  'replacement_card_duration',
  'pay_bill',
  'transfer',
];

export function presetBody(state: string): RequestBody {
  const descriptions = readDescriptions();
  const criteria: Record<string, string> = {};
  for (const name of ROUTES) criteria[name] = descriptions[name] as string;
  criteria[NONE_OPTION] = NONE_DESCRIPTION;
  return {
    model: 'clef-nano',
    state,
    questions: {
      route: {
        type: 'choice',
        instructions: 'Route this message to the team that handles it.',
        criteria,
      },
    },
  };
}

const STATES = [
  "There are two charges on my card from a shop I've never been to, I think someone stole my card number",
  'my card got declined at the grocery store even though I have money, why?',
  'I lost my wallet with my credit card in it yesterday',
  'how long until the new card you are sending me shows up',
  'can you move 200 dollars from checking into my savings account',
  'what is the weather going to be like in paris tomorrow',
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      package: { type: 'string', default: 'models/clef-nano' },
      'body-only': { type: 'boolean', default: false },
    },
  });
  process.stdout.write(JSON.stringify(presetBody(STATES[0] as string), null, 2) + '\n');
  if (values['body-only']) return;
  const engine = await loadNodePackage(values.package as string, { threads: 1 });
  try {
    for (const state of STATES) {
      const { response } = await engine.decide(presetBody(state));
      process.stdout.write(`\n${state}\n  ${JSON.stringify(response)}\n`);
    }
  } finally {
    await engine.dispose();
  }
}

void main();
