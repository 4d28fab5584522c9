/**
 * The trainer's hand-written gradients (gradients.ts, pair-backward.ts) against central differences
 * of its loss, at fresh random parameters of a model with the order layer: every parameter array
 * the fit moves (token content θ, pooling ρ, option rows, the order layer's embeddings and weights)
 * and the bias weight. A sign or index slip in a backward pass shows as a relative error near 1;
 * float64 central differences with h = 1e-6 agree with a right gradient to about 1e-5 (measured:
 * the console line), so the bound is 1e-4 on the relative error of each checked entry, or ABS
 * absolute where an entry's gradient is itself below ~1e-4 (the differences' own rounding and
 * truncation: 2.3e-8 measured on an entry of 3.8e-5, seed 953605).
 */
import { describe, expect, it } from 'vitest';
import { parseLabelledExamples } from '../../../../src/calibrate/examples.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import {
  checkExamples,
  encodeExamples,
  prepareTokenizer,
} from '../../../../src/build/train/data.js';
import { learnerSetup } from '../../../../src/build/train/fit.js';
import { fitModel } from '../../../../src/build/train/learner.js';
import { accumulate, zeroGradients } from '../../../../src/build/train/gradients.js';
import { DEFAULT_PAIR_SHAPE } from '../../../../src/build/train/pairs.js';
import { pointerShape } from '../../../../src/build/train/pointer.js';
import { SCOPE_WORDS } from '../../../../src/build/train/scope.js';
import type { LayerChoice } from '../../../../src/build/train/learner-setup.js';
import { DEFAULT_SETTINGS } from '../../../../src/build/train/select.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { orderJsonl } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';

const ABS = 1e-7;

