// Fuzzing: 10,000 seeded malformed, hostile and valid request bodies through
// parseRequestJson + validateRequest. Each must end in one of the documented outcomes (a
// JsonSyntaxError for a body that is not JSON, a SystemOneError with the status and body
// system-one.md prescribes, or a validated request with the expected questions), never anything
// else. (How fast they parse is the benchmarks' business, not a wall-clock bound here: a hang
// is caught by the test's timeout, and the slowest case is logged.) Reproduce a failure with FUZZ_SEED=<seed> and the case index printed.
import { describe, expect, it } from 'vitest';
import { SystemOneError } from '../../../src/protocol/errors.js';
import { JsonSyntaxError, parseRequestJson } from '../../../src/protocol/json.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import { generateCase } from '../../../tools/fuzz/cases.js';
import { checkResponse, checkValidRequest } from '../../../tools/fuzz/check.js';
import type { FuzzCase } from '../../../tools/fuzz/expect.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
const COUNT = 10_000;
const MODELS = ['clef-tiny', 'clef-tiny-alias'];

function run(c: FuzzCase): string[] {
  const text = c.body as string;
  let body: unknown;
  try {
    body = parseRequestJson(text);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) return [`parse threw ${String(e)}`];
    const p = e.position;
    if (!Number.isInteger(p) || p < 0 || p > text.length) return [`position ${p} outside the text`];
    const notJson = c.expect.status === 400 && c.expect.reason === 'not-json';
    return notJson ? [] : [`not JSON (${e.message}), want ${c.expect.status}`];
  }
  try {
    return checkValidRequest(c.expect, validateRequest(body, { models: MODELS }));
  } catch (e) {
    if (!(e instanceof SystemOneError)) return [`validate threw ${String(e)}`];
    if (c.expect.status === 400 && c.expect.reason === 'not-json') return ['parsed, want not JSON'];
    // The body a route would send: the error's own, as JSON text.
    return checkResponse(c, e.status, JSON.stringify(e.body), { contextTokens: Infinity });
  }
}

describe('fuzzing parseRequestJson + validateRequest', () => {
  it(`answers ${COUNT} generated bodies as system-one.md prescribes (seed ${SEED})`, () => {
    console.log(`fuzz-protocol: seed ${SEED}, ${COUNT} cases (FUZZ_SEED=${SEED} reproduces)`);
    const failures: string[] = [];
    const kinds = new Map<string, number>();
    const statuses = new Map<number, number>();
    let slowest = { ms: 0, index: -1, kind: '' };
    for (let i = 0; i < COUNT; i++) {
      const c = generateCase(SEED, i, { transport: 'text' });
      const started = performance.now();
      const problems = run(c);
      const ms = performance.now() - started;
      if (ms > slowest.ms) slowest = { ms, index: i, kind: c.kind };
      kinds.set(c.kind.split(':')[0]!, (kinds.get(c.kind.split(':')[0]!) ?? 0) + 1);
      statuses.set(c.expect.status, (statuses.get(c.expect.status) ?? 0) + 1);
      if (problems.length > 0 && failures.length < 20) {
        failures.push(`case ${i} (${c.kind}): ${problems.join('; ')}`);
      }
    }
    console.log(
      `fuzz-protocol: kinds ${JSON.stringify(Object.fromEntries(kinds))}, expected statuses ` +
        `${JSON.stringify(Object.fromEntries(statuses))}, slowest case ${slowest.index} ` +
        `(${slowest.kind}) ${slowest.ms.toFixed(1)} ms`,
    );
    expect(failures).toEqual([]);
    // The mix really covers each outcome (a generator bug could drift to one kind).
    for (const status of [200, 400, 422]) expect(statuses.get(status) ?? 0).toBeGreaterThan(500);
  }, 120_000);

  it('is seeded: the same (seed, index) gives the same case, another seed another one', () => {
    const a = [0, 1, 1999, 4321].map((i) => generateCase(SEED, i, { transport: 'text' }));
    const b = [0, 1, 1999, 4321].map((i) => generateCase(SEED, i, { transport: 'text' }));
    expect(b).toEqual(a);
    const other = [0, 1, 1999, 4321].map((i) => generateCase(SEED + 1, i, { transport: 'text' }));
    expect(other.map((c) => c.body)).not.toEqual(a.map((c) => c.body));
  });
});
