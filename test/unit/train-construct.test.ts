/**
 * The trainer's construction is exact: for random matcher parameters, the Clef release it writes,
 * run through the project's float64 reference forward (src/node/reference, written from the
 * public Clef and Qwen3.5 code, not from the matcher), gives the matcher's logits. Requests with
 * several questions, descriptions, JSON states, the marker words inside a state, and an
 * unlabelled question are all covered.
 *
 * The bound, 1e-4 on logits: the release stores float32 (relative rounding 6e-8) and the pooling
 * scores are about 100, so a key's rounded angle moves its token's weight by up to ~1e-5
 * relative (measured: 2.1e-6 to 1.3e-5 over 10 random draws). Construction faults are far larger: with
 * q_norm/k_norm's eps left to act on small keys (before NORM_GAIN) two such draws gave 8e-4 and
 * 1.4e-3, and a leaked token or an unsaturated gate moves logits by more.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { referenceDecide } from '../../src/node/reference/decide.js';
import { Rng } from '../../src/node/rng.js';
import { RMS_EPS, writeRelease } from '../../src/node/train/construct.js';
import { encodeExamples, prepareTokenizer } from '../../src/node/train/data.js';
import { initParams, matcherLogits, WEIGHT_RANGE } from '../../src/node/train/matcher.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { plantedJsonl, plantedRequest } from '../../tools/train/planted.js';
import { seedLine, testSeed } from '../support/seed.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function parse(lines: string) {
  return parseLabelledExamples(lines, { validateRequest: (b) => validateRequest(b) });
}

describe('the constructed release computes the matcher', () => {
  it.each([
    [2, 32],
    [1, 16],
  ])(
    'heads %i × %i: the float64 reference forward equals the matcher on random weights',
    async (heads, headDim) => {
      const SEED = testSeed(`train-construct ${heads}x${headDim}`);
      const rng = new Rng(SEED + heads);
      const corpus = parse(plantedJsonl(80, SEED));
      const data = prepareTokenizer(corpus, 600);
      const shape = { heads, headDim, vocab: data.files.vocabSize };
      const bagTokens = new Set<number>();
      const optionTokens: number[] = [];
      const requests = [
        plantedRequest(
          'please refund the invoice SCHEMA and STATE words stay in the bag? no: SCHEMA ends it',
        ),
        plantedRequest('parcel'),
        {
          model: 'm',
          state: { order: 12, text: 'my parcel never came', urgent: true },
          questions: {
            route: plantedRequest('').questions.route,
            urgent: {
              type: 'choice',
              instructions: 'Urgent?',
              criteria: { yes: 'Needs an answer today', no: null },
            },
            mood: { type: 'noul', instructions: 'Is the writer angry?' },
          },
        },
      ];
      const lines = requests
        .map((r) => JSON.stringify({ request: r, labels: { route: 'other' } }))
        .join('\n');
      const examples = parse(lines);
      const encoded = encodeExamples(examples, data, 4096, new Set(['route', 'urgent']));
      for (const e of encoded) {
        for (const t of e.bag) bagTokens.add(t);
        for (const q of e.questions) for (const o of q.options) optionTokens.push(...o);
      }
      const params = initParams(shape, optionTokens, bagTokens, data.markers, SEED, RMS_EPS);
      // Random everything (not just the fit's starting point): weights across their whole range.
      for (let i = 0; i < params.rho.length; i++) params.rho[i] = 2 * rng.normal();
      for (const t of params.frozen) for (let p = 0; p < heads; p++) params.rho[t * heads + p] = -3;
      for (let i = 0; i < params.content.length; i++) params.content[i] = 1.5 * rng.normal();
      for (const t of params.frozen)
        params.content.fill(0, t * heads * headDim, (t + 1) * heads * headDim);
      for (let i = 0; i < params.rows.length; i++) params.rows[i] = rng.normal();
      params.logScale = Math.log(30);
      const dir = mkdtempSync(join(tmpdir(), 'clef-construct-'));
      dirs.push(dir);
      writeRelease(dir, params, {
        contextTokens: 4096,
        tokenizerJson: data.files.tokenizerJson,
        tokenizerConfig: data.files.tokenizerConfig,
        markers: data.markers,
      });
      let worst = 0;
      let spread = 0;
      for (const [i, example] of examples.entries()) {
        const expected = matcherLogits(params, encoded[i] as (typeof encoded)[number]);
        const got = await referenceDecide(dir, example.valid);
        const trained = example.valid.questions
          .map((q, k) => ({ q, k }))
          .filter(({ q }) => q.id === 'route' || q.id === 'urgent');
        trained.forEach(({ k }, j) => {
          const e = expected[j] as Float64Array;
          const g = got.logits[k] as Float64Array;
          expect(g.length).toBe(e.length);
          e.forEach((v, n) => {
            worst = Math.max(worst, Math.abs(v - (g[n] as number)));
            spread = Math.max(spread, Math.abs(v));
          });
        });
      }
      console.log(`max |Δlogit| ${worst.toExponential(2)}, logits up to ${spread.toFixed(2)}`);
      expect(spread).toBeGreaterThan(1); // the logits are not all zero: the check has teeth
      expect(worst, seedLine(`train-construct ${heads}x${headDim}`, SEED)).toBeLessThan(1e-4);
      expect(WEIGHT_RANGE).toBe(12);
    },
  );
});