describe("the trainer's gradients", () => {
  it.each(['order', 'pointer', 'pointer+clause'] as const)(
    'equal central differences of the loss at random parameters, the %s layer included',
    async (kind) => {
      const SEED = testSeed(`train-gradient-${kind}`);
      const rng = new Rng(SEED);
      // For the pointer, breaks that empty its memory and negations whose words it never stores.
      const lines = orderJsonl(24, SEED)
        .trim()
        .split('\n')
        .map((line) => {
          if (kind === 'order') return line;
          const r = JSON.parse(line) as { request: { state: string } };
          r.request.state = r.request.state
            .replace(/ (this|again|question) /, ', $1 ')
            .replace(/ (some|help|the) /, ' not $1 ');
          return JSON.stringify(r);
        });
      const examples = parseLabelledExamples(lines.join('\n'), {
        validateRequest: (b) => validateRequest(b),
      });
      const questions = checkExamples(examples);
      const data = prepareTokenizer(examples, 512, kind === 'order' ? [] : SCOPE_WORDS);
      const encoded = encodeExamples(examples, data, 4096, new Set(questions.map((q) => q.id)));
      const setupWith = (layer: LayerChoice) =>
        learnerSetup(
          data,
          questions,
          [{ examples, encoded }],
          { rmsEps: RMS_EPS, normDims: 8 },
          layer,
        );
      // The pointer's values read the class dims: its shape follows from their count.
      const setup = setupWith(
        kind === 'order'
          ? DEFAULT_PAIR_SHAPE
          : {
              cues: 'every',
              pairs: pointerShape(setupWith(null).classWidth),
              // The words after a break weigh more in the pooling (model.ts clauseWeight).
              ...(kind === 'pointer+clause' ? { clauseWeight: 1 } : {}),
            },
      );
      // Two iterations give parameters of the right shapes; then every array is jittered.
      const { params } = await fitModel(setup, encoded, {
        settings: { ...DEFAULT_SETTINGS, pairLambda: 1 },
        maxIterations: 2,
      });
      const pairs = params.pairs;
      const emb = params.emb;
      if (pairs === undefined || emb === undefined) throw new Error('no order layer was set up');
      const jitter = (a: Float64Array, s: number) => {
        for (let i = 0; i < a.length; i++) a[i] = (a[i] as number) + s * rng.normal();
      };
      jitter(params.theta, 0.3);
      jitter(params.rows, 0.3);
      jitter(params.rho, 0.3);
      jitter(emb, 0.5);
      // The pointer's u and wo are fixed; its gradient through them is checked all the same.
      for (const k of ['u', 'z', 'zBias', 'b', 'bBias'] as const) jitter(pairs[k], 0.5);
      jitter(pairs.wo, 0.3);
      params.logBias = 0.3;

      const loss = () => accumulate(params, encoded, zeroGradients(params), 1).loss;
      const grads = zeroGradients(params);
      accumulate(params, encoded, grads, 1);
      const gp = grads.pairs;
      const ge = grads.emb;
      if (gp === undefined || ge === undefined) throw new Error('no order layer gradients');
      const arrays: Array<[string, Float64Array, Float64Array]> = [
        ['theta', params.theta, grads.theta],
        ['rows', params.rows, grads.rows],
        ['rho', params.rho, grads.rho],
        ['emb', emb, ge],
        // The pointer's writes are fixed (pointer.ts): it has no b, bBias of its own.
        ...(kind === 'order'
          ? (['u', 'z', 'zBias', 'b', 'bBias', 'wo'] as const)
          : (['u', 'z', 'zBias', 'wo'] as const)
        ).map((k) => [`pairs.${k}`, pairs[k], gp[k]] as [string, Float64Array, Float64Array]),
      ];
      // The central difference at h = 1e-6, and where it disagrees at 1e-5: at 1e-6 the loss's
      // rounding (about 1e-13) can move an estimate by 1e-7, as much as a small gradient's
      // tolerance; a wrong gradient disagrees at both steps.
      const rel = (numeric: number, analytic: number) =>
        Math.abs(numeric - analytic) / Math.max(1e-6, Math.abs(numeric) + Math.abs(analytic));
      const agrees = (numeric: number, analytic: number) =>
        rel(numeric, analytic) <= 1e-4 || Math.abs(numeric - analytic) <= ABS;
      const central = (set: (v: number) => void, at: number, h: number) => {
        set(at + h);
        const up = loss();
        set(at - h);
        const down = loss();
        set(at);
        return (up - down) / (2 * h);
      };
      /** The estimate at 1e-6, or at 1e-5 where that one agrees and the first does not. */
      const numericOf = (set: (v: number) => void, at: number, analytic: number) => {
        const fine = central(set, at, 1e-6);
        if (agrees(fine, analytic)) return fine;
        const coarse = central(set, at, 1e-5);
        return agrees(coarse, analytic) ? coarse : fine;
      };
      const errors: string[] = [];
      let worst = 0;
      let checked = 0;
      for (const [name, values, gradient] of arrays) {
        // Up to 12 entries per array, drawn among those with a gradient that is not negligible.
        const live = [...gradient.keys()].filter((i) => Math.abs(gradient[i] as number) > 1e-5);
        expect(live.length, `${name}: no entry with a gradient`).toBeGreaterThan(0);
        for (let n = 0; n < Math.min(12, live.length); n++) {
          const i = live[rng.int(live.length)] as number;
          const analytic = gradient[i] as number;
          const numeric = numericOf((v) => (values[i] = v), values[i] as number, analytic);
          worst = Math.max(worst, rel(numeric, analytic));
          checked++;
          if (!agrees(numeric, analytic))
            errors.push(`${name}[${i}]: analytic ${analytic}, numeric ${numeric}`);
        }
      }
      const numeric = numericOf((v) => (params.logBias = v), params.logBias, grads.logBias);
      worst = Math.max(worst, rel(numeric, grads.logBias));
      if (!agrees(numeric, grads.logBias))
        errors.push(`logBias: analytic ${grads.logBias}, numeric ${numeric}`);
      console.log(
        `[train-gradient ${kind}] ${checked + 1} entries, worst relative error ${worst.toExponential(2)}`,
      );
      expect(errors, seedLine(`train-gradient-${kind}`, SEED)).toEqual([]);
    },
  );
});
