/**
 * A trained model's result for tests of what `train` says about it (the CLI's lines, the Train
 * panel): one question `route`, the model's and the two baselines' accuracies as given; the
 * regression not fitted where its accuracy is null; `notes` what it says about the file.
 */
import type { TrainResult } from '../../../src/build/train/options.js';

export function trainResult(
  model: number,
  naiveBayes: number,
  logistic: number | null,
  notes: string[] = [],
): TrainResult {
  const verdict = model >= naiveBayes + 0.03 ? 'earned' : model >= naiveBayes ? 'level' : 'worse';
  return {
    name: 'shop',
    examples: { train: 100, heldOut: 0 },
    evaluatedOn: 'cross-fit',
    maxPackageDeltaP: 1e-5,
    verified: 100,
    calibrated: true,
    repeats: { repeated: notes.length, conflicts: [], conflictCount: 0, heldOutSeen: 0 },
    notes,
    timingsMs: { fit: 1000 },
    heldOut: {
      questions: [{ id: 'route', answered: 100, accuracy: model, recall: {}, confusions: [] }],
    },
    baseline: {
      method: 'naive Bayes on word counts',
      questions: [
        {
          id: 'route',
          answered: 100,
          accuracy: naiveBayes,
          verdict,
          disagreements: { modelOnly: 12, baselineOnly: 2, p: 0.013 },
          logistic:
            logistic === null
              ? null
              : {
                  accuracy: logistic,
                  c: 1,
                  verdict: model >= logistic ? 'level-or-ahead' : 'behind',
                  disagreements: { modelOnly: 3, baselineOnly: 8, p: 0.227 },
                },
        },
      ],
      ...(logistic === null
        ? { logisticSkipped: 'not fitted: `route` would have 1,147,432 weights' }
        : {}),
    },
  } as unknown as TrainResult;
}
