/**
 * Shared by the engine's browser tests (engine*.spec.ts): opening the test pages, driving the
 * page-side helpers (pages/engine-page.ts), seeded random System One requests, and the float64
 * reference forward (src/build/reference) that the browser's answers are checked against, in Node.
 */
import { expect, type Page } from '@playwright/test';
import type { ClefOptions } from '../../../src/client/clef.js';
import { encodeRequest } from '../../../src/clef/prompt.js';
import type { DecisionWire } from '../../../src/wire/wire.js';
import type { TestEngineInfo } from '../../support/instrumented-worker/instrumented-wire.js';
import type { SystemOneResponse } from '../../../src/protocol/types.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import { loadReferenceModel, referenceDecide } from '../../../src/build/reference/decide.js';
import type { ErrorData, Outcome } from '../pages/engine-page.js';
import type { TestOptions } from '../pages/test-clef.js';
import { uniforms } from '../../../src/calibrate/prng.js';
import { DEVICE_NAMES, deviceOf, type DeviceName } from '../../../src/core/devices.js';

export type { ErrorData, Outcome };
/** The engine's devices (src/core/devices.ts), in the order the per-device specs declare them. */
export const DEVICES: readonly Device[] = [...DEVICE_NAMES].reverse();
export type Device = DeviceName;

/**
 * The tag of a test that runs on one device: playwright.config.ts gives each device its own
 * project, which runs the tests tagged with it (and the untagged ones run once, in `page`).
 */
export const deviceTag = (device: Device) => `@${device}`;

/** The seeded tiny release the packages under /models/ were converted from. */
export const TINY_RELEASE = '.cache/tiny-release';
export const MODEL = 'clef-tiny';
export const TINY_CONTEXT = 4096;
export const FP32 = '/models/tiny/';
export const Q4 = '/models/tiny-q4/';
/** /models/tiny/ with a shorter context in its manifest (tools/models/build-tiny.ts). */
export const FP32_1K = '/models/tiny-1k/';
export const TINY_1K_CONTEXT = 1024;

/**
 * How far the browser may stray from the float64 reference, per device and dtype, set at about
 * ten times (WASM) and seven times (WebGPU) the largest error measured on the tiny fixture:
 * - logit: max |logit − reference logit| over every option of every question;
 * - probability: max |p − reference p| before rounding. Answers are rounded to 4 decimals, so
 *   a rounded answer is compared with ROUNDING + probability.
 * fp32 on WASM: float32 CPU kernels vs float64, 4.7e-6 measured. WebGPU on SwiftShader: float32
 * shaders with other summation orders, 4.4e-5 measured. js: the graph interpreter's float32
 * values (its products summed in float32 by the SIMD kernel), held to the js device's bound in
 * Node (js-device.test.ts): 1e-5 in probability (4.4e-7 measured in Node). q4 is checked against
 * onnxruntime-node running the same q4 graphs (engine.spec.ts), not against the fp32 reference.
 */
export const TOLERANCE = {
  wasm: { fp32: { logit: 5e-5, probability: 2e-5 } },
  webgpu: { fp32: { logit: 3e-4, probability: 1e-4 } },
  js: { fp32: { logit: 5e-5, probability: 1e-5 } },
} as const satisfies Record<Device, unknown>;
/** Half a unit in the 4th decimal: what rounding an answer may add. */
export const ROUNDING = 5e-5;
/** WASM and WebGPU, same fp32 package, same requests: max |Δ logit| (3.7e-5 measured). */
export const CROSS_DEVICE_LOGIT_TOLERANCE = 3e-4;

// ---------------------------------------------------------------------------------------------
// Pages

/**
 * Opens a test page with Vite's HMR socket stubbed: other edits to the tree (or the dependency
 * optimizer) must not reload the page in the middle of a test.
 */
export async function openPage(page: Page, path = '/test/browser/pages/engine.html') {
  await page.routeWebSocket(/.*/, () => undefined);
  page.on('console', (m) => {
    if (m.type() === 'error') console.log(`[page error] ${m.text()}`);
  });
  await page.goto(path);
  await expect(page.locator('#status')).toHaveText('ready');
}

type LoadOptions = Omit<ClefOptions & TestOptions, 'onProgress' | 'worker'>;

export function loadClef(page: Page, name: string, options: LoadOptions) {
  return page.evaluate(([n, o]) => window.enginePage.load(n, o), [name, options] as [
    string,
    LoadOptions,
  ]) as Promise<Outcome<TestEngineInfo>>;
}

/**
 * createClef that must succeed: its info(). On the CPU devices (WASM, js) it returns once the
 * engine's own warm-up is over, since a warm-up that gave way comes back when the engine is idle, and a test's later
 * reads of the counters (live tensors) are meant to see its requests alone; the warm-up giving
 * way is device-choice.spec's own test. On WebGPU the warm-up never comes back, and waiting for
 * it there would cost seconds of SwiftShader per load.
 */
