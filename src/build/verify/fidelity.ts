/**
 * How closely a converted package reproduces its source: random System One requests run
 * through the package (opened by the engine the caller hands in: in Node, the Node engine on
 * onnxruntime-node) and through either the float64 reference forward on the release or another
 * package (the fp32 baseline).
 *
 * Figures, over every option of every question of every request:
 *   meanAbsDp, maxAbsDp  |p_package − p_baseline|, each p a float32 softmax per question;
 *   sameAnswers          share of questions whose argmax option (first on ties) is identical.
 * Half the requests (even indices) are fed whole (one backbone run for prefix + state, one for
 * schema + suffix: the runner always splits at the state's end); the other half in small chunks
 * (default 7 tokens), so chunk boundaries fall everywhere, the running state is carried through
 * many runs and the tail's hidden states are joined from several chunks.
 */
import type { Fidelity, PackageManifest } from '../../core/manifest.js';
import type { TextTokenizer } from '../../clef/prompt.js';
import { softmaxF32 } from '../../protocol/answers.js';
import type { SystemOneRequest, ValidRequest } from '../../protocol/types.js';
import { validateRequest } from '../../protocol/validate.js';
import { referenceDecide } from '../reference/decide.js';
import { RequestGenerator, type RequestShape } from './requests.js';

/** A package opened to run requests on: what the measure needs of an engine. */
export interface FidelityEngine {
  readonly manifest: PackageManifest;
  readonly tokenizer: TextTokenizer;
  /** Model names a request may use. */
  readonly models: readonly string[];
  /** Logits of a validated request, fed `chunkTokens` tokens per backbone run. */
  logits(
    request: ValidRequest,
    run: { chunkTokens: number },
  ): Promise<{ logits: ArrayLike<number>[]; encoded: { inputIds: number[] } }>;
  dispose(): Promise<void>;
}

/** Opens a package (the caller's engine: in Node, loadNodePackage). */
export type OpenPackage = (dir: string, options: { threads?: number }) => Promise<FidelityEngine>;

export type FidelityBaseline = { release: string } | { package: string };

export interface FidelityOptions {
  requests: number;
  seed?: number;
  /** Tokens per backbone run for the chunk-fed half (default 7). */
  chunkTokens?: number;
  /** Request sizes (tests use small ones; the reference forward is slow). */
  shape?: Partial<RequestShape>;
  threads?: number;
  /** Called after each request (CLI progress). */
  onProgress?: (done: number, total: number) => void;
}

export interface FidelityPart {
  requests: number;
  questions: number;
  meanAbsDp: number;
  maxAbsDp: number;
  sameAnswers: number;
}

export interface FidelityReport extends Fidelity {
  /** The baseline's dtype when it is a package ('reference' for the release). */
  baseline: string;
  questions: number;
  options: number;
  /** Index of the request with the largest |Δp|, and its question id. */
  maxAbsDpRequest: number;
  maxAbsDpQuestion: string;
  whole: FidelityPart;
  chunked: FidelityPart;
  chunkTokens: number;
  seed: number;
  seconds: number;
}

export const DEFAULT_FIDELITY_SEED = 20261001;
export const DEFAULT_VERIFY_CHUNK_TOKENS = 7;

/** Probabilities of the baseline for one request, question by question (encoded option order). */
type Baseline = (request: ValidRequest) => Promise<{ inputIds: number[]; p: ArrayLike<number>[] }>;

class Tally {
  requests = 0;
  questions = 0;
  options = 0;
  sumAbsDp = 0;
  maxAbsDp = 0;
  same = 0;

  part(): FidelityPart {
    return {
      requests: this.requests,
      questions: this.questions,
      meanAbsDp: this.options > 0 ? this.sumAbsDp / this.options : 0,
      maxAbsDp: this.maxAbsDp,
      sameAnswers: this.questions > 0 ? this.same / this.questions : 1,
    };
  }
}

