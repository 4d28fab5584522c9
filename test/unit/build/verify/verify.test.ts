// Verification: the Node engine on converted packages against the float64 reference
// forward (src/build/reference), package integrity checks, the random request generator and the
// `clef-web verify` CLI, on the tiny fixture (fp32 release; fp32, q8 and q4 packages).
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRequest } from '../../../../src/clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../../../../src/clef/tokenizer.js';
import { SystemOneError } from '../../../../src/protocol/errors.js';
import { IntegrityError, PackageError } from '../../../../src/wire/errors.js';
import type { ChoiceAnswer, Question, SystemOneRequest } from '../../../../src/protocol/types.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { convertRelease, measureFidelity } from '../../../../src/node/build-runtime.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { loadNodePackage } from '../../../../src/node/engine.js';
import { referenceDecide } from '../../../../src/build/reference/decide.js';
import { verifyMain } from '../../../../src/node/verify/cli.js';
import type { FidelityReport } from '../../../../src/build/verify/fidelity.js';
import { randomRequests, type RequestShape } from '../../../../src/build/verify/requests.js';
import { byteLevelDecoder } from '../../support/byte-level-decode.js';

// Tolerances. fp32 graphs vs the float64 reference: float32 rounding through a few layers moves
// p by about 1e-7 on this model; 1e-5 is the bound.
const FP32_MAX_DP = 1e-5;
// Quantized packages: bounds from this fixture's measured figures (Q8_MAX_DP, Q4_MAX_DP below),
// and the measurement must see their error at all (q4 weights shift p by ≫ 1e-4).
const QUANT_MIN_SAME = 0.5;
const Q4_MIN_VISIBLE_DP = 1e-4;
/** Upper bounds on quantised packages' |Δp| against fp32 (measured figures in the test). */
const Q8_MAX_DP = 0.05;
const Q4_MAX_DP = 0.5;
// Answers are rounded to 4 decimals; engine and reference p differ by < FP32_MAX_DP, so a
// rounded answer is within half a unit of the 4th decimal plus that.
const ROUNDED_TOL = 0.5e-4 + FP32_MAX_DP;

/** Short requests: the float64 reference forward costs milliseconds per token. */
const SMALL: Partial<RequestShape> = {
  maxQuestions: 3,
  maxChoiceOptions: 3,
  maxScoreLevels: 3,
  longStateTokens: [10, 40],
};
/** About 15 s of CPU each; generous wall time for a loaded machine (no skipping). */
const HEAVY_TIMEOUT_MS = 300_000;
const THREADS = 1;
const ALIAS = 'tiny-clef-alias';

let work: string;
let release: string;
let fp32: string;
let q8: string;
let q4: string;
let tokenizer: ClefTokenizer;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'clef-verify-test-'));
  release = join(work, 'release');
  writeTinyFixture(release, { dtype: 'fp32' });
  fp32 = join(work, 'fp32');
  q8 = join(work, 'q8');
  q4 = join(work, 'q4');
  await convertRelease(release, fp32, { dtype: 'fp32', name: 'tiny-clef', aliases: [ALIAS] });
  await convertRelease(release, q8, { dtype: 'q8', name: 'tiny-clef' });
  await convertRelease(release, q4, { dtype: 'q4', name: 'tiny-clef' });
  const readJson = (name: string) =>
    JSON.parse(readFileSync(join(release, name), 'utf8')) as object;
  tokenizer = loadTokenizerSync(readJson('tokenizer.json'), readJson('tokenizer_config.json'));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function figures(label: string, r: FidelityReport): string {
  const f = (p: { meanAbsDp: number; maxAbsDp: number; sameAnswers: number }) =>
    `mean ${p.meanAbsDp.toExponential(2)} max ${p.maxAbsDp.toExponential(2)} same ${p.sameAnswers.toFixed(3)}`;
  return `${label} vs ${r.baseline}, ${r.requests} requests / ${r.questions} questions: ${f(r)} (whole: ${f(r.whole)}; chunks of ${r.chunkTokens}: ${f(r.chunked)})`;
}

