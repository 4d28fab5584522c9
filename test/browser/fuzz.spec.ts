/**
 * Browser fuzz: 10,000 malformed or hostile requests from the seeded generator in
 * tools/fuzz (wrong types at every path, huge and deeply nested states, 64/65 questions, 255/256
 * options, lone surrogates, duplicate keys, non-JSON and invalid UTF-8 bodies, multi-megabyte
 * bodies), plus some valid ones, through the page API on WASM: each through `clef.fetch` (the
 * HTTP shape) and, when it is JSON, through `clef.systemone` with the lossless parser's value.
 * Every answer must be the status and body system-one.md prescribes (tools/fuzz/check.ts), and
 * a valid request after each batch must still get the right answer.
 *
 * Reproduce one case: generateCase(SEED, index, OPTIONS) from tools/fuzz/cases.ts.
 */
import { expect, test } from '@playwright/test';
import { generateCase, type GenerateOptions } from '../../tools/fuzz/cases.js';
import { checkResponse } from '../../tools/fuzz/check.js';
import type { FuzzCase } from '../../tools/fuzz/expect.js';
import {
  FP32,
  MODEL,
  TINY_CONTEXT,
  TOLERANCE,
  expectResponseNear,
  infoOf,
  mustDecide,
  mustLoad,
  openPage,
  reference,
} from './support/engine.js';

const SEED = 20261130;
const OPTIONS: GenerateOptions = { model: MODEL, alias: 'clef-tiny-random', transport: 'http' };
/** Malformed cases (expected 400 or 422: rejected before the model) and valid ones (200). */
const MALFORMED = 10_000;
const VALID = 40;
const BATCH = 500;
const GOOD = {
  model: MODEL,
  state: 'Where is my parcel? It was due on Monday.',
  questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
};

function pickCases(): Array<{ index: number; c: FuzzCase }> {
  const out: Array<{ index: number; c: FuzzCase }> = [];
  let malformed = 0;
  let valid = 0;
  for (let index = 0; malformed < MALFORMED || valid < VALID; index++) {
    const c = generateCase(SEED, index, OPTIONS);
    if (c.expect.status === 200 ? valid++ < VALID : malformed++ < MALFORMED) out.push({ index, c });
  }
  return out;
}

test('10,000 malformed requests through clef.fetch and clef.systemone get the prescribed answers', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await openPage(page, '/test/browser/pages/reliability.html');
  await mustLoad(page, 'fuzz', { model: FP32, device: 'wasm' });
  const goodRef = await reference(GOOD);
  const cases = pickCases();
  const problems: string[] = [];
  const counts = { fetched: 0, systemone: 0, malformed: 0 };
  const check = { contextTokens: TINY_CONTEXT };
  let firstGood: string | null = null;
  for (let start = 0; start < cases.length; start += BATCH) {
    const batch = cases.slice(start, start + BATCH);
    const bodies = batch.map(({ c }) => (typeof c.body === 'string' ? c.body : [...c.body]));
    const answers = await page.evaluate(([b]) => window.reliability.fuzzBatch('fuzz', b), [
      bodies,
    ] as const);
    answers.forEach(({ fetched, systemone }, k) => {
      const { index, c } = batch[k]!;
      const at = `case ${index} (${c.kind})`;
      if (c.expect.status !== 200) counts.malformed++;
      if ('thrown' in fetched) problems.push(`${at} fetch threw ${fetched.thrown}`);
      else {
        counts.fetched++;
        for (const p of checkResponse(c, fetched.status, fetched.text, check))
          problems.push(`${at} fetch: ${p}`);
      }
      if (systemone === null) return;
      if ('thrown' in systemone) problems.push(`${at} systemone threw ${systemone.thrown}`);
      else {
        counts.systemone++;
        for (const p of checkResponse(c, systemone.status, systemone.text, check))
          problems.push(`${at} systemone: ${p}`);
      }
    });
    // The engine still answers a valid request, and answers it right.
    const good = await mustDecide(page, 'fuzz', GOOD);
    firstGood ??= good.json;
    expect(good.json).toBe(firstGood);
    expectResponseNear(good.response, goodRef, TOLERANCE.wasm.fp32.probability);
  }
  expect(problems.slice(0, 20)).toEqual([]);
  expect(counts.malformed).toBe(MALFORMED);
  expect(counts.fetched).toBe(MALFORMED + VALID);
  // Most cases are JSON (only non-JSON text and bytes skip the direct call).
  expect(counts.systemone).toBeGreaterThan(MALFORMED * 0.7);
  const info = await infoOf(page, 'fuzz');
  expect(info.counters.pending).toBe(0);
  expect(info.counters.liveTensors).toBe(info.counters.cachedTensors);
});
