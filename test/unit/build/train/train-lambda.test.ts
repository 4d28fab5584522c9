/**
 * The penalty's grid: where its strongest λ (1) wins the cross-fit, `train` tries 10, then 100,
 * and keeps the strongest that still predicts better out of fold. The file is the project's
 * gate question (data/tasks/ops, 80 lines), on which λ = 1 wins the grid of 0.01, 0.1 and 1.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import {
  checkExamples,
  encodeExamples,
  prepareTokenizer,
} from '../../../../src/build/train/data.js';
import { fitPhase } from '../../../../src/build/train/fit.js';
import { LAMBDA_MAX } from '../../../../src/build/train/layer-settings.js';
import { CANDIDATES } from '../../../../src/build/train/select.js';
import { fitProgress, parseExamples } from '../../support/planted-fit.js';

const OPS = resolve(import.meta.dirname, '../../../../data/tasks/ops');

function gateFile(): string {
  const question = JSON.parse(readFileSync(`${OPS}/questions.json`, 'utf8')).gate;
  return readFileSync(`${OPS}/train.jsonl`, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { text: string; label: string; question: string })
    .filter((l) => l.question === 'gate')
    .map((l) =>
      JSON.stringify({
        request: { model: 'gate', state: l.text, questions: { gate: question } },
        labels: { gate: l.label },
      }),
    )
    .join('\n');
}

describe('the penalty grid', () => {
  it('goes past its strongest λ where that one wins, and keeps the best out of fold', async () => {
    const train = parseExamples(gateFile());
    const questions = checkExamples(train);
    const data = prepareTokenizer(train, 600);
    const encoded = encodeExamples(train, data, 4096, new Set(questions.map((q) => q.id)));
    const progress = fitProgress();
    const fitted = await fitPhase(
      data,
      questions,
      { examples: train, encoded },
      { examples: [], encoded: [] },
      // `off`: the plain model alone, whose λ is what this checks.
      { order: 'off', seed: 7, rmsEps: RMS_EPS, onFit: progress.onFit },
    );
    const { scores } = fitted.selection;
    const lambdas = scores.map((s) => s.settings.lambda);
    const grid = CANDIDATES.map((c) => c.lambda);
    expect(lambdas.slice(0, grid.length)).toEqual(grid);
    const strongest = Math.max(...grid);
    const [onGrid] = scores.slice(0, grid.length).sort((a, b) => a.logLoss - b.logLoss);
    // The premise: the grid's strongest λ wins on this file ...
    expect(onGrid?.settings.lambda).toBe(strongest);
    // ... so 10 was tried, and past it only while each step won.
    expect(lambdas.slice(grid.length)[0]).toBe(strongest * 10);
    expect(Math.max(...lambdas)).toBeLessThanOrEqual(LAMBDA_MAX);
    // The progress counted both stronger penalties from the first fit, and the layers `off`
    // leaves out never; it never raised the count, and ended at the fits made.
    expect(progress.grew()).toEqual([]);
    const made = progress.made(scores, fitted.selection.folds);
    const steps = Math.round(Math.log10(LAMBDA_MAX / strongest));
    expect(progress.calls[0]?.total).toBe((grid.length + steps) * 5 + 1);
    expect(progress.calls.at(-1)).toEqual({ done: made, total: made, settled: true });
    // Its fits left by kind add up to the total's, and none are left at the end.
    expect(progress.miscounted()).toEqual([]);
    expect(progress.finishedByKind()).toEqual(progress.madeByKind(fitted.selection));
    const best = [...scores].sort((a, b) => a.logLoss - b.logLoss)[0];
    expect(fitted.model.settings.lambda).toBe(best?.settings.lambda);
    for (let i = grid.length + 1; i < scores.length; i++) {
      expect((scores[i - 1] as { logLoss: number }).logLoss).toBeLessThan(
        (scores[i - 2] as { logLoss: number }).logLoss,
      );
    }
  });
});