export async function mustLoad(page: Page, name: string, options: LoadOptions) {
  const out = await loadClef(page, name, options);
  if (!out.ok) throw new Error(`createClef failed: ${JSON.stringify(out.error)}`);
  await untilWarmedUp(page, name, out.value.device);
  return out.value;
}

/** On a CPU device, waits until the engine's warm-up is neither queued nor running. */
export async function untilWarmedUp(page: Page, name: string, device: string) {
  if (deviceOf(device as Device).gpu) return;
  await expect
    .poll(async () => (await infoOf(page, name)).counters.warmingUp, { timeout: 60_000 })
    .toBe(false);
}

export function decideIn(page: Page, name: string, request: unknown) {
  return page.evaluate(([n, r]) => window.enginePage.decide(n, r), [name, request] as [
    string,
    unknown,
  ]) as Promise<Outcome<DecisionWire>>;
}

export async function mustDecide(page: Page, name: string, request: unknown) {
  const out = await decideIn(page, name, request);
  if (!out.ok) throw new Error(`decide failed: ${JSON.stringify(out.error)}`);
  return out.value;
}

export async function infoOf(page: Page, name: string): Promise<TestEngineInfo> {
  const out = (await page.evaluate(
    (n) => window.enginePage.info(n),
    name,
  )) as Outcome<TestEngineInfo>;
  if (!out.ok) throw new Error(`info failed: ${JSON.stringify(out.error)}`);
  return out.value;
}

export function disposeClef(page: Page, name: string) {
  return page.evaluate((n) => window.enginePage.dispose(n), name);
}

// ---------------------------------------------------------------------------------------------
// Seeded requests

/** The project's one PRNG, so every run draws the same requests. */
export const rng = uniforms;

const WORDS = (
  'order card charged twice refund parcel late billing account password email reset ' +
  'invoice shipping damaged box priority customer angry happy thanks urgent support ' +
  'subscription cancel renew discount coupon price store delivery address phone'
).split(' ');

function pick<T>(r: () => number, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)] as T;
}

function sentence(r: () => number, words: number): string {
  return Array.from({ length: words }, () => pick(r, WORDS)).join(' ');
}

function description(r: () => number): unknown {
  const kind = Math.floor(r() * 4);
  if (kind === 0) return null;
  if (kind === 1) return { means: sentence(r, 2), weight: Math.floor(r() * 5) };
  return sentence(r, 1 + Math.floor(r() * 4));
}

function instructions(r: () => number): unknown {
  const kind = Math.floor(r() * 5);
  if (kind === 0) return undefined; // the id stands in
  if (kind === 1) return null;
  if (kind === 2) return { ask: sentence(r, 3) };
  return `${sentence(r, 4)}?`;
}

function question(r: () => number, type: 'noul' | 'choice' | 'score'): Record<string, unknown> {
  const q: Record<string, unknown> = { type };
  const ins = instructions(r);
  if (ins !== undefined) q.instructions = ins;
  if (type === 'noul' && r() < 0.5) q.criteria = { true: description(r), false: description(r) };
  if (type === 'choice') {
    const n = 2 + Math.floor(r() * 3);
    const names = [...new Set(Array.from({ length: n + 3 }, () => pick(r, WORDS)))].slice(0, n);
    if (names.length < 2) names.push('other');
    q.criteria = Object.fromEntries(names.map((name) => [name, description(r)]));
  }
  if (type === 'score') {
    q.criteria = Array.from({ length: 2 + Math.floor(r() * 4) }, () => description(r));
  }
  return q;
}

/**
 * `count` requests with states of every kind (text, object, array) and 3 to 4 questions each,
 * always one of each type; ids are not integer-like, so a JS object keeps their order.
 */
export function randomRequests(seed: number, count: number, stateWords = 12) {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const kind = i % 3;
    const state =
      kind === 0
        ? sentence(r, stateWords)
        : kind === 1
          ? { ticket: sentence(r, stateWords - 4), amount: 12.5, tags: [pick(r, WORDS)] }
          : [sentence(r, stateWords / 2), { note: sentence(r, stateWords / 2 - 2) }];
    const types: Array<'noul' | 'choice' | 'score'> = ['noul', 'choice', 'score'];
    if (r() < 0.5) types.push(pick(r, types));
    // Shuffle the question order: order matters to the model.
    types.sort(() => r() - 0.5);
    const questions = Object.fromEntries(types.map((t, k) => [`q${k}_${t}`, question(r, t)]));
    return { model: MODEL, state, questions };
  });
}

// ---------------------------------------------------------------------------------------------
// The reference forward, in Node

export interface Reference {
  logits: number[][];
  /** Question id → option id → reference probability (float32 softmax of float64 logits). */
  probabilities: Map<string, Map<string, number>>;
  inputTokens: number;
  stateEnd: number;
}

const references = new Map<string, Promise<Reference>>();

