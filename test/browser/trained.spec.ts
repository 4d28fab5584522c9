/**
 * A package `clef-web train` wrote (the planted task, tools/models/build-tiny.ts) through the
 * browser engine on both devices: it says what it was trained on (info().training), answers fresh
 * planted draws right, and its logits match the float64 reference forward of the release it came
 * from (src/build/reference, in this Node process) within each device's fp32 tolerance. And
 * `<clef-decide>` on it: a request asking what it was not trained on is warned above the answers
 * (the decision's `untrained`), the trained question is not.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { referenceDecide } from '../../src/build/reference/decide.js';
import { validateRequest } from '../../src/protocol/validate.js';
import {
  clauseExamples,
  clauseRequest,
  negationExamples,
  negationRequest,
  plantedExamples,
  plantedRequest,
  PLANTED_OPTIONS,
  statusExamples,
  statusRequest,
  TRAINED_CLAUSE,
  TRAINED_NEGATION,
  TRAINED_PLANTED,
  TRAINED_STATUS,
} from '../../tools/train/planted.js';
import { TRAINED_LOGIT_TOLERANCE } from '../support/page-outcome.js';
import { seedLine, testSeed } from '../support/seed.js';
import {
  DEVICES,
  deviceTag,
  mustDecide,
  mustLoad,
  openPage,
  TOLERANCE,
  type Device,
} from './support/engine.js';

const MODEL = '/models/trained-planted/';
const RELEASE = TRAINED_PLANTED.release;

/**
 * Fresh draws through the loaded package on `device`: each answered with its label, and the
 * logits within the device's fp32 tolerance of the float64 reference forward of `release`.
 */
async function answersDraws(
  page: Page,
  handle: string,
  device: Device,
  release: string,
  question: string,
  draws: ReadonlyArray<{ request: { state: string }; label: string }>,
  withSeed: string,
): Promise<void> {
  // A trained model's logits round more in float32 than the tiny fixtures' (page-outcome.ts).
  const tolerance = Math.max(TOLERANCE[device].fp32.logit, TRAINED_LOGIT_TOLERANCE);
  let worst = 0;
  for (const { request, label } of draws) {
    const got = await mustDecide(page, handle, request);
    const choice = (got.response.answers[question] as { choice: string }).choice;
    expect(choice, `${withSeed}: ${request.state}`).toBe(label);
    const reference = await referenceDecide(release, validateRequest(request));
    const want = reference.logits[0] as Float64Array;
    const logits = (got.logits as number[][])[0] as number[];
    expect(logits.length, withSeed).toBe(want.length);
    want.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - (logits[i] as number)))));
  }
  console.log(`[trained] ${handle} ${device}: max |Δ logit| vs float64 ${worst.toExponential(2)}`);
  expect(worst, `${withSeed}: max |Δ logit| vs float64`).toBeLessThan(tolerance);
}

for (const device of DEVICES) {
  test(
    `a trained package on ${device}: its training, fresh planted draws, the float64 reference`,
    { tag: deviceTag(device) },
    async ({ page }) => {
      await openPage(page);
      const info = await mustLoad(page, 'trained', { model: MODEL, device, warmUp: false });
      expect(info.device).toBe(device);
      expect(info.training?.questions).toEqual([
        {
          id: 'route',
          type: 'choice',
          options: [...PLANTED_OPTIONS],
          instructions: 'Which team should handle this message?',
          descriptions: {
            abuse: ['Trust and safety'],
            billing: ['Payments'],
            other: [null],
            shipping: ['Parcels'],
          },
        },
      ]);
      const manifest = JSON.parse(readFileSync(join('public', MODEL, 'manifest.json'), 'utf8'));
      expect(info.model).toBe(manifest.model.name);

      const seed = testSeed(`trained.spec ${device} draws`);
      const draws = plantedExamples(8, seed).map(({ state, label }) => ({
        request: plantedRequest(state, info.model),
        label,
      }));
      const withSeed = seedLine(`trained.spec ${device} draws`, seed);
      await answersDraws(page, 'trained', device, RELEASE, 'route', draws, withSeed);
    },
  );
}

/** What `npm run models:tiny` wrote for a trained package: its release's config and its card. */
function built(trained: { dir: string; release: string }) {
  const config = JSON.parse(readFileSync(join(trained.release, 'config.json'), 'utf8')) as {
    text_config: { layer_types: string[]; linear_num_value_heads: number };
  };
  return {
    config: config.text_config,
    card: readFileSync(join(trained.dir, 'README.md'), 'utf8'),
  };
}

/**
 * Packages with the layers beyond the bag, each on its planted task, whose fresh draws a bag of
 * words answers at chance: a device that got such a layer wrong would fail them.
 */
