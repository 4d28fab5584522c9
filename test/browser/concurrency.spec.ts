/**
 * Concurrency: twelve `<clef-decide>` elements and three page scripts deciding at
 * once on one shared WASM engine. Every request is answered exactly once, each caller's in the
 * order it sent them, none lost, and every answer is byte for byte the one a serial call gets.
 */
import { expect, test } from '@playwright/test';
import { MODEL, openPage, randomRequests } from './support/engine.js';

const PAGE = '/test/browser/pages/reliability.html';
const ELEMENTS = 12;
const CALLERS = 3;
const PER_CALLER = 8;

test('12 elements and 3 page scripts at once: each answered once, in order, as serially', async ({
  page,
}) => {
  test.setTimeout(150_000);
  await openPage(page, PAGE);
  const forElements = randomRequests(5150, ELEMENTS);
  const forCallers = Array.from({ length: CALLERS }, (_, c) => randomRequests(600 + c, PER_CALLER));
  const out = await page.evaluate(
    async ([forElements, forCallers]) => {
      const registry = window.reliability.sharedRegistry();
      const lease = registry.acquire('/models/tiny/', 'wasm');
      const host = document.getElementById('elements')!;
      for (const [i, request] of forElements.entries()) {
        const el = document.createElement('clef-decide') as HTMLElement & {
          questions: unknown;
          state: unknown;
          device: string;
          model: string;
        };
        el.id = `e${i}`;
        el.model = '/models/tiny/';
        el.device = 'wasm';
        el.state = request.state;
        el.questions = request.questions;
        host.append(el);
      }
      const clef = await lease.clef;
      // Each caller fires all its requests at once (decide and systemone alternating) and notes
      // the order its answers arrive in.
      const callers = forCallers.map(async (requests) => {
        const order: number[] = [];
        const settled = new Array<number>(requests.length).fill(0);
        const answers = await Promise.all(
          requests.map((q, i) => {
            const call =
              i % 2 === 0
                ? clef.decide(q).then((w) => JSON.parse(w.json) as unknown)
                : clef.systemone(q as any);
            return call.finally(() => {
              settled[i]!++;
              order.push(i);
            });
          }),
        );
        return { order, settled, answers };
      });
      const fromCallers = await Promise.all(callers);
      const events = () =>
        (
          window as unknown as {
            events: Array<{
              type: string;
              target: string;
              detail: { request: unknown; json: string };
            }>;
          }
        ).events;
      while (events().filter((e) => e.type === 'clef-decision').length < forElements.length) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 200)); // no late duplicates
      const fromElements = events().map((e) => ({
        type: e.type,
        target: e.target,
        request: e.type === 'clef-decision' ? e.detail.request : null,
        json: e.type === 'clef-decision' ? e.detail.json : null,
      }));
      // The same requests again, one at a time.
      const serial = {
        callers: [] as unknown[][],
        elements: [] as string[],
      };
      for (const requests of forCallers) {
        const answers = [];
        for (const q of requests) answers.push(JSON.parse((await clef.decide(q)).json));
        serial.callers.push(answers);
      }
      for (const e of fromElements) serial.elements.push((await clef.decide(e.request)).json);
      lease.release();
      return { fromCallers, fromElements, serial, loads: registry.loadsStarted };
    },
    [forElements, forCallers] as const,
  );
  expect(out.loads).toBe(1);
  out.fromCallers.forEach((caller, c) => {
    expect(caller.settled).toEqual(new Array(PER_CALLER).fill(1));
    expect(caller.order).toEqual([...Array(PER_CALLER).keys()]);
    expect(caller.answers).toEqual(out.serial.callers[c]);
    for (const answer of caller.answers) expect((answer as { model: string }).model).toBe(MODEL);
  });
  // One decision per element, no error, each for its own request, equal to the serial answer.
  expect(out.fromElements.map((e) => e.type)).toEqual(new Array(ELEMENTS).fill('clef-decision'));
  expect(out.fromElements.map((e) => e.target).sort()).toEqual(
    [...Array(ELEMENTS).keys()].map((i) => `e${i}`).sort(),
  );
  out.fromElements.forEach((e, k) => {
    const i = Number(e.target.slice(1));
    expect(e.request).toEqual(forElements[i]);
    expect(e.json).toBe(out.serial.elements[k]);
  });
});