/** Index of the first largest value. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

async function baselineFor(
  against: FidelityBaseline,
  contextTokens: number,
  threads: number | undefined,
  open: OpenPackage,
): Promise<{ run: Baseline; label: string; engine: FidelityEngine | null; contextTokens: number }> {
  if ('release' in against) {
    const release = against.release;
    return {
      label: 'reference',
      engine: null,
      contextTokens,
      run: async (request) => {
        const r = await referenceDecide(release, request, { maxTokens: contextTokens });
        return { inputIds: r.encoded.inputIds, p: r.probabilities };
      },
    };
  }
  const engine = await open(against.package, threads ? { threads } : {});
  return {
    label: engine.manifest.variant.dtype,
    engine,
    contextTokens: Math.min(contextTokens, engine.manifest.contextTokens),
    run: async (request) => {
      // The baseline is always fed whole.
      const r = await engine.logits(request, { chunkTokens: engine.manifest.contextTokens });
      return { inputIds: r.encoded.inputIds, p: r.logits.map((l) => softmaxF32(l)) };
    },
  };
}

/**
 * Measures `packageDir` against a release's reference forward or another package, each package
 * opened with `open`.
 */
export async function measureFidelity(
  packageDir: string,
  against: FidelityBaseline,
  options: FidelityOptions,
  open: OpenPackage,
): Promise<FidelityReport> {
  const count = options.requests;
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`requests must be a positive integer, not ${count}`);
  }
  const seed = options.seed ?? DEFAULT_FIDELITY_SEED;
  const chunkTokens = options.chunkTokens ?? DEFAULT_VERIFY_CHUNK_TOKENS;
  const started = performance.now();
  const engine = await open(
    packageDir,
    options.threads !== undefined ? { threads: options.threads } : {},
  );
  let baseline: Awaited<ReturnType<typeof baselineFor>> | null = null;
  try {
    baseline = await baselineFor(against, engine.manifest.contextTokens, options.threads, open);
    const generator = new RequestGenerator(seed, {
      ...options.shape,
      model: engine.manifest.model.name,
      tokenizer: engine.tokenizer,
      contextTokens: baseline.contextTokens,
    });
    const all = new Tally();
    const parts = { whole: new Tally(), chunked: new Tally() };
    let worst = { request: 0, question: '' };
    for (let i = 0; i < count; i++) {
      const body: SystemOneRequest = generator.next();
      const request = validateRequest(body, { models: engine.models });
      const chunked = i % 2 === 1;
      const got = await engine.logits(request, {
        chunkTokens: chunked ? chunkTokens : engine.manifest.contextTokens,
      });
      const want = await baseline.run(request);
      if (!sameIds(got.encoded.inputIds, want.inputIds)) {
        throw new Error(
          `request ${i}: the package and the ${baseline.label} encode the prompt differently ` +
            '(different tokenizer files?)',
        );
      }
      const part = chunked ? parts.chunked : parts.whole;
      for (const tally of [all, part]) tally.requests++;
      request.questions.forEach((question, k) => {
        const p = softmaxF32(got.logits[k]!);
        const q = want.p[k]!;
        if (p.length !== q.length) throw new Error(`request ${i} ${question.id}: option counts`);
        const same = argmax(p) === argmax(q) ? 1 : 0;
        for (const tally of [all, part]) {
          tally.questions++;
          tally.same += same;
        }
        for (let j = 0; j < p.length; j++) {
          const d = Math.abs(p[j]! - q[j]!);
          if (!Number.isFinite(d)) throw new Error(`request ${i} ${question.id}: p is not finite`);
          if (d > all.maxAbsDp) worst = { request: i, question: question.id };
          for (const tally of [all, part]) {
            tally.options++;
            tally.sumAbsDp += d;
            tally.maxAbsDp = Math.max(tally.maxAbsDp, d);
          }
        }
      });
      options.onProgress?.(i + 1, count);
    }
    const summary = all.part();
    return {
      against: 'release' in against ? 'reference' : 'fp32',
      baseline: baseline.label,
      requests: count,
      meanAbsDp: summary.meanAbsDp,
      maxAbsDp: summary.maxAbsDp,
      sameAnswers: summary.sameAnswers,
      questions: all.questions,
      options: all.options,
      maxAbsDpRequest: worst.request,
      maxAbsDpQuestion: worst.question,
      whole: parts.whole.part(),
      chunked: parts.chunked.part(),
      chunkTokens,
      seed,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await engine.dispose();
    await baseline?.engine?.dispose();
  }
}
