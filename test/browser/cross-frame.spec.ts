/**
 * The page API and `<clef-decide>` expose nothing to other frames. A page loads an
 * engine and an element, then a frame from another origin (https://evil.example, served by
 * Playwright's router: no request leaves the machine) tries everything a hostile frame can:
 * reach into the parent's globals, and post Comlink-shaped calls (with and without a transferred
 * port) to the parent window. None may reach the engine: no reply arrives, the engine's decision
 * count does not move, and the page still decides afterwards.
 */
import { expect, test, type Frame } from '@playwright/test';

const EVIL = 'https://evil.example';
const FRAME_HTML = `<!doctype html><html><body><p>frame</p></body></html>`;

interface PageClef {
  decide(body: object): Promise<unknown>;
  info(): Promise<{ counters: { decisions: number } }>;
}

const body = {
  model: 'clef-tiny',
  state: 'My card was charged twice.',
  questions: { urgent: { type: 'noul', instructions: 'Is this urgent?' } },
};

test('a frame of another origin can neither reach nor drive the engine', async ({ page }) => {
  // The hostile frame's document: under the page's COEP it must opt in to being embedded.
  await page.route(`${EVIL}/**`, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html',
      headers: {
        'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      },
      body: FRAME_HTML,
    }),
  );
  await page.goto('/test/browser/pages/harness.html');
  await page.locator('#status').filter({ hasText: 'ready' }).waitFor();
  const before = await page.evaluate(async (body) => {
    const w = window as unknown as {
      clefWeb: { createClef(o: object): Promise<PageClef> };
      __clef: PageClef;
    };
    w.__clef = await w.clefWeb.createClef({ model: '/models/tiny/', device: 'wasm' });
    await w.__clef.decide(body);
    // An element too, so its engine lease and shadow DOM are part of what the frame may probe.
    await import('/src/element/clef-decide/define.ts' as string);
    document.body.insertAdjacentHTML(
      'beforeend',
      '<clef-decide model="/models/tiny/" device="wasm" state="hello"></clef-decide>',
    );
    const frame = document.createElement('iframe');
    frame.src = 'https://evil.example/frame.html';
    document.body.append(frame);
    await new Promise((r) => frame.addEventListener('load', r, { once: true }));
    return (await w.__clef.info()).counters.decisions;
  }, body);
  expect(before).toBe(1);

  const evil = page.frames().find((f) => f.url().startsWith(EVIL)) as Frame;
  expect(evil, 'the cross-origin frame loaded').toBeTruthy();
  const probe = await evil.evaluate(async (body) => {
    const reach: Record<string, string> = {};
    for (const [name, get] of [
      ['__clef', () => (parent as unknown as { __clef: unknown }).__clef],
      ['clefWeb', () => (parent as unknown as { clefWeb: unknown }).clefWeb],
      ['document', () => parent.document.body],
      ['customElements', () => parent.customElements.get('clef-decide')],
    ] as const) {
      try {
        get();
        reach[name] = 'reached';
      } catch (e) {
        reach[name] = (e as Error).name;
      }
    }
    // Comlink's wire messages, as the page's own endpoints would see them, posted to the parent
    // window, once with a port for the reply and once with the reply expected on this window.
    const replies: unknown[] = [];
    addEventListener('message', (e) => replies.push(e.data));
    const calls = [
      { id: 'a', type: 'APPLY', path: ['decide'], argumentList: [{ type: 'RAW', value: body }] },
      { id: 'b', type: 'GET', path: ['info'] },
      { id: 'c', type: 'APPLY', path: ['systemone'], argumentList: [{ type: 'RAW', value: body }] },
      { id: 'd', type: 'ENDPOINT' },
    ];
    for (const call of calls) {
      const { port1, port2 } = new MessageChannel();
      port1.onmessage = (e) => replies.push(e.data);
      parent.postMessage(call, '*');
      parent.postMessage(call, '*', [port2]);
    }
    for (let i = 0; i < 20; i++) parent.postMessage({ ...calls[0], id: `x${i}` }, '*');
    await new Promise((r) => setTimeout(r, 1500));
    return { reach, replies: replies.length };
  }, body);

  for (const name of ['__clef', 'clefWeb', 'document', 'customElements']) {
    expect(probe.reach[name], `parent.${name} from another origin`).toBe('SecurityError');
  }
  expect(probe.replies, 'replies to the frame').toBe(0);

  const after = await page.evaluate(async (body) => {
    const clef = (window as unknown as { __clef: PageClef }).__clef;
    const idle = (await clef.info()).counters.decisions;
    await clef.decide(body);
    return { idle, next: (await clef.info()).counters.decisions };
  }, body);
  expect(after.idle, 'decisions run because of the frame').toBe(before);
  expect(after.next).toBe(before + 1);
});