const LAYERED = [
  {
    // The scope layer leaves negated words out of the pooling (a Gated DeltaNet layer with fixed
    // weights), and here the cue words too: the flag layer's fourth head, run on each device.
    layers: 'the scope layer',
    task: 'negation',
    trained: TRAINED_NEGATION,
    examples: negationExamples,
    request: negationRequest,
    question: 'kept',
    check: () => {
      const { config, card } = built(TRAINED_NEGATION);
      expect(config.linear_num_value_heads, 'the flag layer has its cue head').toBe(4);
      expect(card).toContain('the cues themselves left out too');
    },
  },
  {
    // The pointer carries the thing named before a status word ("the north is fine, the omega is
    // down"): a Gated DeltaNet layer after the scope layer whose keys and values read the token
    // before. The release must have it (flag, scope, pointer, pooling), and the card say so.
    layers: 'the pointer',
    task: 'status',
    trained: TRAINED_STATUS,
    examples: statusExamples,
    request: statusRequest,
    question: 'fault',
    check: () => {
      const { config, card } = built(TRAINED_STATUS);
      expect(config.layer_types, 'flag, scope, pointer, pooling').toHaveLength(4);
      expect(card).toContain('the pointer');
    },
  },
  {
    // The clause weight raises the words after the state's first break in the pooling: the flag
    // layer's clause head and a fourth component of the pooling's query and key.
    layers: 'a clause weight',
    task: 'clause',
    trained: TRAINED_CLAUSE,
    examples: clauseExamples,
    request: clauseRequest,
    question: 'now',
    check: () => {
      const { config, card } = built(TRAINED_CLAUSE);
      expect(config.linear_num_value_heads, 'the flag layer has its clause head').toBeGreaterThan(
        3,
      );
      expect(card).toContain('with the clause weight');
    },
  },
];

for (const { layers, task, trained, examples, request, question, check } of LAYERED)
  for (const device of DEVICES) {
    test(
      `a trained package with ${layers} on ${device}: fresh ${task} draws, the float64 reference`,
      { tag: deviceTag(device) },
      async ({ page }) => {
        check?.();
        const model = `/${trained.dir.replace(/^public\//, '')}/`;
        await openPage(page);
        const info = await mustLoad(page, task, { model, device, warmUp: false });
        expect(info.device).toBe(device);
        const seed = testSeed(`trained.spec ${device} ${task}`);
        const draws = examples(8, seed).map(({ state, label }) => ({
          request: request(state, info.model),
          label,
        }));
        const withSeed = seedLine(`trained.spec ${device} ${task}`, seed);
        await answersDraws(page, task, device, trained.release, question, draws, withSeed);
      },
    );
  }

test('<clef-decide> on a trained package warns when asked what it was not trained on', async ({
  page,
}) => {
  await page.goto('/test/browser/pages/element.html');
  const decided = (id: string) =>
    page.waitForFunction(
      (id) =>
        (window as any).events.some((e: any) => e.type === 'clef-decision' && e.target === id),
      id,
      { timeout: 90_000 },
    );
  const trained = plantedRequest('x').questions;
  const beyond = {
    route: { type: 'choice', criteria: { billing: 'Payments', sales: 'Quotes' } },
    urgent: { type: 'noul' },
  };
  await page.evaluate(
    ([model, trained, beyond]) => {
      for (const [id, questions] of [
        ['asks-trained', trained],
        ['asks-beyond', beyond],
      ] as const) {
        const el = document.createElement('clef-decide') as any;
        el.id = id;
        el.setAttribute('model', model);
        el.setAttribute('device', 'wasm');
        el.setAttribute('state', 'the courier left my parcel in the rain');
        el.questions = questions;
        document.querySelector('main')!.append(el);
      }
    },
    [MODEL, trained, beyond] as const,
  );
  await decided('asks-trained');
  await decided('asks-beyond');
  const detail = (id: string) =>
    page.evaluate(
      (id) =>
        (window as any).events.find((e: any) => e.type === 'clef-decision' && e.target === id)
          .detail,
      id,
    );
  expect((await detail('asks-trained')).untrained).toBeUndefined();
  expect((await detail('asks-beyond')).untrained.map((p: { kind: string }) => p.kind)).toEqual([
    'option',
    'question',
  ]);
  await expect(page.locator('#asks-trained').locator('[part=untrained]')).toHaveCount(0);
  const warning = page.locator('#asks-beyond').locator('[part=untrained]');
  await expect(warning).toContainText('option "sales" was not trained');
  await expect(warning).toContainText('question "urgent" was not trained');
});