describe('fidelity', () => {
  it(
    'fp32 package = float64 reference (max |Δp| ≤ 1e-5, same answers), whole and chunked',
    async () => {
      const r = await measureFidelity(
        fp32,
        { release },
        { requests: 30, seed: 7, shape: SMALL, threads: THREADS },
      );
      console.log(figures('fp32', r));
      expect(r.against).toBe('reference');
      expect(r.requests).toBe(30);
      expect(r.whole.requests).toBe(15);
      expect(r.chunked.requests).toBe(15);
      expect(r.questions).toBeGreaterThanOrEqual(30);
      expect(r.options).toBeGreaterThan(2 * r.questions);
      expect(r.maxAbsDp).toBeLessThanOrEqual(FP32_MAX_DP);
      expect(r.chunked.maxAbsDp).toBeLessThanOrEqual(FP32_MAX_DP);
      expect(r.sameAnswers).toBe(1);
      // A real comparison: float32 runs differ from the float64 reference somewhere (comparing
      // the package with itself would give exactly 0), and the figures are those of the parts.
      expect(r.maxAbsDp).toBeGreaterThan(0);
      expect(r.maxAbsDp).toBe(Math.max(r.whole.maxAbsDp, r.chunked.maxAbsDp));
      const partMeans = [r.whole.meanAbsDp, r.chunked.meanAbsDp];
      expect(r.meanAbsDp).toBeGreaterThanOrEqual(Math.min(...partMeans));
      expect(r.meanAbsDp).toBeLessThanOrEqual(Math.max(...partMeans));
    },
    HEAVY_TIMEOUT_MS,
  );

  it(
    'reports q8 and q4 against fp32 (sanity only) and sees q4 error',
    async () => {
      const opts = { requests: 30, seed: 11, shape: SMALL, threads: THREADS };
      const r8 = await measureFidelity(q8, { package: fp32 }, opts);
      const r4 = await measureFidelity(q4, { package: fp32 }, opts);
      console.log(figures('q8', r8));
      console.log(figures('q4', r4));
      for (const r of [r8, r4]) {
        expect(r.against).toBe('fp32');
        expect(r.baseline).toBe('fp32');
        expect(Number.isFinite(r.meanAbsDp) && Number.isFinite(r.maxAbsDp)).toBe(true);
        expect(r.sameAnswers).toBeGreaterThan(QUANT_MIN_SAME);
      }
      // Measured here (fixture seed 7, requests seed 11, deterministic): q8 max |Δp| 1.59e-2,
      // mean 3.69e-3; q4 max 2.42e-1, mean 5.85e-2. The bounds leave about 3× (q8) and 2× (q4)
      // for other CPUs' float32 summation order, and fail on what a broken quantizer gives: q8
      // as coarse as q4, or q4 answering near-randomly (max |Δp| toward 1).
      expect(r8.maxAbsDp).toBeLessThan(Q8_MAX_DP);
      expect(r8.meanAbsDp).toBeLessThan(Q8_MAX_DP / 4);
      expect(r4.maxAbsDp).toBeLessThan(Q4_MAX_DP);
      expect(r4.meanAbsDp).toBeLessThan(Q4_MAX_DP / 4);
      expect(r4.maxAbsDp).toBeGreaterThan(Q4_MIN_VISIBLE_DP);
    },
    HEAVY_TIMEOUT_MS,
  );
});

const HAND_WRITTEN_PROMPT = [
  '<|im_start|>system\nRead the complete state and schema. Decide every field jointly. Each ',
  "answer must be exactly one of that field's allowed options.<|im_end|>\n<|im_start|>user\n",
  'STATE:\n{"priority":2,"tags":["food","service"],"ticket":"Le café était froid"}',
  '\n\nSCHEMA FIELDS:\n',
  '\nFIELD 1\nID: topic\nTYPE: choice\nINSTRUCTION: What is the ticket about?',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: {"description":{"note":"Payments"},"option_id":"billing"}\n',
  'OPTION 2: {"description":"Meals and drinks","option_id":"food"}\n',
  'OPTION 3: {"option_id":"service"}\n',
  'END FIELD\n',
  '\nFIELD 2\nID: urgent\nTYPE: noul\nINSTRUCTION: urgent',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: {"description":"The proposition is true or the answer is yes.","option_id":"true"}\n',
  'OPTION 2: {"description":"The proposition is false or the answer is no.","option_id":"false"}\n',
  'END FIELD\n',
  '\nFIELD 3\nID: mood\nTYPE: score\nINSTRUCTION: mood',
  '\nALLOWED OPTIONS:\n',
  'OPTION 1: {"description":"calm","option_id":"0"}\n',
  'OPTION 2: {"description":"annoyed","option_id":"1"}\n',
  'OPTION 3: {"description":"angry","option_id":"2"}\n',
  'END FIELD\n',
  '\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nJOINT SCHEMA DECISIONS:',
].join('');

