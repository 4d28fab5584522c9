// `clef-web serve` answers clef-web's calibrated route like `clef.fetch` does: the System One
// body byte for byte beside the calibrated extension, for a package that ships a calibration
// (clef-nano); 501 calibration_unavailable for one that does not (the tiny fixture).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';
import { readFileSync } from 'node:fs';
import type { SystemOneRequest } from '../../../../src/protocol/types.js';
import {
  referenceCalibrated,
  type ReferenceTypeEntry,
} from '../../../support/calibration-reference.js';

/** clef-nano's fitted choice entry, read as plain JSON (not by src's parser). */
const choiceEntry = (
  JSON.parse(readFileSync('models/clef-nano/calibration.json', 'utf8')) as {
    types: { choice: ReferenceTypeEntry };
  }
).types.choice;

const REQUEST = {
  model: 'clef-nano',
  state: 'my card got declined at the grocery store even though I have money, why?',
  questions: {
    route: {
      type: 'choice',
      criteria: {
        card_declined: 'Asks why their card was declined.',
        report_fraud: 'Reports fraudulent charges.',
        none: null,
      },
    },
  },
};

let nano: NodeEngine;
let tinyEngine: NodeEngine;
let tiny: TinyPackage;
let nanoServer: RunningServer;
let tinyServer: RunningServer;

beforeAll(async () => {
  nano = await loadNodePackage('models/clef-nano', { threads: 1 });
  tiny = await buildTinyPackage('clef-serve-cal-');
  tinyEngine = await loadNodePackage(tiny.dir, { threads: 1 });
  nanoServer = await startServer(nodeEngineBackend(nano), { port: 0 });
  tinyServer = await startServer(nodeEngineBackend(tinyEngine), { port: 0 });
}, 120_000);

afterAll(async () => {
  await nanoServer?.close();
  await tinyServer?.close();
  await nano?.dispose();
  await tinyEngine?.dispose();
  tiny?.remove();
});

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('POST /v1/clef/calibrated on clef-web serve', () => {
  it('returns the System One body unchanged beside the calibrated extension', async () => {
    const plain = await (await post(`${nanoServer.url}/v1/systemone`, REQUEST)).text();
    const res = await post(`${nanoServer.url}/v1/clef/calibrated?abstain_below=0.99`, REQUEST);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith(`{"response":${plain},"calibrated":`)).toBe(true);
    const { calibrated } = JSON.parse(text);
    expect(calibrated.abstainBelow).toBe(0.99);
    const route = calibrated.questions[0];
    expect(route.id).toBe('route');
    expect(route.calibrated).toBe(true);
    // The set, probabilities and abstention against the test's own reference, on the logits
    // the engine computes for the same request.
    const { logits } = await nano.decide(REQUEST as SystemOneRequest);
    const want = referenceCalibrated(choiceEntry, logits[0]!, 0.99);
    expect(route.options).toEqual(Object.keys(REQUEST.questions.route.criteria).sort());
    route.probabilities.forEach((p: number, i: number) =>
      expect(p).toBeCloseTo(want.probabilities[i]!, 12),
    );
    expect(route.set).toEqual(want.set.map((i) => route.options[i]));
    expect(route.top).toBe(route.options[want.top]);
    expect(route.abstain).toBe(want.abstain);
  });

  it('answers 501 calibration_unavailable for a package without a calibration', async () => {
    const res = await post(`${tinyServer.url}/v1/clef/calibrated`, {
      ...REQUEST,
      model: TINY_MODEL,
    });
    expect(res.status).toBe(501);
    expect((await res.json()).detail.code).toBe('calibration_unavailable');
  });
});
