// The worker sends a decision's body once, as JSON text, and the page reads the response
// object back from it (src/client/answer.ts). Checked on fresh random valid requests (the fuzz
// generator's), each as a page script writes it (plain objects) and as parsed from text (Maps,
// PyNumbers): the object read back equals, key order and types included, what the page got when
// the worker sent the engine's response object itself (its structured clone).
import { describe, expect, it } from 'vitest';
import { decisionOf } from '../../../src/client/answer.js';
import { buildResponse, serializeResponse } from '../../../src/protocol/answers.js';
import { parseRequestJson } from '../../../src/protocol/json.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import type { ValidRequest } from '../../../src/protocol/types.js';
import type { AnswerWire } from '../../../src/wire/wire.js';
import { caseRng, type Rng } from '../../../tools/fuzz/prng.js';
import { writeJson } from '../../../tools/fuzz/json-text.js';
import { validRequest } from '../../../tools/fuzz/valid.js';
import { testSeed } from '../../support/seed.js';

const CASES = 200;
const TIMINGS = {
  encodeMs: 1,
  backboneMs: 2,
  headMs: 3,
  totalMs: 6,
  prefixHit: false,
  backboneTokens: 9,
};

/** Every key path in enumeration order, with each value's kind (Map, array, object, number). */
function shape(value: unknown, path = '$'): string[] {
  if (value instanceof Map) {
    return [`${path}: Map`, ...[...value].flatMap(([k, v]) => shape(v, `${path}.${String(k)}`))];
  }
  if (Array.isArray(value)) {
    return [`${path}: array`, ...value.flatMap((v, i) => shape(v, `${path}[${i}]`))];
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    return [`${path}: object`, ...entries.flatMap(([k, v]) => shape(v, `${path}.${k}`))];
  }
  return [`${path}: ${typeof value} ${Object.is(value, -0) ? '-0' : String(value)}`];
}

/** The engine's response to `request`, on random logits, and its JSON text. */
function answered(rng: Rng, request: ValidRequest) {
  const layout = {
    questions: request.questions.map((q) => ({
      id: q.id,
      optionIds: q.type === 'noul' ? ['true', 'false'] : q.criteria.map(([name]) => name),
    })),
    inputIds: new Array<number>(rng.int(1, 900)).fill(0),
    truncatedStateTokens: rng.chance(0.3) ? rng.int(1, 40) : 0,
  };
  const logits = layout.questions.map((q) =>
    Float32Array.from(q.optionIds, () => (rng.next() - 0.5) * 24),
  );
  const response = buildResponse(request, layout, logits, request.model);
  return { response, json: serializeResponse(request, response), logits };
}

describe('the answer read back from its JSON text', () => {
  it(`equals the engine's response object on ${CASES} random requests, both body forms`, () => {
    const seed = testSeed('page answer');
    let echoesOnlyTheRequestKeeps = 0;
    for (let i = 0; i < CASES; i++) {
      const rng = caseRng(seed, i);
      const text = writeJson(validRequest(rng, { model: 'm' }).body);
      const at = `seed ${seed}, case ${i}: ${text}`;
      for (const body of [parseRequestJson(text), JSON.parse(text) as unknown]) {
        const request = validateRequest(body, { models: ['m'] });
        const { response, json, logits } = answered(rng, request);
        const before = structuredClone(response); // what crossed the boundary before
        const answer: AnswerWire = { json, timings: TIMINGS, device: 'wasm' };
        const wire = decisionOf(answer, body);
        // toStrictEqual compares `constructor` members by identity, and question ids may be
        // "constructor": the shape (every path, its kind and value, in order) is the strict part.
        expect(wire.response, at).toEqual(before);
        expect(shape(wire.response), at).toEqual(shape(before));
        expect(wire.json, at).toBe(json);
        expect(wire.timings, at).toBe(TIMINGS);
        expect('logits' in wire, at).toBe(false);
        // Asked-for logits come through as sent.
        const rows = logits.map((l) => Array.from(l));
        expect(decisionOf({ ...answer, logits: rows }, body).logits, at).toBe(rows);
        // The legend's echo is a copy, not the request's own value.
        for (const [id, a] of Object.entries(wire.response.answers)) {
          if (a.type !== 'score') continue;
          const given = request.questions.find((q) => q.id === id)!.criteria;
          for (const [level, description] of given) {
            const echoed = a.legend[level];
            if (typeof description === 'object' && description !== null) {
              expect(echoed, at).not.toBe(description);
            }
          }
        }
        if (shape(JSON.parse(json)).join('\n') !== shape(before).join('\n')) {
          echoesOnlyTheRequestKeeps++;
        }
      }
    }
    // The draw covers legends that JSON text alone cannot give back (Maps, PyNumbers).
    console.log(
      `page answer: ${echoesOnlyTheRequestKeeps} legends JSON text alone does not give back`,
    );
    expect(echoesOnlyTheRequestKeeps).toBeGreaterThan(20);
  });

  it('keeps what comes beside the body: calibrated answers and untrained parts', () => {
    const body = {
      model: 'm',
      state: 'x',
      questions: { s: { type: 'score', criteria: [{ a: 1 }, null] } },
    };
    const request = validateRequest(body, { models: ['m'] });
    const { response, json } = answered(caseRng(1, 1), request);
    const untrained = [{ question: 's', kind: 'question' as const, message: 'not trained' }];
    const calibrated = { questions: [] } as unknown as NonNullable<AnswerWire['calibrated']>;
    const wire = decisionOf({ json, timings: TIMINGS, device: 'js', calibrated, untrained }, body);
    expect(shape(wire.response)).toEqual(shape(structuredClone(response)));
    expect(Object.keys(wire)).toEqual(['response', 'json', 'timings', 'calibrated', 'untrained']);
    expect(wire.untrained).toBe(untrained);
    expect(wire.calibrated).toBe(calibrated);
  });
});
