/**
 * `<clef-decide>` in Chromium, on the tiny random-weight package the dev server serves. The
 * numbers come from the engine; what is checked here is that the element shows exactly those
 * numbers, shares one engine, follows its bound field and reports failures.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';

const PAGE = '/test/browser/pages/element.html';

interface Recorded {
  type: string;
  target: string;
  detail: any;
}

async function events(page: Page, type: string, target?: string): Promise<Recorded[]> {
  const all: Recorded[] = await page.evaluate(() => (window as any).events);
  return all.filter((e) => e.type === type && (target === undefined || e.target === target));
}

async function waitForEvents(page: Page, type: string, target: string, count: number) {
  await page.waitForFunction(
    ([type, target, count]) =>
      (window as any).events.filter((e: any) => e.type === type && e.target === target).length >=
      (count as number),
    [type, target, count] as const,
    { timeout: 90_000 },
  );
}

/** Counts requests for package files, the worker's included (Chromium reports them here). */
function countRequests(page: Page, suffix: string): () => number {
  let n = 0;
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith(suffix)) n++;
  });
  return () => n;
}

// One page and one model load for these checks: loading is the slow part on a shared CPU.
test.describe.serial('two elements on one page', () => {
  let page: Page;
  let manifests: () => number;
  let backbones: () => number;

  test.beforeAll(async ({ browser }, testInfo) => {
    page = await browser.newPage({ baseURL: testInfo.project.use.baseURL });
    manifests = countRequests(page, '/manifest.json');
    // The elements run on WASM: its backbone graph is the WASM-prepared one.
    backbones = countRequests(page, '/backbone.wasm.onnx');
    await page.goto(PAGE);
    await waitForEvents(page, 'clef-decision', 'bound', 1);
    await waitForEvents(page, 'clef-decision', 'themed', 1);
  });
  test.afterAll(async () => {
    await page.close();
  });

  test('renders every answer with a bar per option, two elements sharing one model load', async ({
    browserName: _browser,
  }, testInfo) => {
    expect(manifests()).toBe(1);
    expect(backbones()).toBe(1);
    expect(await page.evaluate(() => (window as any).registry.loadsStarted)).toBe(1);

    const [decision] = await events(page, 'clef-decision', 'bound');
    const { request, response, timings } = decision!.detail;
    expect(request.state).toBe('My card was charged twice for one order.');
    expect(Object.keys(request.questions)).toEqual(['route', 'urgent', 'severity']);
    expect(request.questions.route.criteria).toEqual({
      billing: 'Money problems',
      shipping: 'Parcels and delivery',
      other: null,
    });
    expect(request.model).toBe('clef-tiny'); // the package's own name: no model-name attribute
    expect(Object.keys(response.answers)).toEqual(['route', 'urgent', 'severity']);
    expect(timings.totalMs).toBeGreaterThan(0);

    const bound = page.locator('#bound');
    // Choice: one meter per option, valued as the response says (display rounds to 0.1 %).
    const route = response.answers.route;
    const routeView = bound.locator('[part~=answer][data-question=route]');
    const meters = routeView.locator('[role=meter]');
    await expect(meters).toHaveCount(3);
    for (const [i, [option, p]] of Object.entries(route.probabilities).entries()) {
      const meter = meters.nth(i);
      await expect(meter).toHaveAttribute('aria-label', new RegExp(`^route: ${option}`));
      const now = Number(await meter.getAttribute('aria-valuenow'));
      expect(Math.abs(now - (p as number) * 100)).toBeLessThanOrEqual(0.05 + 1e-9);
    }
    const best = Object.entries(route.probabilities as Record<string, number>).reduce((a, b) =>
      b[1] > a[1] ? b : a,
    )[0];
    await expect(routeView.locator('[part=value]')).toHaveText(best);
    await expect(routeView.locator('[part~=bar-chosen]')).toHaveAttribute(
      'aria-label',
      `route: ${best} (chosen)`,
    );

    // Yes/no: P(yes) as one meter.
    const urgent = response.answers.urgent.noul as number;
    const urgentMeter = bound.locator('[data-question=urgent] [role=meter]');
    expect(
      Math.abs(Number(await urgentMeter.getAttribute('aria-valuenow')) - urgent * 100),
    ).toBeLessThanOrEqual(0.05 + 1e-9);
    await expect(bound.locator('[data-question=urgent] [part=value]')).toHaveText(
      urgent >= 0.5 ? 'yes' : 'no',
    );

    // Score: the scale sits at the expected level; one bar per rubric level, with its text.
    const severity = response.answers.severity;
    const scale = bound.locator('[data-question=severity] [part=scale]');
    expect(Number(await scale.getAttribute('aria-valuenow'))).toBeCloseTo(severity.score, 10);
    await expect(scale).toHaveAttribute('aria-valuemax', '2');
    await expect(bound.locator('[data-question=severity] [part~=bar]')).toHaveCount(3);
    await expect(bound.locator('[data-question=severity] [part~=option]').nth(2)).toContainText(
      'costly',
    );

    // The live region announces the decision; the header slot is shown.
    await expect(bound.locator('[role=status]')).toContainText(`route: ${route.choice}`);
    await expect(bound.getByRole('heading', { name: 'Routing' })).toBeVisible();

    // Progress reached both elements (the second by replay of the shared load).
    for (const id of ['bound', 'themed']) {
      const phases = new Set((await events(page, 'clef-progress', id)).map((e) => e.detail.phase));
      expect(phases.has('download') || phases.has('compile')).toBe(true);
    }
    await page.screenshot({ path: testInfo.outputPath('element.png'), fullPage: true });
  });

  test('passes an axe-core accessibility check', async () => {
    await page.addScriptTag({ path: 'node_modules/axe-core/axe.min.js' });
    const violations = await page.evaluate(async () => {
      const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v: any) => ({
        id: v.id,
        help: v.help,
        nodes: v.nodes.map((n: any) => n.target.join(' ')),
      }));
    });
    expect(violations).toEqual([]);
  });

  test('re-decides as the bound field changes: debounced, superseded requests dropped', async () => {
    const first = (await events(page, 'clef-decision', 'bound'))[0]!.detail;
    // A long pause makes "no decision while typing" independent of how busy the machine is.
    await page.evaluate(() => ((document.getElementById('bound') as any).debounce = 1500));

    // The page's debounce timers (the only ones of 1500 ms), tracked so that "nothing else may
    // follow" is a fact about pending work rather than a wait on the clock.
    await page.evaluate(() => {
      const pending = new Set<unknown>();
      const { setTimeout: set, clearTimeout: clear } = window;
      (window as any).__restoreTimers = () =>
        Object.assign(window, { setTimeout: set, clearTimeout: clear });
      (window as any).__pendingDebounces = () => pending.size;
      window.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
        if (ms !== 1500) return set(fn, ms, ...args);
        const id = set(() => {
          pending.delete(id);
          fn(...args);
        }, ms);
        pending.add(id);
        return id;
      }) as typeof window.setTimeout;
      window.clearTimeout = ((id?: number) => {
        pending.delete(id);
        clear(id);
      }) as typeof window.clearTimeout;
    });

    const text = 'The parcel arrived broken, I was charged twice and I want a refund today.';
    const ticket = page.getByLabel('Ticket text');
    await ticket.fill('');
    await ticket.pressSequentially(text, { delay: 10 });
    expect(await events(page, 'clef-decision', 'bound')).toHaveLength(1);
    await waitForEvents(page, 'clef-decision', 'bound', 2);
    // Nothing else may follow: once the second decision is in, no debounce is pending and no
    // decision is in flight (a stray one would be one or the other, or a third event).
    const quiet = await page.evaluate(() => ({
      pending: (window as any).__pendingDebounces(),
      deciding: (document.getElementById('bound') as any)._deciding,
    }));
    await page.evaluate(() => (window as any).__restoreTimers());
    expect(quiet).toEqual({ pending: 0, deciding: false });
    const after = await events(page, 'clef-decision', 'bound');
    expect(after).toHaveLength(2);
    const latest = after[1]!.detail;
    expect(latest.request.state).toBe(text);
    expect(latest.response.usage.input_tokens).toBeGreaterThan(first.response.usage.input_tokens);

    const themedBefore = (await events(page, 'clef-decision', 'themed')).length;
    // Two calls at once: the first is cancelled (resolves null), only the second is shown.
    const outcome = await page.evaluate(async () => {
      const el = document.getElementById('themed') as any;
      const [a, b] = await Promise.all([el.decide(), el.decide()]);
      return { a, b: b?.response ?? null };
    });
    expect(outcome.a).toBeNull();
    expect(outcome.b).not.toBeNull();
    expect(await events(page, 'clef-decision', 'themed')).toHaveLength(themedBefore + 1);
    expect(await events(page, 'clef-error')).toHaveLength(0);
  });

  test("info() is the engine's state now: its counters move with each decision", async () => {
    const read = () =>
      page.evaluate(async () => {
        const info = await (document.getElementById('themed') as any).info();
        return { decisions: info.counters.decisions, tokens: info.counters.backboneTokens };
      });
    const before = await read();
    // Both elements share one engine, and each has decided at least once.
    expect(before.decisions).toBeGreaterThanOrEqual(2);
    await page.evaluate(() => (document.getElementById('themed') as any).decide());
    const after = await read();
    expect(after.decisions).toBe(before.decisions + 1);
    expect(after.tokens).toBeGreaterThan(before.tokens);
  });

  test('shows failures in place and dispatches clef-error with the typed error', async () => {
    const themed = page.locator('#themed');

    // A request the contract refuses: a choice needs at least two options.
    await page.evaluate(() => {
      (document.getElementById('themed') as any).questions = {
        next: { type: 'choice', criteria: { only: null } },
      };
    });
    await waitForEvents(page, 'clef-error', 'themed', 1);
    const [invalid] = await events(page, 'clef-error', 'themed');
    expect(invalid!.detail.code).toBe('validation_error');
    expect(invalid!.detail.status).toBe(422);
    expect(invalid!.detail.phase).toBe('decide');
    expect(invalid!.detail.body.detail[0].loc).toEqual(['body', 'questions', 'next', 'criteria']);
    await expect(themed.getByRole('alert')).toContainText('criteria');
    await expect(themed.locator('[part~=answer]')).toHaveCount(0);

    // Fixing the questions clears the error.
    await page.evaluate(() => {
      (document.getElementById('themed') as any).questions = {
        next: { type: 'choice', criteria: { refund: null, resend: null } },
      };
    });
    await expect(themed.locator('[part~=answer]')).toHaveCount(1);
    await expect(themed.getByRole('alert')).toHaveCount(0);

    // A package that does not exist: a load error, in place, with a retry button. (Vite's dev
    // server would answer its own index.html for an unknown path, so the 404 is made here.)
    await page.route('**/models/does-not-exist/**', (route) => route.fulfill({ status: 404 }));
    await page.evaluate(() => {
      const el = document.createElement('clef-decide') as any;
      el.id = 'missing';
      el.model = '/models/does-not-exist/';
      el.device = 'wasm';
      el.state = 'anything';
      el.questions = { q: { type: 'noul' } };
      document.querySelector('main')!.append(el);
    });
    await waitForEvents(page, 'clef-error', 'missing', 1);
    const [load] = await events(page, 'clef-error', 'missing');
    expect(load!.detail.phase).toBe('load');
    expect(load!.detail.code).toBe('download_failed');
    const missing = page.locator('#missing');
    await expect(missing.getByRole('alert')).toContainText('manifest.json');
    await missing.getByRole('button', { name: 'Retry' }).focus();
    await page.keyboard.press('Enter');
    await waitForEvents(page, 'clef-error', 'missing', 2);
  });
});

