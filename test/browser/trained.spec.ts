/**
 * A package `clef-web train` wrote (the planted task, tools/models/build-tiny.ts) through the
 * browser engine on both devices: it says what it was trained on (info().training), answers fresh
 * planted draws right, and its logits match the float64 reference forward of the release it came
 * from (src/node/reference, in this Node process) within each device's fp32 tolerance.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { referenceDecide } from '../../src/node/reference/decide.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { plantedExamples, plantedRequest, PLANTED_OPTIONS } from '../../tools/train/planted.js';
import { seedLine, testSeed } from '../support/seed.js';
import { DEVICES, deviceTag, mustDecide, mustLoad, openPage, TOLERANCE } from './engine-helpers.js';

const MODEL = '/models/trained-planted/';
const RELEASE = join('.cache', 'trained-planted-release');

for (const device of DEVICES) {
  test(
    `a trained package on ${device}: its training, fresh planted draws, the float64 reference`,
    { tag: deviceTag(device) },
    async ({ page }) => {
      await openPage(page);
      const info = await mustLoad(page, 'trained', { model: MODEL, device, warmUp: false });
      expect(info.device).toBe(device);
      expect(info.training?.questions).toEqual([
        { id: 'route', type: 'choice', options: [...PLANTED_OPTIONS] },
      ]);
      const manifest = JSON.parse(readFileSync(join('public', MODEL, 'manifest.json'), 'utf8'));
      expect(info.model).toBe(manifest.model.name);

      const seed = testSeed(`trained.spec ${device} draws`);
      const withSeed = seedLine(`trained.spec ${device} draws`, seed);
      const tolerance = TOLERANCE[device].fp32.logit;
      let worst = 0;
      for (const { state, label } of plantedExamples(8, seed)) {
        const request = plantedRequest(state, info.model);
        const got = await mustDecide(page, 'trained', request);
        const choice = (got.response.answers.route as { choice: string }).choice;
        expect(choice, withSeed).toBe(label);
        const reference = await referenceDecide(RELEASE, validateRequest(request));
        const want = reference.logits[0] as Float64Array;
        const logits = (got.logits as number[][])[0] as number[];
        expect(logits.length, withSeed).toBe(want.length);
        want.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - (logits[i] as number)))));
      }
      console.log(`[trained] ${device}: max |Δ logit| vs float64 ${worst.toExponential(2)}`);
      expect(worst, `${withSeed}: max |Δ logit| vs float64`).toBeLessThan(tolerance);
    },
  );
}
