/**
 * Time to first answer (issue 15): `createClef` → first `systemone`, on WASM, per onnxruntime-web
 * build, cold (a new browser profile: nothing cached) and warm (the same profile reopened: a
 * second visit, package in Cache Storage, wasm in the HTTP cache where the server allows), with
 * each load phase from `info().loadMs`; and onnxruntime-node's load + first answer on the same
 * package. Runs alternate builds and visits so drift lands on all of them alike.
 *
 *   npx tsx tools/bench/first-answer.ts [--model models/clef-nano] [--url URL] [--runs 3]
 *       [--builds plain,asyncify] [--label TEXT] [--no-write]
 * (also `npm run bench -- --first-answer ...`, which passes its arguments on).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { createServer } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { loadNodePackage } from '../../src/node/engine.js';
import type { LoadPhases } from '../../src/wire/wire.js';
import { loadAverage } from './proc.js';
import { BUNDLED_MODEL_PATH } from '../../src/wire/assets.js';

const REQUEST = {
  model: 'clef-nano',
  state: 'Hi, my card was charged twice for order #4471. I need the money back before Friday.',
  questions: {
    route: {
      type: 'choice',
      instructions: 'Which intent is this?',
      criteria: { transfer: 'Move money', bill_due: 'A bill', card_declined: null, oos: null },
    },
  },
};
const SECOND = { ...REQUEST, state: 'Can you tell me how long my parcel will take to arrive?' };

export interface Visit {
  build: string;
  visit: 'cold' | 'warm';
  run: number;
  /** createClef until it resolved (ms, page wall clock). */
  createMs: number;
  /** The first systemone after that (ms). */
  firstMs: number;
  /** createMs + firstMs. */
  firstAnswerMs: number;
  /** A second decision on another state (ms): how settled the code is after the first. */
  secondMs: number;
  loadMs: LoadPhases;
}

async function visit(
  baseUrl: string,
  profile: string,
  model: string,
  build: string,
): Promise<Omit<Visit, 'visit' | 'run'>> {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await context.newPage();
    await page.routeWebSocket(/.*/, () => undefined);
    await page.goto(`${baseUrl}/test/browser/pages/harness.html`);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    const out = await page.evaluate(
      async ({ model, build, first, second }) => {
        type C = {
          systemone(r: object): Promise<unknown>;
          info(): Promise<{ loadMs: LoadPhases }>;
          dispose(): Promise<void>;
        };
        const w = window as unknown as { clefWeb: { createClef(o: object): Promise<C> } };
        const t0 = performance.now();
        const clef = await w.clefWeb.createClef({ model, device: 'wasm', wasmBuild: build });
        const t1 = performance.now();
        await clef.systemone(first);
        const t2 = performance.now();
        await clef.systemone(second);
        const t3 = performance.now();
        const { loadMs } = await clef.info();
        await clef.dispose();
        return { createMs: t1 - t0, firstMs: t2 - t1, secondMs: t3 - t2, loadMs };
      },
      { model, build, first: REQUEST, second: SECOND },
    );
    return { build, ...out, firstAnswerMs: out.createMs + out.firstMs };
  } finally {
    await context.close();
  }
}

