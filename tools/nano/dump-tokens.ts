/**
 * Token ids for constructing clef-nano's initial weights (construct-init.py): every CLINC150
 * query of `train`, `oos_train`, `val`, `oos_val` as the prompt renders a string state, each
 * option's rendered semantics `{"option_id":"<intent>"}` (150 intents and `none`), and the
 * ids of the prompt's template text (headers, instructions, JSON keys of object states, noul
 * templates), which the construction treats as "not query words".
 *
 *   npx tsx tools/nano/dump-tokens.ts /tmp/nano     → /tmp/nano/tokens.json
 *
 * Reads no test split.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  ALLOWED_OPTIONS_HEADER,
  FIELD_END,
  NOUL_DEFAULT_FALSE,
  NOUL_DEFAULT_TRUE,
  OPTION_END,
  PROMPT_PREFIX,
  PROMPT_SUFFIX,
  SCHEMA_HEADER,
  fieldHeader,
  optionLabel,
  renderOptionSemantics,
} from '../../src/clef/prompt.js';
import { renderValue } from '../../src/protocol/render.js';
import { loadOrTrainTokenizer } from './make-data.js';
import {
  EVAL_INSTRUCTION,
  NONE_DESCRIPTION,
  NONE_OPTION,
  intentNames,
  readClinc,
} from './requests.js';

const workDir = resolve(process.argv[2] ?? '/tmp/nano');
const tokenizer = loadOrTrainTokenizer(workDir, 4000);
const data = readClinc();
const intents = intentNames(data);

const queries: Record<string, Array<{ gold: string; ids: number[] }>> = {};
for (const split of ['train', 'oos_train', 'val', 'oos_val'] as const) {
  queries[split] = data[split].map(([query, gold]) => ({
    gold,
    ids: tokenizer.encode(renderValue(query)),
  }));
}
const options: Record<string, number[]> = {};
for (const name of [...intents, NONE_OPTION]) {
  options[name] = tokenizer.encode(renderOptionSemantics(name, null));
}
const templateTexts = [
  PROMPT_PREFIX,
  PROMPT_SUFFIX,
  SCHEMA_HEADER,
  ALLOWED_OPTIONS_HEADER,
  OPTION_END,
  FIELD_END,
  NOUL_DEFAULT_TRUE,
  NOUL_DEFAULT_FALSE,
  NONE_DESCRIPTION,
  EVAL_INSTRUCTION,
  'Route this message to the team that handles it.',
  'What is the user asking for?',
  'Classify the request.',
  'Pick the intent of the message.',
  'Which of these best describes what the user wants?',
  'Is this message about ',
  'Does the user want ',
  'Does this describe the message: ',
  'Is the intent ',
  renderOptionSemantics('true', NOUL_DEFAULT_TRUE),
  renderOptionSemantics('false', NOUL_DEFAULT_FALSE),
  renderValue({ message: 'x' }),
  renderValue({ channel: 'chat', text: 'x' }),
  renderValue({ channel: 'voice', text: 'x' }),
  renderValue({ channel: 'email', text: 'x' }),
  renderValue({ user: { utterance: 'x' }, locale: 'en-US' }),
  renderValue({ conversation: [{ role: 'user', content: 'x' }] }),
  renderValue({ ticket: { id: 1234, body: 'x' } }),
];
for (const id of ['intent', 'route', 'topic', 'category', 'request_type', 'handler']) {
  templateTexts.push(fieldHeader(1, id, 'choice'), renderValue(id));
}
for (const id of ['is_about', 'matches', 'relevant', 'on_topic']) {
  templateTexts.push(fieldHeader(1, id, 'noul'), renderValue(id));
}
for (let i = 1; i <= 151; i++) templateTexts.push(optionLabel(i), fieldHeader(i, 'x', 'choice'));
const template = [...new Set(templateTexts.flatMap((t) => tokenizer.encode(t)))].sort(
  (a, b) => a - b,
);
for (const ids of Object.values(options)) template.push(...ids);

writeFileSync(
  join(workDir, 'tokens.json'),
  JSON.stringify({ vocab: tokenizer.vocabSize, intents, queries, options, template }),
);
process.stdout.write(`wrote ${join(workDir, 'tokens.json')}\n`);