test('decides on WebGPU when asked to', async ({ page }) => {
  await page.goto(PAGE);
  const device = await page.evaluate(async () => {
    const el = document.createElement('clef-decide') as any;
    el.id = 'gpu';
    el.model = '/models/tiny/';
    el.device = 'webgpu';
    el.state = 'The screen flickers.';
    el.questions = { broken: { type: 'noul' } };
    const decided = new Promise((resolve) => el.addEventListener('clef-decision', resolve));
    document.querySelector('main')!.append(el);
    await decided;
    return (await el.info()).device;
  });
  expect(device).toBe('webgpu');
  await expect(page.locator('#gpu [role=meter]')).toHaveCount(1);
});

test.describe('the built single-script bundle', () => {
  test.beforeAll(() => {
    // The production build of vite.element.config.ts, into a folder the dev server serves.
    execFileSync(
      'node_modules/.bin/vite',
      ['build', '--config', 'vite.element.config.ts', '--outDir', 'test-results/element-dist'],
      { stdio: 'pipe' },
    );
    copyFileSync(
      'test-results/element-dist/clef-decide.js',
      'test-results/element-dist/clef-decide.copy.js',
    );
  });

  test('works from a script tag, included twice, with its own worker chunk', async ({ page }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const workers: string[] = [];
    page.on('worker', (w) => workers.push(w.url()));
    const manifests = countRequests(page, '/manifest.json');
    // Served as built, as a static host would: Vite's dev transforms must not touch the bundle.
    await page.route('**/test-results/element-dist/**', (route) =>
      route.fulfill({
        body: readFileSync(new URL(route.request().url()).pathname.slice(1)),
        headers: {
          'content-type': 'text/javascript',
          'cross-origin-embedder-policy': 'require-corp',
          'cross-origin-resource-policy': 'same-origin',
        },
      }),
    );
    await page.goto('/test/browser/pages/element-bundle.html');
    await expect(page.locator('#one [part~=answer]')).toHaveCount(1, { timeout: 90_000 });
    await expect(page.locator('#two [part~=answer]')).toHaveCount(1, { timeout: 90_000 });
    expect(errors).toEqual([]);
    expect(manifests()).toBe(1);
    expect(workers.some((u) => /\/test-results\/element-dist\/assets\/clef\.worker-/.test(u))).toBe(
      true,
    );
  });
});
