/**
 * The TypeScript half of the parity check (parity.py): encodes a few requests with the
 * project's prompt encoder and runs the float64 reference forward (src/node/reference) on the
 * release in <release-dir>, writing the encodings and probabilities as JSON.
 *
 *   npx tsx tools/nano/parity-ref.ts <release-dir> <out.json>
 */
import { writeFileSync } from 'node:fs';
import { referenceDecide, loadReferenceModel } from '../../src/node/reference/decide.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { Rng } from '../fixture/weights.js';
import { encodeLine } from './make-data.js';
import {
  fullChoiceRequest,
  intentNames,
  readClinc,
  readDescriptions,
  tenChoiceRequest,
  trainingRequest,
  type RequestBody,
} from './requests.js';

async function main(dir: string, out: string): Promise<void> {
  const data = readClinc();
  const intents = intentNames(data);
  const descriptions = readDescriptions();
  const rng = new Rng(42);
  const bodies: RequestBody[] = [];
  // Training-shaped requests (several questions, JSON states, descriptions), kept short.
  while (bodies.length < 6) {
    const [query, gold] = data.train[rng.int(data.train.length)] as [string, string];
    const { body } = trainingRequest(rng, query, gold, intents, descriptions);
    const options = Object.values(body.questions).reduce(
      (n: number, q) => n + Object.keys((q as { criteria?: object }).criteria ?? {}).length,
      0,
    );
    if (options <= 40) bodies.push(body);
  }
  const [q10, g10] = data.test[7] as [string, string];
  bodies.push(tenChoiceRequest(rng, q10, g10, intents));
  bodies.push({ ...fullChoiceRequest('what is my credit score', intents) });
  bodies.push({ model: 'clef-nano', state: 'hi', questions: { q: { type: 'noul' } } });

  const model = await loadReferenceModel(dir);
  const results = [];
  for (const body of bodies) {
    const decision = await referenceDecide(dir, validateRequest(body));
    const line = JSON.parse(encodeLine(model.tokenizer, body, {})) as object;
    results.push({ ...line, p: decision.probabilities.map((p) => Array.from(p)) });
    process.stdout.write(`request ${results.length}: ${decision.encoded.inputIds.length} tokens\n`);
  }
  writeFileSync(out, JSON.stringify(results));
}

const [dir, out] = process.argv.slice(2);
if (dir === undefined || out === undefined) {
  throw new Error('usage: parity-ref.ts <release-dir> <out.json>');
}
await main(dir, out);