async function nodeFirstAnswer(dir: string): Promise<{ loadMs: number; firstMs: number }> {
  const t0 = performance.now();
  const engine = await loadNodePackage(dir, { threads: 1 });
  const t1 = performance.now();
  await engine.decide(REQUEST);
  const t2 = performance.now();
  await engine.dispose();
  return { loadMs: t1 - t0, firstMs: t2 - t1 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

export async function benchFirstAnswer(
  baseUrl: string,
  options: { dir: string; url: string; runs: number; builds: string[] },
  log: (s: string) => void,
) {
  const model = options.url;
  const visits: Visit[] = [];
  const node: Array<{ loadMs: number; firstMs: number }> = [];
  for (let run = 0; run < options.runs; run++) {
    for (const build of options.builds) {
      const profile = mkdtempSync(join(tmpdir(), 'clef-first-answer-'));
      try {
        for (const kind of ['cold', 'warm'] as const) {
          const v = { ...(await visit(baseUrl, profile, model, build)), visit: kind, run };
          visits.push(v);
          const l = v.loadMs;
          log(
            `  ${build} ${kind} #${run}: first answer ${v.firstAnswerMs.toFixed(0)} ms = createClef ${v.createMs.toFixed(0)} + decision ${v.firstMs.toFixed(0)} (runtime import ${l.runtime?.importMs.toFixed(0)}, init ${l.runtime?.initMs.toFixed(0)}, wasm ${l.runtime?.wasmSource} ${l.runtime?.wasmFetchMs?.toFixed(0) ?? '?'} ms; download ${l.download.toFixed(0)}, sessions ${Object.values(
              l.sessions,
            )
              .reduce((a, b) => a + b, 0)
              .toFixed(0)}); second decision ${v.secondMs.toFixed(0)} ms`,
          );
        }
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    }
    const n = await nodeFirstAnswer(options.dir);
    node.push(n);
    log(`  node #${run}: load ${n.loadMs.toFixed(0)} + first ${n.firstMs.toFixed(0)} ms`);
  }
  const nodeMs = median(node.map((n) => n.loadMs + n.firstMs));
  const summary = options.builds.map((build) => {
    const pick = (kind: string) =>
      median(
        visits.filter((v) => v.build === build && v.visit === kind).map((v) => v.firstAnswerMs),
      );
    const cold = pick('cold');
    const warm = pick('warm');
    const second = median(visits.filter((v) => v.build === build).map((v) => v.secondMs));
    return {
      build,
      coldMs: cold,
      warmMs: warm,
      warmVsCold: warm / cold,
      coldVsNode: cold / nodeMs,
      secondDecisionMs: second,
    };
  });
  log(
    '\nFirst answer (medians, ms): build | cold | warm | warm/cold (≤ 0.35) | cold/node (≤ 3) | 2nd decision',
  );
  for (const s of summary) {
    log(
      `  ${s.build} | ${s.coldMs.toFixed(0)} | ${s.warmMs.toFixed(0)} | ${s.warmVsCold.toFixed(2)}× | ${s.coldVsNode.toFixed(2)}× | ${s.secondDecisionMs.toFixed(0)}`,
    );
  }
  log(`  onnxruntime-node load + first answer: ${nodeMs.toFixed(0)} ms (1 thread)`);
  return { visits, node, nodeMs, summary };
}

async function main() {
  const { values } = parseArgs({
    options: {
      'first-answer': { type: 'boolean' },
      // The bundled clef-nano: its directory (for onnxruntime-node) and where the page gets it.
      model: { type: 'string', default: 'models/clef-nano' },
      url: { type: 'string', default: BUNDLED_MODEL_PATH },
      runs: { type: 'string', default: '3' },
      builds: { type: 'string', default: 'plain,asyncify' },
      label: { type: 'string', default: 'first-answer' },
      'no-write': { type: 'boolean' },
    },
  });
  const loadStart = loadAverage();
  const server = await createServer({
    configFile: resolve('vite.config.ts'),
    logLevel: 'warn',
    server: { port: 5198, strictPort: false, host: '127.0.0.1', hmr: false, watch: null },
  });
  await server.listen();
  const address = server.httpServer?.address();
  const port = typeof address === 'object' && address ? address.port : 5198;
  console.log(`serving http://127.0.0.1:${port}; load average ${loadStart?.join(' ') ?? '?'}`);
  try {
    const result = await benchFirstAnswer(
      `http://127.0.0.1:${port}`,
      {
        dir: values.model!,
        url: values.url!,
        runs: Number(values.runs),
        builds: values.builds!.split(','),
      },
      (s) => console.log(s),
    );
    const loadEnd = loadAverage();
    console.log(`load average ${loadStart?.join(' ')} at start, ${loadEnd?.join(' ')} at end`);
    if (!values['no-write']) {
      mkdirSync('bench/results', { recursive: true });
      const date = new Date().toISOString();
      const file = join('bench/results', `${date.slice(0, 10)}-no-webgpu-${values.label}.json`);
      const command = `npx tsx tools/bench/first-answer.ts ${process.argv.slice(2).join(' ')}`;
      const out = {
        date,
        command,
        model: values.model,
        loadAverage: { start: loadStart, end: loadEnd },
        browser: CHROMIUM_PATH,
        ...result,
      };
      writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
      console.log(`wrote ${file}`);
    }
  } finally {
    await server.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve('tools/bench/first-answer.ts')) {
  await main();
}
export { main as firstAnswerMain };
