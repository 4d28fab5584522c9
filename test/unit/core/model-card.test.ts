// The one model-card builder (src/core/model-card.ts) and the Node server's use of it: one card
// per name a request may use, the package's name first, each naming the model, its dtype and
// where it runs, with the release date; the text is what GET /v1/models has always answered.
import { describe, expect, it } from 'vitest';
import { modelCards } from '../../../src/core/model-card.js';
import type { NodeEngine } from '../../../src/node/engine.js';
import { nodeModelCards } from '../../../src/node/serve/model-cards.js';

describe('modelCards', () => {
  it('gives one card per name, in order, each with the model, dtype, place and date', () => {
    const cards = modelCards({
      names: ['clef-nano', 'nano', 'n'],
      model: 'clef-nano',
      dtype: 'int8',
      releaseDate: '2025-03-04',
      where: 'running in this browser on webgpu',
    });
    expect(cards).toEqual(
      ['clef-nano', 'nano', 'n'].map((name) => ({
        name,
        description: 'clef-nano (int8) running in this browser on webgpu',
        release_date: '2025-03-04',
      })),
    );
  });

  it('gives no card when there is no name', () => {
    const facts = { names: [], model: 'm', dtype: 'fp16', releaseDate: '2025-01-01', where: 'x' };
    expect(modelCards(facts)).toEqual([]);
  });
});

describe('nodeModelCards', () => {
  const engine = (runtime: NodeEngine['runtime']) =>
    ({
      manifest: { model: { name: 'tiny', releaseDate: '2024-12-31' }, variant: { dtype: 'q4' } },
      models: ['tiny', 'tiny-alias'],
      runtime,
    }) as unknown as NodeEngine;

  it('names the runtime that answers: onnxruntime-node or the js device', () => {
    expect(nodeModelCards(engine('onnxruntime-node'))).toEqual([
      {
        name: 'tiny',
        description: 'tiny (q4) served by clef-web on onnxruntime-node',
        release_date: '2024-12-31',
      },
      {
        name: 'tiny-alias',
        description: 'tiny (q4) served by clef-web on onnxruntime-node',
        release_date: '2024-12-31',
      },
    ]);
    expect(nodeModelCards(engine('js')).map((c) => c.description)).toEqual([
      'tiny (q4) served by clef-web on the js device',
      'tiny (q4) served by clef-web on the js device',
    ]);
  });
});