/** The float64 reference decision of a request (memoized per request). */
export function reference(request: unknown): Promise<Reference> {
  const key = JSON.stringify(request);
  let ref = references.get(key);
  if (!ref) {
    ref = (async () => {
      const valid = validateRequest(request, { models: [MODEL] });
      const out = await referenceDecide(TINY_RELEASE, valid);
      const probabilities = new Map<string, Map<string, number>>();
      out.encoded.questions.forEach((q, k) => {
        const p = out.probabilities[k]!;
        probabilities.set(q.id, new Map(q.optionIds.map((id, j) => [id, p[j]!])));
      });
      return {
        logits: out.logits.map((l) => Array.from(l)),
        probabilities,
        inputTokens: out.encoded.inputIds.length,
        stateEnd: out.encoded.stateEnd,
      };
    })();
    references.set(key, ref);
  }
  return ref;
}

/** Tokens of a request's input and its state end, with the release's tokenizer (no limit). */
export async function encodedLength(request: unknown) {
  const model = await loadReferenceModel(TINY_RELEASE);
  const valid = validateRequest(request, { models: [MODEL] });
  const encoded = encodeRequest(model.tokenizer, valid, { maxTokens: Infinity });
  return { inputTokens: encoded.inputIds.length, stateEnd: encoded.stateEnd };
}

/** A text state that makes `questions`' input `tokens` long, or at most 8 tokens shorter. */
export async function stateOfLength(questions: object, tokens: number): Promise<string> {
  const words = (n: number) =>
    Array.from({ length: n }, (_, i) => `${WORDS[(i * 7) % WORDS.length]}${i % 10}`).join(' ');
  let lo = 0;
  let hi = tokens;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const { inputTokens } = await encodedLength({ model: MODEL, state: words(mid), questions });
    if (inputTokens <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return words(lo);
}

export function maxAbsDiff(a: readonly number[][], b: readonly number[][]): number {
  expect(a.map((x) => x.length)).toEqual(b.map((x) => x.length));
  let max = 0;
  a.forEach((row, i) => row.forEach((v, j) => (max = Math.max(max, Math.abs(v - b[i]![j]!)))));
  return max;
}

/**
 * Checks a response against the reference probabilities: every reported number within
 * `tolerance` (probability error, before rounding) plus rounding; the choice is the reference's
 * best option whenever the reference's top two differ by more than the tolerance.
 */
export function expectResponseNear(
  response: SystemOneResponse,
  ref: Reference,
  tolerance: number,
): number {
  const near = (got: number, want: number, scale = 1) => {
    const err = Math.abs(got - want);
    expect(err, `${got} vs reference ${want}`).toBeLessThanOrEqual(ROUNDING + tolerance * scale);
    return err;
  };
  let worst = 0;
  expect(Object.keys(response.answers)).toEqual([...ref.probabilities.keys()]);
  for (const [id, p] of ref.probabilities) {
    const answer = response.answers[id]!;
    if (answer.type === 'noul') {
      worst = Math.max(worst, near(answer.noul, p.get('true')!));
      continue;
    }
    const probs = answer.probabilities as Record<string, number>;
    expect(Object.keys(probs).sort()).toEqual([...p.keys()].sort());
    for (const [option, want] of p) worst = Math.max(worst, near(probs[option]!, want));
    const sorted = [...p.values()].sort((x, y) => y - x);
    near(answer.confidence, sorted[0]!);
    if (answer.type === 'choice' && sorted[0]! - sorted[1]! > 2 * (ROUNDING + tolerance)) {
      expect(p.get(answer.choice)).toBe(sorted[0]);
    }
    if (answer.type === 'score') {
      const expected = [...p].reduce((s, [level, q]) => s + Number(level) * q, 0);
      near(answer.score, expected, p.size * p.size);
    }
  }
  return worst;
}

/** Every answer is a distribution: numbers in [0, 1] summing to 1 (within rounding). */
export function expectValidAnswers(response: SystemOneResponse): void {
  for (const answer of Object.values(response.answers)) {
    if (answer.type === 'noul') {
      expect(answer.noul).toBeGreaterThanOrEqual(0);
      expect(answer.noul).toBeLessThanOrEqual(1);
      continue;
    }
    const values = Object.values(answer.probabilities as Record<string, number>);
    for (const v of values) expect(v >= 0 && v <= 1).toBe(true);
    const sum = values.reduce((s, v) => s + v, 0);
    expect(Math.abs(sum - 1)).toBeLessThanOrEqual(ROUNDING * values.length + 1e-9);
  }
}

/** Every number of a response's answers, question by question, for comparing two responses. */
export function numbersOf(response: SystemOneResponse): number[][] {
  return Object.values(response.answers).map((answer) => {
    if (answer.type === 'noul') return [answer.noul];
    const probs = Object.values(answer.probabilities as Record<string, number>);
    const score = answer.type === 'score' ? [answer.score] : [];
    return [answer.confidence, ...score, ...probs];
  });
}