describe('NodeEngine', () => {
  const body = (model: string): SystemOneRequest => ({
    model,
    state: { ticket: 'Le café était froid', priority: 2, tags: ['food', 'service'] },
    questions: {
      topic: {
        type: 'choice',
        instructions: 'What is the ticket about?',
        criteria: { food: 'Meals and drinks', service: null, billing: { note: 'Payments' } },
      },
      urgent: { type: 'noul' },
      mood: { type: 'score', criteria: ['calm', 'annoyed', 'angry'] },
    },
  });

  it('decides like the reference: the response probabilities, answer and usage', async () => {
    const engine = await loadNodePackage(fp32, { threads: THREADS });
    try {
      const decision = await engine.decide(body(ALIAS));
      const request = validateRequest(body(ALIAS));
      const ref = await referenceDecide(release, request);
      expect(decision.response.model).toBe(ALIAS);
      // What the engine fed the model, decoded by the test's own byte-level decoder, is the
      // prompt docs/clef-recipe.md §2 prescribes, written out here by hand from that template
      // (render = Python's json.dumps with sorted keys; options in code-point order; a missing
      // instruction is the id; noul's two default options).
      const decoded = byteLevelDecoder(join(release, 'tokenizer.json'))(decision.encoded.inputIds);
      expect(decoded).toBe(HAND_WRITTEN_PROMPT);
      expect(decision.response.usage.input_tokens).toBe(decision.encoded.inputIds.length);
      expect(ref.encoded.inputIds).toEqual(decision.encoded.inputIds);
      expect(JSON.parse(decision.json)).toEqual(JSON.parse(JSON.stringify(decision.response)));
      const topic = decision.response.answers.topic as ChoiceAnswer;
      const order = ref.encoded.questions[0]!.optionIds; // sorted: billing, food, service
      const refTopic = ref.probabilities[0]!;
      order.forEach((name, j) =>
        expect(Math.abs(topic.probabilities[name]! - refTopic[j]!)).toBeLessThanOrEqual(
          ROUNDED_TOL,
        ),
      );
      const best = order[refTopic.indexOf(Math.max(...refTopic))];
      expect(topic.choice).toBe(best);
      const urgent = decision.response.answers.urgent as { noul: number };
      expect(Math.abs(urgent.noul - ref.probabilities[1]![0]!)).toBeLessThanOrEqual(ROUNDED_TOL);
    } finally {
      await engine.dispose();
    }
  });

  it('refuses unknown models and over-long inputs as System One errors', async () => {
    const engine = await loadNodePackage(fp32, { threads: THREADS });
    try {
      await expect(engine.decide(body('clef-flash'))).rejects.toMatchObject({
        status: 400,
        message: 'Unknown model: clef-flash',
      });
      const long = { ...body('tiny-clef'), state: 'word '.repeat(5000) };
      const error = await engine.decide(long).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SystemOneError);
      expect((error as SystemOneError).code).toBe('max_tokens_exceeded');
    } finally {
      await engine.dispose();
    }
  });
});

