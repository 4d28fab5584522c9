import { expect, test } from '@playwright/test';

for (const device of ['wasm', 'webgpu'] as const) {
  test(`decides on ${device}`, async ({ page }) => {
    page.on('console', (m) => console.log(`[page] ${m.text()}`));
    await page.goto('/test/browser/pages/harness.html');
    await expect(page.locator('#status')).toHaveText('ready');
    const out = await page.evaluate(async (device) => {
      const { createClef } = (window as any).clefWeb;
      const clef = await createClef({ model: '/models/tiny/', device, cache: false });
      const response = await clef.systemone({
        model: 'clef-tiny',
        state: 'My card was charged twice for one order.',
        questions: {
          route: { type: 'choice', criteria: { billing: 'Money', shipping: 'Parcels', other: null } },
          urgent: { type: 'noul' },
        },
      });
      const info = await clef.info();
      await clef.dispose();
      return { response, info };
    }, device);
    console.log(JSON.stringify(out));
    expect(out.info.device).toBe(device);
    expect(Object.keys(out.response.answers)).toEqual(['route', 'urgent']);
  });
}
