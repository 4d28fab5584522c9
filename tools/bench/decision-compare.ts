/**
 * One decision's time on two packages, interleaved so that both see the same machine load: a
 * 151-option CLINC150 request and a 4-option one, the median of the runs after the first (a
 * warm-up) each, and their ratio. By default on onnxruntime-node, one thread; with `--wasm`, in
 * Chromium on WASM (both packages loaded in one page from the Vite dev server, so they must lie
 * under the repository, e.g. bench/work/), the device the issue's target names.
 *
 *   npx tsx tools/bench/decision-compare.ts <package-a> <package-b> [--runs 6] [--wasm]
 *       [--port 5399]   (--wasm: the dev server's port, or the next free one)
 */
import { parseArgs } from 'node:util';
import { relative, resolve } from 'node:path';
import { loadNodePackage } from '../../src/node/engine.js';
import { parseRequestJson } from '../../src/protocol/json.js';
import { intentsOf, NONE_OPTION, readClinc } from '../train/clinc-examples.js';
import { launchBrowser } from './browser.js';
import { serve } from './serve.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '6' },
    wasm: { type: 'boolean', default: false },
    port: { type: 'string', default: '5399' },
  },
});
if (positionals.length !== 2) {
  console.error('usage: decision-compare.ts <package-a> <package-b> [--runs N] [--wasm]');
  process.exit(2);
}
const runs = Number(values.runs);
const all = Object.fromEntries(
  [...intentsOf(readClinc()), NONE_OPTION].map((o) => [o, null] as const),
);
const four = { report_fraud: null, card_declined: null, transactions: null, none: null };
const body = (criteria: object, r: number) => ({
  model: 'clef-nano',
  state: `my card was declined at the store, attempt ${r}`,
  questions: { intent: { type: 'choice', criteria } },
});

/** Each package's `decide`, timed where it runs (in the page for WASM), in ms. */
type Timed = Array<(request: object) => Promise<number>>;

async function onNode(dirs: string[], use: (timed: Timed) => Promise<void>): Promise<void> {
  const engines = await Promise.all(dirs.map((d) => loadNodePackage(d, { threads: 1 })));
  try {
    await use(
      engines.map((engine) => async (request) => {
        const parsed = parseRequestJson(JSON.stringify(request));
        const t0 = performance.now();
        await engine.decide(parsed);
        return performance.now() - t0;
      }),
    );
  } finally {
    for (const e of engines) await e.dispose();
  }
}

async function onWasm(dirs: string[], use: (timed: Timed) => Promise<void>): Promise<void> {
  const served = await serve('dev', Number(values.port));
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(served.pageUrl);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    const urls = dirs.map((d) => `/${relative(resolve('.'), resolve(d))}/`);
    if (urls.some((u) => u.startsWith('/..')))
      throw new Error('--wasm: packages must lie under the repository');
    await page.evaluate(async (urls) => {
      const w = window as unknown as {
        clefWeb: { createClef(o: object): Promise<unknown> };
        __clefs: unknown[];
      };
      w.__clefs = [];
      for (const model of urls)
        w.__clefs.push(await w.clefWeb.createClef({ model, device: 'wasm', cache: false }));
    }, urls);
    await use(
      urls.map(
        (_, k) => (request) =>
          page.evaluate(
            async ({ k, request }) => {
              const w = window as unknown as {
                __clefs: Array<{ decide(b: object): Promise<unknown> }>;
              };
              const t0 = performance.now();
              await w.__clefs[k]!.decide(request);
              return performance.now() - t0;
            },
            { k, request },
          ),
      ),
    );
  } finally {
    await browser.close();
    await served.close();
  }
}

await (values.wasm ? onWasm : onNode)(positionals, async (timed) => {
  for (const [label, criteria] of [
    ['151 options', all],
    ['4 options', four],
  ] as const) {
    const times = positionals.map(() => [] as number[]);
    for (let r = 0; r < runs; r++)
      for (const [k, decide] of timed.entries())
        (times[k] as number[]).push(await decide(body(criteria, r)));
    const medians = times.map((t) => {
      const s = t.slice(1).sort((a, b) => a - b);
      return s[Math.floor(s.length / 2)] as number;
    });
    console.log(
      `${values.wasm ? 'wasm' : 'node, 1 thread'}, ${label}: ${positionals.map((d, k) => `${d} ${(medians[k] as number).toFixed(1)} ms`).join(', ')}; ratio b/a ${((medians[1] as number) / (medians[0] as number)).toFixed(2)}×`,
    );
  }
});