describe('package integrity', () => {
  function copyPackage(name: string): string {
    const dir = join(work, name);
    cpSync(fp32, dir, { recursive: true });
    return dir;
  }
  function flipByte(path: string, at: number): void {
    const bytes = readFileSync(path);
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(path, bytes);
  }
  function editManifest(dir: string, edit: (m: { files: Array<{ path: string }> }) => void) {
    const path = join(dir, 'manifest.json');
    const m = JSON.parse(readFileSync(path, 'utf8')) as { files: Array<{ path: string }> };
    edit(m);
    writeFileSync(path, JSON.stringify(m));
  }

  it.each([
    ['lm_head_rows.bin', 100], // held in memory after hashing
    ['backbone.onnx.data', 4096], // stream-hashed
    ['head_decide.onnx', 20],
  ])('refuses a package whose %s has one flipped bit, naming the file', async (file, at) => {
    const dir = copyPackage(`tampered-${file}`);
    flipByte(join(dir, file), at);
    await expect(loadNodePackage(dir)).rejects.toMatchObject({
      name: 'IntegrityError',
      message: expect.stringContaining(file),
    });
  });

  it('refuses a file of the wrong size and a missing file, naming them', async () => {
    const longer = copyPackage('longer');
    appendFileSync(join(longer, 'tokenizer.json'), ' ');
    // A size mismatch is an integrity failure, as docs/security.md says (not a PackageError).
    const error = await loadNodePackage(longer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntegrityError);
    expect(error).toMatchObject({
      code: 'integrity_mismatch',
      details: { file: 'tokenizer.json', check: 'size' },
    });
    expect((error as Error).message).toMatch(/tokenizer\.json: .*bytes/);
    const missing = copyPackage('missing');
    unlinkSync(join(missing, 'head_memory.onnx'));
    await expect(loadNodePackage(missing)).rejects.toThrow(/head_memory\.onnx: missing/);
  });

  it('refuses manifest paths that leave the package: `..`, absolute, and a symlink out', async () => {
    const dotdot = copyPackage('dotdot');
    editManifest(dotdot, (m) => (m.files[0]!.path = `../fp32/${m.files[0]!.path}`));
    await expect(loadNodePackage(dotdot)).rejects.toThrow(/outside the package/);
    const absolute = copyPackage('absolute');
    editManifest(absolute, (m) => (m.files[0]!.path = join(fp32, m.files[0]!.path)));
    await expect(loadNodePackage(absolute)).rejects.toThrow(/outside the package/);
    // A symlink to an identical file outside: the hash would pass, the location must not.
    const linked = copyPackage('linked');
    unlinkSync(join(linked, 'tokenizer.json'));
    symlinkSync(join(fp32, 'tokenizer.json'), join(linked, 'tokenizer.json'));
    await expect(loadNodePackage(linked)).rejects.toThrow(/tokenizer\.json: resolves outside/);
  });

  it('refuses at load a graph that lacks an input the runner feeds (onnxruntime-node would ignore the feed)', async () => {
    // head_decide in the head_memory role: it has `hidden` but no `past_memory`.
    const swapped = copyPackage('swapped');
    editManifest(swapped, (m) => {
      for (const f of m.files as Array<{ path: string; role: string }>) {
        if (f.role === 'head-memory') f.role = 'head-decide';
        else if (f.role === 'head-decide') f.role = 'head-memory';
      }
    });
    const error = await loadNodePackage(swapped, { threads: THREADS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageError);
    expect((error as Error).message).toMatch(/head_decide\.onnx has no input past_memory/);
  });

  it('loads an untouched copy (the checks above fail for their reason only)', async () => {
    const engine = await loadNodePackage(copyPackage('intact'), { threads: THREADS });
    expect(engine.models).toEqual(['tiny-clef', ALIAS]);
    await engine.dispose();
  });
});

describe('random requests', () => {
  it('are deterministic per seed, valid, varied, and fit the context', () => {
    const options = { model: 'm', tokenizer, contextTokens: 4096 };
    const a = randomRequests(120, 3, options);
    expect(JSON.stringify(randomRequests(120, 3, options))).toBe(JSON.stringify(a));
    expect(JSON.stringify(randomRequests(120, 4, options))).not.toBe(JSON.stringify(a));
    const seen = {
      types: new Set<string>(),
      questionCounts: new Set<number>(),
      choiceSizes: new Set<number>(),
      scoreSizes: new Set<number>(),
      noulCriteria: new Set<string>(),
      instructions: new Set<string>(),
      descriptions: new Set<string>(),
      stateTokens: [] as number[],
    };
    const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    for (const body of a) {
      const valid = validateRequest(body, { models: ['m'] });
      const encoded = encodeRequest(tokenizer, valid, { maxTokens: 4096 });
      seen.stateTokens.push(encoded.stateTokens);
      const questions = Object.values(body.questions as Record<string, Question>);
      seen.questionCounts.add(questions.length);
      for (const q of questions) {
        seen.types.add(q.type);
        seen.instructions.add('instructions' in q ? kind(q.instructions) : 'missing');
        if (q.type === 'choice') {
          seen.choiceSizes.add(Object.keys(q.criteria).length);
          for (const d of Object.values(q.criteria)) seen.descriptions.add(kind(d));
        } else if (q.type === 'score') seen.scoreSizes.add(q.criteria.length);
        else
          seen.noulCriteria.add(q.criteria ? Object.keys(q.criteria).join('+') : kind(q.criteria));
      }
    }
    expect([...seen.types].sort()).toEqual(['choice', 'noul', 'score']);
    expect(Math.min(...seen.questionCounts)).toBe(1);
    expect(Math.max(...seen.questionCounts)).toBe(8);
    expect(Math.min(...seen.choiceSizes)).toBe(2);
    expect(Math.max(...seen.choiceSizes)).toBe(12);
    expect(Math.min(...seen.scoreSizes)).toBe(2);
    expect(Math.max(...seen.scoreSizes)).toBe(10);
    for (const k of ['undefined', 'null', 'true+false', 'true', 'false']) {
      expect(seen.noulCriteria).toContain(k);
    }
    for (const k of ['missing', 'null', 'string', 'object']) expect(seen.instructions).toContain(k);
    for (const k of ['null', 'string', 'object']) expect(seen.descriptions).toContain(k);
    expect(Math.min(...seen.stateTokens)).toBeLessThan(10);
    expect(Math.max(...seen.stateTokens)).toBeGreaterThan(300);
  });

  it('shrink to fit a small context', () => {
    const contextTokens = 300;
    for (const body of randomRequests(60, 5, { model: 'm', tokenizer, contextTokens })) {
      const encoded = encodeRequest(tokenizer, validateRequest(body), { maxTokens: 1e9 });
      expect(encoded.inputIds.length).toBeLessThanOrEqual(contextTokens);
    }
  });
});

describe('clef-web verify', () => {
  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await verifyMain(argv, {
      out: (t) => (out += t),
      err: (t) => (err += t),
      progress: false,
    });
    return { code, out, err };
  }

  it('--json prints one object with the four keys; --max-dp 0 exits 1', async () => {
    const common = [q8, '--against-package', fp32, '--requests', '2', '--threads', '1'];
    const strict = await run([...common, '--json', '--max-dp', '0']);
    expect(strict.code).toBe(1);
    expect(strict.err).toMatch(/exceeds --max-dp 0/);
    const lines = strict.out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!) as Record<string, number>;
    expect(Object.keys(parsed).sort()).toEqual([
      'maxAbsDp',
      'meanAbsDp',
      'requests',
      'sameAnswers',
    ]);
    expect(parsed.requests).toBe(2);
    expect(parsed.maxAbsDp).toBeGreaterThan(0);
    const loose = await run([...common, '--max-dp', '1']);
    expect(loose.code).toBe(0);
    expect(loose.out).toMatch(/mean \|Δp\|/);
    expect(loose.out).toMatch(/chunks of 7/);
  });

  it.each([
    [[], /missing <package-dir>/],
    [['pkg'], /exactly one of --release/],
    [['pkg', '--release', 'a', '--against-package', 'b'], /exactly one of --release/],
    [['pkg', '--release', 'a', '--requests', 'ten'], /--requests needs an integer/],
    [['pkg', '--release', 'a', '--max-dp=-1'], /--max-dp needs a number/],
    [['pkg', '--release', 'a', '--bogus'], /bogus/],
  ])('usage error %j exits 2 with a message', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toMatch(/usage: clef-web verify/);
  });

  it('a package that cannot be loaded exits 1 with the reason', async () => {
    const r = await run([join(work, 'nope'), '--release', release, '--requests', '1']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/manifest/);
  });
});
