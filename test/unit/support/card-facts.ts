/** A model card's facts for tests of what the card says (card.ts modelCard): a small file, nothing kept. */
import type { CardFacts } from '../../../src/build/train/card.js';

export function cardFacts(
  over: {
    selection?: Partial<CardFacts['selection']>;
    baseline?: CardFacts['baseline'];
    heldOut?: CardFacts['heldOut'];
    repeats?: CardFacts['repeats'];
  } = {},
): CardFacts {
  return {
    name: 'shop',
    questions: [{ id: 'team', options: ['repair', 'returns'], counts: { repair: 5, returns: 5 } }],
    examples: { train: 10, heldOut: 0 },
    evaluatedOn: 'cross-fit',
    heldOut: over.heldOut ?? { questions: [] },
    baseline: over.baseline ?? { method: 'naive Bayes on word counts', questions: [] },
    selection: {
      method: 'cross-fit',
      folds: 5,
      scores: [],
      order: false,
      orderTried: false,
      scope: false,
      scopeTried: false,
      scopeCues: null,
      pointer: false,
      pointerTried: false,
      clauseWeight: null,
      clauseTried: false,
      ...over.selection,
      settings: { lambda: 0.1, normScale: 0.3, bias: 1 },
    },
    seed: 1,
    shape: { heads: 1, headDim: 8, vocab: 100, hidden: 40, classDims: 2 },
    calibration: null,
    calibrationSkipped: 'test',
    maxPackageDeltaP: 0,
    verified: 0,
    verifiedOn: 'onnxruntime-node',
    fidelityRequests: 0,
    releaseDir: '../shop-release',
    repeats: over.repeats ?? { repeated: 0, conflicts: [], conflictCount: 0, heldOutSeen: 0 },
    notes: null,
  };
}
