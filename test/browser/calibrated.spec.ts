/**
 * Calibrated answers in Chromium with real onnxruntime-web (WASM), on the committed clef-nano
 * package and its calibration.json: opt-in per clef and per call, the System One body unchanged
 * byte for byte, probabilities and sets that follow the file (recomputed here from the logits
 * the engine returned), the HTTP route, the typed refusal without a calibration, and the
 * element's "not sure" state.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { referenceCalibrated, type ReferenceTypeEntry } from '../support/calibration-reference.js';

const PAGE = '/test/browser/pages/calibrated.html';
/** The choice entry of clef-nano's calibration.json, read as plain JSON (not by src's parser). */
const choiceEntry = (
  JSON.parse(readFileSync('models/clef-nano/calibration.json', 'utf8')) as {
    types: { choice: ReferenceTypeEntry };
  }
).types.choice;

const OPTIONS = [
  'pay_bill',
  'bill_due',
  'bill_balance',
  'weather',
  'alarm',
  'timer',
  'meal_suggestion',
  'translate',
  'flip_coin',
  'roll_dice',
];
const request = (state: string) => ({
  model: 'clef-nano',
  state,
  questions: {
    intent: {
      type: 'choice',
      instructions: "Which intent does the user's message express?",
      criteria: Object.fromEntries(OPTIONS.map((o) => [o, null])),
    },
    about: { type: 'noul', instructions: 'Is this message about pay_bill?' },
  },
});

test.describe.serial('calibrated answers', () => {
  let page: Page;
  test.beforeAll(async ({ browser }, testInfo) => {
    page = await browser.newPage({ baseURL: testInfo.project.use.baseURL });
    await page.goto(PAGE);
    await page.waitForFunction(() => (window as any).harness !== undefined);
    await page.evaluate(async () => {
      const h = (window as any).harness;
      await h.open('nano', { model: '/clef-web/models/clef-nano/', device: 'wasm' });
      await h.open('floor', {
        model: '/clef-web/models/clef-nano/',
        device: 'wasm',
        calibration: { abstainBelow: 1 },
      });
      await h.open('tiny', { model: '/models/tiny/', device: 'wasm' });
    });
  });
  test.afterAll(async () => page.close());

  const decide = (name: string, body: unknown, options?: unknown) =>
    page.evaluate(([n, b, o]) => (window as any).harness.decide(n, b, o), [
      name,
      body,
      options,
    ] as const);

  test('opt-in per call: the body is unchanged and the extension follows the file', async () => {
    for (const state of ['please pay my water bill', 'what is the weather like', 'hmm']) {
      const plain = await decide('nano', request(state));
      const asked = await decide('nano', request(state), { calibration: true });
      expect(plain.ok && asked.ok).toBe(true);
      expect(plain.calibrated).toBeNull();
      expect(asked.json).toBe(plain.json);
      const [choice, noul] = asked.calibrated.questions;
      expect(noul).toEqual({ id: 'about', type: 'noul', calibrated: false });
      // Expected from the test's own implementation of the file's meaning, not src's.
      const expected = referenceCalibrated(choiceEntry, asked.logits[0]);
      expect(expected.band).toEqual({ minOptions: 2, maxOptions: 12 });
      expect(choice.band).toEqual(expected.band);
      expect(choice.options).toEqual([...OPTIONS].sort());
      choice.probabilities.forEach((p: number, i: number) =>
        expect(p).toBeCloseTo(expected.probabilities[i]!, 12),
      );
      expect(choice.set).toEqual(expected.set.map((i) => choice.options[i]));
      expect(choice.abstain).toBe(expected.set.length > 1);
      expect(asked.calibrated.abstain).toBe(choice.abstain);
    }
  });

  test('a default from createClef, overridden per call', async () => {
    const floor = await decide('floor', request('please pay my water bill'));
    expect(floor.calibrated.abstainBelow).toBe(1);
    expect(floor.calibrated.questions[0].abstain).toBe(true); // no confidence reaches 1
    const off = await decide('floor', request('please pay my water bill'), { calibration: false });
    expect(off.calibrated).toBeNull();
  });

  test('a package without a calibration refuses with a typed error', async () => {
    const r = await decide(
      'tiny',
      { model: 'clef-tiny', state: 'x', questions: { q: { type: 'noul' } } },
      { calibration: true },
    );
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({
      name: 'CalibrationError',
      code: 'calibration_unavailable',
      isError: true,
    });
  });

  test('HTTP: the System One route is unchanged; the clef route adds the extension', async () => {
    const body = request('please pay my water bill');
    const [standard, extended] = await page.evaluate(async (b) => {
      const h = (window as any).harness;
      return [
        await h.fetch('nano', '/v1/systemone', b),
        await h.fetch('nano', '/v1/clef/calibrated?abstain_below=0.5', b),
      ];
    }, body);
    expect(standard.status).toBe(200);
    expect(extended.status).toBe(200);
    expect(extended.text.startsWith(`{"response":${standard.text},"calibrated":`)).toBe(true);
    const parsed = JSON.parse(extended.text);
    expect(parsed.calibrated.abstainBelow).toBe(0.5);
    // The set and the abstention the route sent, against the reference on the same logits.
    const direct = await decide('nano', body, { calibration: true });
    const want = referenceCalibrated(choiceEntry, direct.logits[0], 0.5);
    const q = parsed.calibrated.questions[0];
    expect(q.set).toEqual(want.set.map((i) => q.options[i]));
    expect(q.abstain).toBe(want.abstain);
    expect(q.options[want.top]).toBe(q.top);
    const bad = await page.evaluate(
      (b) => (window as any).harness.fetch('nano', '/v1/clef/calibrated?abstain_below=2', b),
      body,
    );
    expect(bad.status).toBe(422);
  });

  test('<clef-decide abstain-below> shows "not sure" with the set; events carry it', async () => {
    await page.waitForFunction(
      () =>
        ['unsure', 'plain'].every((id) =>
          (window as any).events.some((e: any) => e.type === 'clef-decision' && e.target === id),
        ),
      undefined,
      { timeout: 90_000 },
    );
    const events = await page.evaluate(() => (window as any).events);
    const unsure = events.find((e: any) => e.target === 'unsure' && e.type === 'clef-decision');
    const plain = events.find((e: any) => e.target === 'plain' && e.type === 'clef-decision');
    expect(plain.detail.calibrated).toBeUndefined();
    expect(unsure.detail.json).toBe(plain.detail.json);
    const q = unsure.detail.calibrated.questions[0];
    expect(q.abstain).toBe(true);
    const shown = await page.locator('#unsure').locator('[part="set-option"]').allTextContents();
    expect(shown.map((t) => t.trim().split(/\s+/)[0])).toEqual(q.set);
    await expect(page.locator('#unsure [part="unsure"]')).toContainText('Not sure');
    await expect(page.locator('#plain [part="unsure"]')).toHaveCount(0);
    await expect(page.locator('#plain [part="sure"]')).toHaveCount(0);
  });
});
