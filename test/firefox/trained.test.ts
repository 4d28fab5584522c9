/**
 * The packages `clef-web train` writes with the layers beyond the bag (tools/models/build-tiny.ts)
 * in Firefox ESR, on WASM and on the js device: the negation task's (the scope layer with its cues
 * left out, the flag layer's cue head, and the pointer) and the status task's (the pointer). Fresh
 * planted draws are answered with their label, and the logits are within 3e-4 of the float64
 * reference forward of the release each came from, as test/browser/trained.spec.ts checks in
 * Chromium (webgpu too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import { referenceDecide } from '../../src/build/reference/decide.js';
import { validateRequest } from '../../src/protocol/validate.js';
import type { DecisionWire } from '../../src/wire/wire.js';
import type { EngineInfo } from '../../src/wire/telemetry.js';
import {
  clauseExamples,
  clauseRequest,
  negationExamples,
  negationRequest,
  statusExamples,
  statusRequest,
  TRAINED_CLAUSE,
  TRAINED_NEGATION,
  TRAINED_STATUS,
} from '../../tools/train/planted.js';
import type { Outcome } from '../browser/support/engine.js';
import { must, TRAINED_LOGIT_TOLERANCE } from '../support/page-outcome.js';
import { seedLine, testSeed } from '../support/seed.js';
import { connectFirefox, openTestPage, type Firefox } from './support/firefox.js';

let firefox: Firefox;
let page: Page;

beforeAll(async () => {
  firefox = await connectFirefox();
  page = await firefox.newPage();
  await openTestPage(page, '/test/firefox/pages/firefox.html');
});
afterAll(async () => {
  await firefox?.close();
});

const PACKAGES = [
  {
    task: 'negation',
    trained: TRAINED_NEGATION,
    examples: negationExamples,
    request: negationRequest,
    question: 'kept',
  },
  {
    task: 'status',
    trained: TRAINED_STATUS,
    examples: statusExamples,
    request: statusRequest,
    question: 'fault',
  },
  {
    task: 'clause',
    trained: TRAINED_CLAUSE,
    examples: clauseExamples,
    request: clauseRequest,
    question: 'now',
  },
] as const;

describe('trained packages with the scope layer, the pointer and a clause weight in Firefox', () => {
  for (const { task, trained, examples, request, question } of PACKAGES)
    for (const device of ['wasm', 'js'] as const)
      it(`the ${task} package on ${device}: fresh draws, the float64 reference`, async () => {
        const name = `${task}-${device}`;
        const model = `/${trained.dir.replace(/^public\//, '')}/`;
        const info = must(
          (await page.evaluate(
            (n, m, d) => window.enginePage.load(n, { model: m, device: d, warmUp: false }),
            name,
            model,
            device,
          )) as Outcome<EngineInfo>,
          `createClef (${name})`,
        );
        expect(info.device).toBe(device);
        const seed = testSeed(`firefox trained ${name}`);
        const withSeed = seedLine(`firefox trained ${name}`, seed);
        const draws = examples(8, seed).map(({ state, label }) => ({
          request: request(state, info.model),
          label,
        }));
        const outs = (await page.evaluate(
          (n, r) => window.enginePage.decideAll(n, r),
          name,
          draws.map((d) => d.request),
        )) as Outcome<DecisionWire>[];
        let worst = 0;
        for (const [i, { request: asked, label }] of draws.entries()) {
          const got = must(outs[i] as Outcome<DecisionWire>, `decide on ${name}`);
          const choice = (got.response.answers[question] as { choice: string }).choice;
          expect(choice, `${withSeed}: ${asked.state}`).toBe(label);
          const want = (await referenceDecide(trained.release, validateRequest(asked)))
            .logits[0] as Float64Array;
          const logits = (got.logits as number[][])[0] as number[];
          expect(logits.length, withSeed).toBe(want.length);
          want.forEach((v, k) => (worst = Math.max(worst, Math.abs(v - (logits[k] as number)))));
        }
        console.log(
          `[firefox] trained ${name}: max |Δ logit| vs float64 ${worst.toExponential(2)}`,
        );
        expect(worst, withSeed).toBeLessThan(TRAINED_LOGIT_TOLERANCE);
        await page.evaluate((n) => window.enginePage.dispose(n), name);
      });
});
