// `clef-web serve` answers clef-web's calibrated route like `clef.fetch` does: the System One
// body byte for byte beside the calibrated extension, for a package that ships a calibration
// (clef-nano); 501 calibration_unavailable for one that does not (the tiny fixture).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../src/node/engine.js';
import { nodeEngineBackend, startServer, type RunningServer } from '../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from './support/tiny-package.js';

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
    expect(route.set.length).toBeGreaterThanOrEqual(1);
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
