/**
 * The trainer's construction is exact: for random model parameters, the Clef release it writes,
 * run through the project's float64 reference forward (src/build/reference, written from the
 * public Clef and Qwen3.5 code, not from the trainer's model), gives the model's logits. Requests
 * with several questions, descriptions, JSON states, the marker words inside a state, and an
 * unlabelled question are all covered.
 *
 * The bound, 5e-6 of the largest logit: the release stores float32 (relative rounding 6e-8) and
 * the pooling scores are about 140, so a key's rounded norm moves its token's weight by up to
 * ~1e-5 relative, and the logits by that share of their size. Measured (the console line): up to
 * 1.7e-6 of the largest logit on 21 seeds of the plain case at a flag gain of 100 (1.03e-4 at
 * logits up to 64, which an absolute bound of 1e-4 failed), up to 1.2e-6 over the four cases on
 * seeds 1-6 at today's 140. With logits up to ~75 the bound stays under 4e-4, while
 * construction faults are far larger: a dim read from the wrong place, a leaked template token
 * or an unsaturated gate moves logits by 1e-2 or more.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLabelledExamples } from '../../../../src/calibrate/examples.js';
import { referenceDecide } from '../../../../src/build/reference/decide.js';
import { matVec, rmsNorm } from '../../../../src/build/reference/math.js';
import { layerTensorName, openRelease, TEXT_PREFIX } from '../../../../src/build/release.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import { RMS_EPS, writeRelease } from '../../../../src/build/train/construct.js';
import { encodeExamples, prepareTokenizer } from '../../../../src/build/train/data.js';
import { fitModel } from '../../../../src/build/train/learner.js';
import { classDims, setupLearner } from '../../../../src/build/train/learner-setup.js';
import { hiddenLayout, WEIGHT_RANGE } from '../../../../src/build/train/model.js';
import { modelLogits } from '../../../../src/build/train/readout.js';
import { DEFAULT_PAIR_SHAPE } from '../../../../src/build/train/pairs.js';
import { pointerShape } from '../../../../src/build/train/pointer.js';
import { SCOPE_LEFT_OUT, SCOPE_WORDS } from '../../../../src/build/train/scope.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { plantedJsonl, plantedRequest } from '../../../../tools/train/planted.js';
import { seedLine, testSeed } from '../../../support/seed.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function parse(lines: string) {
  return parseLabelledExamples(lines, { validateRequest: (b) => validateRequest(b) });
}

/**
 * How far below the lowest pooling score of a token in the bag (flag 1) the highest score of a
 * token outside it (flag 0 before the state, −1 after) lies, over every vocabulary row, in head 0
 * (construct.ts writes every head alike), from the release's own weights (the pooling layer's input norm, k_proj, q_proj, q_norm and k_norm, by
 * the reference's RMSNorm). Past ln(2^149) = 103.3 a float32 softmax gives those tokens exactly 0;
 * short of it they come out subnormal, which x86 multiplies ~100 times slower (at a flag gain of
 * 100 the pooling's product over the keys was the slowest kernel of a 151-option decision).
 */
function poolingGap(dir: string, layout: { pad: number; flag: number }): number {
  const release = openRelease(dir);
  try {
    const c = release.text;
    const pool = c.layer_types.length - 1;
    const D = c.hidden_size;
    const hd = c.head_dim;
    const get = (suffix: string) => release.read64(layerTensorName(pool, suffix));
    const embed = release.read64(`${TEXT_PREFIX}embed_tokens.weight`);
    const [norm, kProj, qProj] = [
      'input_layernorm.weight',
      'self_attn.k_proj.weight',
      'self_attn.q_proj.weight',
    ].map(get) as [Float64Array, Float64Array, Float64Array];
    const [qNorm, kNorm] = ['self_attn.q_norm.weight', 'self_attn.k_norm.weight'].map(get) as [
      Float64Array,
      Float64Array,
    ];
    const input = (t: number, flag: number): Float64Array => {
      const x = embed.slice(t * D, (t + 1) * D);
      x[layout.pad] = 0; // the flag layer erases it
      x[layout.flag] = flag;
      return rmsNorm(x, norm, c.rms_norm_eps);
    };
    const q = rmsNorm(matVec(qProj.subarray(0, hd * D), input(0, -1), hd), qNorm, c.rms_norm_eps);
    const score = (t: number, flag: number): number => {
      const k = rmsNorm(
        matVec(kProj.subarray(0, hd * D), input(t, flag), hd),
        kNorm,
        c.rms_norm_eps,
      );
      return k.reduce((s, v, j) => s + v * (q[j] as number), 0) / Math.sqrt(hd);
    };
    let bag = Infinity;
    let outside = -Infinity;
    for (let t = 0; t < embed.length / D; t++) {
      bag = Math.min(bag, score(t, 1));
      outside = Math.max(outside, score(t, 0), score(t, -1));
    }
    return bag - outside;
  } finally {
    release.close();
  }
}

