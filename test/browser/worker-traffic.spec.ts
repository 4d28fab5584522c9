/**
 * What one decision costs across the page ↔ worker boundary, counted on the real worker: each
 * surface (systemone, decide, clef.fetch, the element) makes one worker call per decision, with
 * recording on too (the record's engine facts come with the answer, not from a second `info()`);
 * the answer carries the body once (its JSON text, no response object beside it), and the head's
 * logits only for `decide()`, the one surface that returns them.
 */
import { expect, test } from '@playwright/test';

const REQUEST = {
  model: 'clef-nano',
  state: { amount: 12.5, text: 'two charges on my card I never made' },
  questions: {
    route: {
      type: 'choice',
      criteria: { report_fraud: 'Fraudulent charges', card_declined: null, none: null },
    },
    upset: { type: 'noul' },
    severity: { type: 'score', criteria: ['none', { level: 1, text: 'some' }, 'a lot'] },
  },
};

test('one worker call and one copy of the answer per decision, logits only for decide()', async ({
  page,
}) => {
  await page.goto('/test/browser/pages/worker-traffic.html');
  await page.waitForFunction(() => (window as any).traffic !== undefined);
  const out = await page.evaluate((r) => (window as any).traffic.run(r), REQUEST);

  const steps: [string, any][] = Object.entries({
    systemone: out.systemone,
    decide: out.decide,
    fetch: out.fetched,
    element: out.element,
  });
  for (const [name, step] of steps) {
    const said = step.calls.map(
      (c: any) => `${c.method} (${c.answer?.bytes ?? '?'} B: ${c.answer?.keys})`,
    );
    console.log(`${name}: ${said.join('; ')}`);
  }
  for (const [name, step] of steps) {
    const methods = step.calls.map((c: any) => c.method);
    expect(methods, `${name}: the worker calls of one recorded decision`).toEqual(['systemone']);
    const answer = step.calls[0].answer;
    expect(answer, `${name}: the answer arrived`).toBeDefined();
    expect(answer.keys, `${name}: the body crosses once, as JSON text`).toContain('json');
    expect(answer.keys, `${name}: no response object beside the JSON text`).not.toContain(
      'response',
    );
    const wantsLogits = name === 'decide';
    expect(answer.logitRows, `${name}: logits cross only when asked for`).toBe(
      wantsLogits ? 3 : null,
    );
    expect(step.logitRows, `${name}: the surface returns logits only from decide()`).toBe(
      wantsLogits ? 3 : null,
    );
  }

  // The page read the response back from the JSON text: the same answer, legend echoes included.
  expect(out.decided.response).toEqual(JSON.parse(out.decided.json));
  expect(out.decided.response.answers.severity.legend['1']).toEqual({ level: 1, text: 'some' });

  // Three records from createClef's three decisions, naming the engine that answered.
  expect(out.records).toHaveLength(3);
  for (const r of out.records) {
    expect(r.surface).toBe('page');
    expect(r.engine.device).toBe('wasm');
    expect(r.engine.runtime).toBe('onnxruntime-web/wasm');
    expect(r.package.model).toBe('clef-nano');
    expect(r.package.manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
  }
  expect(out.records[0].response).toEqual(out.decided.response);
  expect(out.records[1].response).toEqual(out.decided.response);
  expect(out.fetchedLegendIsMap, "clef.fetch's record echoes the parsed body's Map").toBe(true);
});
