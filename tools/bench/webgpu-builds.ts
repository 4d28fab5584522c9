/**
 * onnxruntime-web's two WebGPU builds side by side: the JSPI build (16.8 MB of wasm,
 * under static hosts' 25 MiB per-file limit) against the asyncify build (26.8 MB, over it), on
 * the same page, package and adapter. Per build: the first answer (createClef on WebGPU + the
 * first decision) on a cold visit (a new profile) and a warm one (the same profile reopened),
 * and the median decision once loaded. The engine picks JSPI where the browser has it, so the
 * asyncify runs withhold the JSPI files (404), as a browser without JSPI meets them. Runs
 * alternate builds so drift lands on both alike.
 *
 *   npx tsx tools/bench/webgpu-builds.ts [--runs 3] [--decisions 10] [--model /clef-web/models/clef-nano/]
 *       [--port 5690] [--chromium-arg=SWITCH]...
 *
 * Chromium runs WebGPU on whatever adapter it finds: SwiftShader (software) on a machine without
 * a GPU, so there the numbers compare the builds' own costs, not a GPU's. Printed, not asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { runtimeBuildFiles, type RuntimeBuild } from '../../src/wire/assets.js';
import { BUNDLED_MODEL_PATH } from '../../src/wire/assets.js';
import { loadAverage } from './proc.js';
import { serve } from './serve.js';

const REQUESTS = [
  'Hi, my card was charged twice for order #4471. I need the money back before Friday.',
  'Can you tell me how long my parcel will take to arrive?',
  'i would like to move 300 dollars into savings',
  'what is the interest rate on my credit card',
].map((state) => ({
  model: 'clef-nano',
  state,
  questions: {
    route: {
      type: 'choice',
      criteria: { transfer: 'Move money', bill_due: 'A bill', card_declined: null, oos: null },
    },
  },
}));

interface Visit {
  build: RuntimeBuild;
  visit: 'cold' | 'warm';
  createMs: number;
  firstMs: number;
  decisionMs: number[];
  runtime: string | undefined;
  wasmBytes: number | null;
}

async function visit(
  pageUrl: string,
  profile: string,
  model: string,
  build: RuntimeBuild,
  decisions: number,
  chromiumArgs: string[],
): Promise<Omit<Visit, 'visit'>> {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...chromiumArgs],
  });
  try {
    const page = await context.newPage();
    // The build not measured is withheld: the engine runs the one left.
    const other = build === 'jspi' ? 'asyncify' : 'jspi';
    const withheld = new Set(runtimeBuildFiles(other));
    await context.route(
      (url) => url.pathname.startsWith('/ort/') && withheld.has(url.pathname.slice(5)),
      (route) => route.fulfill({ status: 404 }),
    );
    await page.goto(pageUrl);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    return await page.evaluate(
      async ({ model, requests, decisions, build }) => {
        type Info = {
          device: string;
          loadMs: { runtime: { build: string; wasmTransferBytes: number | null } | null };
        };
        type C = {
          systemone(r: object): Promise<unknown>;
          info(): Promise<Info>;
          dispose(): Promise<void>;
        };
        const w = window as unknown as { clefWeb: { createClef(o: object): Promise<C> } };
        const t0 = performance.now();
        const clef = await w.clefWeb.createClef({ model, device: 'webgpu', warmUp: false });
        const t1 = performance.now();
        await clef.systemone(requests[0]!);
        const t2 = performance.now();
        const decisionMs: number[] = [];
        for (let i = 0; i < decisions; i++) {
          const s = performance.now();
          await clef.systemone(requests[(i + 1) % requests.length]!);
          decisionMs.push(performance.now() - s);
        }
        const info = await clef.info();
        await clef.dispose();
        if (info.device !== 'webgpu') throw new Error(`ran on ${info.device}, not webgpu`);
        return {
          build,
          createMs: t1 - t0,
          firstMs: t2 - t1,
          decisionMs,
          runtime: info.loadMs.runtime?.build,
          wasmBytes: info.loadMs.runtime?.wasmTransferBytes ?? null,
        };
      },
      { model, requests: REQUESTS, decisions, build },
    );
  } finally {
    await context.close();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

async function main() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      decisions: { type: 'string', default: '10' },
      model: { type: 'string', default: BUNDLED_MODEL_PATH },
      port: { type: 'string', default: '5690' },
      'chromium-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  const runs = Number(values.runs);
  const decisions = Number(values.decisions);
  const served = await serve('dev', Number(values.port));
  const visits: Visit[] = [];
  try {
    console.log(`load average before: ${loadAverage()}`);
    for (let run = 0; run < runs; run++) {
      for (const build of ['jspi', 'asyncify'] as const) {
        const profile = mkdtempSync(join(tmpdir(), 'clef-webgpu-builds-'));
        try {
          for (const kind of ['cold', 'warm'] as const) {
            const v = {
              ...(await visit(
                served.pageUrl,
                profile,
                values.model,
                build,
                decisions,
                values['chromium-arg'],
              )),
              visit: kind,
            };
            visits.push(v);
            console.log(
              `  ${build} ${kind} #${run}: first answer ${(v.createMs + v.firstMs).toFixed(0)} ms ` +
                `(createClef ${v.createMs.toFixed(0)} + first decision ${v.firstMs.toFixed(0)}), ` +
                `median decision ${median(v.decisionMs).toFixed(1)} ms, ${v.runtime}`,
            );
          }
        } finally {
          rmSync(profile, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await served.close();
  }
  console.log(`load average after: ${loadAverage()}`);
  console.log('\n| build | visit | first answer (median ms) | decision (median ms) |');
  console.log('| --- | --- | --- | --- |');
  const rows: Record<string, { first: number; decision: number }> = {};
  for (const build of ['jspi', 'asyncify'] as const) {
    for (const kind of ['cold', 'warm'] as const) {
      const vs = visits.filter((v) => v.build === build && v.visit === kind);
      const first = median(vs.map((v) => v.createMs + v.firstMs));
      const decision = median(vs.flatMap((v) => v.decisionMs));
      rows[`${build} ${kind}`] = { first, decision };
      console.log(`| ${build} | ${kind} | ${first.toFixed(0)} | ${decision.toFixed(1)} |`);
    }
  }
  for (const kind of ['cold', 'warm']) {
    const j = rows[`jspi ${kind}`]!;
    const a = rows[`asyncify ${kind}`]!;
    console.log(
      `${kind}: JSPI/asyncify first answer ${(j.first / a.first).toFixed(2)}×, ` +
        `decision ${(j.decision / a.decision).toFixed(2)}×`,
    );
  }
}

await main();