describe('the constructed release computes the model', () => {
  it.each([
    [0, 'none'],
    [8, 'none'],
    [8, 'order'],
    [8, 'scope'],
    [8, 'scope+pointer'],
    [8, 'scope-bare'],
    [8, 'scope-bare+pointer'],
    [8, 'scope+clause'],
    [8, 'scope-bare+pointer+clause'],
  ] as const)(
    'norm dims %i, layer %s: the float64 reference forward equals the model on random weights',
    async (normDims, layer) => {
      const SEED = testSeed(`train-construct ${normDims} ${layer}`);
      const rng = new Rng(SEED + normDims);
      const corpus = parse(plantedJsonl(80, SEED));
      const scoped = layer !== 'none' && layer !== 'order';
      const bare = layer.startsWith('scope-bare');
      const pointed = layer.includes('+pointer');
      // The clause weight (model.ts ModelShape.clauseWeight), drawn across the range fit.ts tries.
      const clauseWeight = layer.endsWith('+clause') ? 0.25 + 1.75 * rng.uniform() : undefined;
      const data = prepareTokenizer(corpus, 600, scoped ? SCOPE_WORDS : []);
      const requests = [
        plantedRequest(
          'please refund the invoice SCHEMA and STATE words stay in the bag? no: SCHEMA ends it',
        ),
        plantedRequest('parcel'),
        {
          model: 'm',
          state: { order: 12, text: 'my parcel never came', urgent: true },
          questions: {
            route: plantedRequest('').questions.route,
            urgent: {
              type: 'choice',
              // Where cues leave the bag, a cue in a question's words (after the state) reads
              // flag −3 at the head's positions (model.ts CUE_FLAG_NORM).
              instructions: bare ? 'Urgent, or not?' : 'Urgent?',
              criteria: { yes: 'Needs an answer today', no: null },
            },
            mood: { type: 'noul', instructions: 'Is the writer angry?' },
          },
        },
      ];
      // Negation scopes (the scope layer leaves their words out), opened and closed twice, and
      // cues the tokenizer finds inside longer words ("notify", "north"), which open none.
      if (scoped)
        requests.splice(
          2,
          0,
          plantedRequest(
            "please don't refund the invoice, the parcel never came but I want a refund without delay",
          ),
          plantedRequest('notify the north desk normally and note the refund'),
        );
      const lines = requests
        .map((r) => JSON.stringify({ request: r, labels: { route: 'other' } }))
        .join('\n');
      const examples = parse(lines);
      const trained = ['route', 'urgent'];
      const encoded = encodeExamples(examples, data, 4096, new Set(trained));
      const optionIds = [
        Object.keys(plantedRequest('').questions.route.criteria).sort(),
        ['no', 'yes'],
      ];
      const { dimOf, width } = classDims(optionIds);
      const spans: Array<{ tokens: Int32Array; dim: number }> = [];
      const seen = new Set<Int32Array>();
      examples.forEach((example, i) => {
        const asked = example.valid.questions.filter((q) => trained.includes(q.id));
        asked.forEach((q, j) => {
          const k = trained.indexOf(q.id);
          const ids = [...(optionIds[k] as string[])];
          encoded[i]!.questions[j]!.options.forEach((tokens, o) => {
            if (seen.has(tokens)) return;
            seen.add(tokens);
            spans.push({ tokens, dim: dimOf.get(`${k}\u0000${ids[o]}`) as number });
          });
        });
      });
      const setup = setupLearner(
        data.tokenizer,
        data.files.vocabSize,
        data.markers,
        data.template,
        width,
        spans,
        RMS_EPS,
        normDims,
        layer === 'order'
          ? DEFAULT_PAIR_SHAPE
          : scoped
            ? {
                cues: bare ? 'every-bare' : 'every',
                ...(pointed ? { pairs: pointerShape(width) } : {}),
                ...(clauseWeight === undefined ? {} : { clauseWeight }),
              }
            : null,
      );
      const fitted = await fitModel(setup, encoded, {
        settings: { lambda: 0.1, normScale: 0.5, bias: 1 },
        maxIterations: 1,
      });
      const params = fitted.params;
      // Random everything (not just the fit's starting point): weights across their whole range.
      for (let i = 0; i < params.rho.length; i++) params.rho[i] = 2 * rng.normal();
      for (const t of setup.frozen) params.rho[t] = -3;
      // Cues weigh much in the pooling where the bag keeps them, so leaving them out shows.
      if (bare)
        params.scope?.forEach((mark, t) => {
          if ((mark & SCOPE_LEFT_OUT) !== 0) params.rho[t] = 2;
        });
      for (let i = 0; i < params.theta.length; i++) params.theta[i] = 1.5 * rng.normal();
      const stride = params.theta.length / params.shape.vocab;
      for (const t of setup.frozen) params.theta.fill(0, t * stride, (t + 1) * stride);
      for (let i = 0; i < params.rows.length; i++) params.rows[i] = rng.normal();
      params.logBias = rng.normal();
      if (params.pairs !== undefined && params.emb !== undefined) {
        // Pair embeddings, projections and out_proj across their range; frozen tokens have none.
        const m = params.pairs.shape.m;
        for (let i = 0; i < params.emb.length; i++) params.emb[i] = rng.normal();
        for (const t of setup.frozen) params.emb.fill(0, t * m, (t + 1) * m);
        for (const a of [params.pairs.u, params.pairs.z, params.pairs.b, params.pairs.wo])
          for (let i = 0; i < a.length; i++) a[i] = rng.normal();
        for (const a of [params.pairs.zBias, params.pairs.bBias])
          for (let i = 0; i < a.length; i++) a[i] = 2 * rng.normal();
      }
      const dir = mkdtempSync(join(tmpdir(), 'clef-construct-'));
      dirs.push(dir);
      writeRelease(dir, params, {
        contextTokens: 4096,
        tokenizerJson: data.files.tokenizerJson,
        tokenizerConfig: data.files.tokenizerConfig,
        markers: data.markers,
      });
      let worst = 0;
      let spread = 0;
      for (const [i, example] of examples.entries()) {
        const expected = modelLogits(params, encoded[i] as (typeof encoded)[number]);
        const got = await referenceDecide(dir, example.valid);
        const asked = example.valid.questions
          .map((q, k) => ({ q, k }))
          .filter(({ q }) => trained.includes(q.id));
        asked.forEach(({ k }, j) => {
          const e = expected[j] as Float64Array;
          const g = got.logits[k] as Float64Array;
          expect(g.length).toBe(e.length);
          e.forEach((v, n) => {
            worst = Math.max(worst, Math.abs(v - (g[n] as number)));
            spread = Math.max(spread, Math.abs(v));
          });
        });
      }
      console.log(`max |Δlogit| ${worst.toExponential(2)}, logits up to ${spread.toFixed(2)}`);
      expect(spread).toBeGreaterThan(1); // the logits are not all zero: the check has teeth
      expect(worst, seedLine(`train-construct ${normDims} ${layer}`, SEED)).toBeLessThan(
        5e-6 * spread,
      );
      const gap = poolingGap(dir, hiddenLayout(params.shape));
      // Every token outside the bag gets exactly 0 in a float32 softmax, not a subnormal.
      expect(gap, seedLine(`train-construct ${normDims} ${layer}`, SEED)).toBeGreaterThan(
        -Math.log(2 ** -149),
      );
      if (scoped) {
        // The layer has teeth: the bag it pools is smaller than the state's, and the logits differ
        // by ten times what the check above allows (5e-6 of the largest logit), so a release that
        // ignored the layer would fail it. How far they differ depends on the random weights of the
        // words left out: 3.7e-3 with logits up to 34 on seed 183021, more than 1e-2 on seeds 1-12.
        const open = encoded[2] as (typeof encoded)[number];
        const whole = modelLogits({ ...params, scope: new Uint8Array(params.shape.vocab) }, open);
        const scoped = modelLogits(params, open);
        const moved = Math.max(...scoped[0]!.map((v, n) => Math.abs(v - whole[0]![n]!)));
        expect(moved, seedLine(`train-construct ${normDims} ${layer}`, SEED)).toBeGreaterThan(
          10 * 5e-6 * spread,
        );
      }
      // How far another model's logits are from these, over every example: a layer's teeth.
      const movedBy = (other: typeof params): number => {
        let most = 0;
        for (const e of encoded) {
          const b = modelLogits(other, e);
          modelLogits(params, e).forEach((l, q) =>
            l.forEach((v, n) => (most = Math.max(most, Math.abs(v - b[q]![n]!)))),
          );
        }
        return most;
      };
      if (bare) {
        // Leaving the cues out has teeth too: with them in the bag the logits move by ten times
        // the tolerance.
        const marks = params.scope as Uint8Array;
        const kept = { ...params, scope: marks.map((m) => m & ~SCOPE_LEFT_OUT) };
        expect(
          movedBy(kept),
          seedLine(`train-construct ${normDims} ${layer}`, SEED),
        ).toBeGreaterThan(10 * 5e-6 * spread);
      }
      if (pointed) {
        // The pointer has teeth: without its out_proj the logits move by ten times the tolerance.
        const pairs = params.pairs as NonNullable<typeof params.pairs>;
        const silent = { ...params, pairs: { ...pairs, wo: new Float64Array(pairs.wo.length) } };
        expect(
          movedBy(silent),
          seedLine(`train-construct ${normDims} ${layer}`, SEED),
        ).toBeGreaterThan(10 * 5e-6 * spread);
      }
      if (clauseWeight !== undefined) {
        // The clause weight has teeth: at 0 (the same layout) the logits move by ten times the
        // tolerance.
        const flat = { ...params, shape: { ...params.shape, clauseWeight: 0 } };
        expect(
          movedBy(flat),
          seedLine(`train-construct ${normDims} ${layer}`, SEED),
        ).toBeGreaterThan(10 * 5e-6 * spread);
      }
      expect(WEIGHT_RANGE).toBe(12);
    },
  );
});
