/**
 * Time to first answer: `createClef` → first `systemone`, on WASM, per onnxruntime-web
 * build, cold (a new browser profile: nothing cached) and warm (the same profile reopened: a
 * second visit, package in Cache Storage, wasm in the HTTP cache where the server allows), with
 * each load phase from `info().loadMs`; and onnxruntime-node's load + first answer on the same
 * package. Runs alternate builds and visits so drift lands on all of them alike.
 *
 *   npx tsx tools/bench/first-answer.ts [--model models/clef-nano] [--url URL] [--runs 3]
 *       [--builds plain,asyncify] [--graphs prepared,package] [--serve dist,dev] [--linger MS]
 *       [--trace] [--no-warm-up] [--varied]
 *       [--chromium-arg=SWITCH]... [--label TEXT] [--no-write]
 *
 * --graphs: `prepared` creates the package's WASM-prepared graphs (the default), `package` the
 * package graphs optimised at load (createClef's preparedGraphs false); runs alternate them.
 * --varied: each visit, after its two timed decisions, also decides every question type over a
 * ~400-token state before it lingers, as a page in use does: V8 caches a module's compiled code
 * only once about 1 MB of it has tiered up (and the page lived ~2 s more), so how much a first
 * visit does decides what the second starts from.
 * --serve: where the page comes from (tools/bench/serve.ts): `dist` a production build (the
 * user's path), `dev` the Vite dev server. --linger: the page keeps the engine MS ms after its
 * decisions before closing (time for V8 to tier up and cache compiled wasm). --trace: counts
 * Chromium's `v8.wasm.*` trace events per visit (compiled, cached, cache hit).
 * (also `npm run bench -- --first-answer ...`, which passes its arguments on).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import { loadNodePackage } from '../../src/node/engine.js';
import type { LoadPhases } from '../../src/wire/telemetry.js';
import { loadAverage } from './proc.js';
import { BUNDLED_MODEL_PATH } from '../../src/wire/assets.js';
import { serve, type ServeMode } from './serve.js';
import { startWasmTrace } from './wasm-trace.js';

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

export type GraphsMode = 'prepared' | 'package';

export interface Visit {
  build: string;
  graphs: GraphsMode;
  serve: ServeMode;
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
  /** With --trace: Chromium's v8.wasm.* trace events of this visit, by name. */
  wasmEvents?: Record<string, number>;
}

interface VisitOptions {
  pageUrl: string;
  profile: string;
  model: string;
  build: string;
  graphs: GraphsMode;
  lingerMs: number;
  trace: boolean;
  /** Extra Chromium switches (diagnosis only, e.g. --js-flags=...). */
  chromiumArgs: string[];
  warmUp: boolean;
  varied: boolean;
}

const VARIED = {
  model: 'clef-nano',
  state: 'The parcel left the depot on Monday and nobody has called since. '.repeat(30),
  questions: {
    late: { type: 'noul' },
    route: { type: 'choice', criteria: { transfer: 'Move money', bill_due: 'A bill', oos: null } },
    mood: { type: 'score', criteria: ['calm', 'upset', 'angry'] },
  },
};

async function visit(o: VisitOptions): Promise<Omit<Visit, 'visit' | 'run' | 'serve' | 'graphs'>> {
  const { model, build, lingerMs } = o;
  const context = await chromium.launchPersistentContext(o.profile, {
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...o.chromiumArgs],
  });
  try {
    const page = await context.newPage();
    await page.routeWebSocket(/.*/, () => undefined);
    const trace = o.trace ? await startWasmTrace(context, page) : null;
    await page.goto(o.pageUrl);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    const out = await page.evaluate(
      async ({ model, build, first, second, lingerMs, warmUp, preparedGraphs, varied }) => {
        type C = {
          systemone(r: object): Promise<unknown>;
          info(): Promise<{ loadMs: LoadPhases }>;
          dispose(): Promise<void>;
        };
        const w = window as unknown as { clefWeb: { createClef(o: object): Promise<C> } };
        const t0 = performance.now();
        // The default build needs no switch: the library's createClef refuses the test ones.
        const clef = await w.clefWeb.createClef({
          model,
          device: 'wasm',
          ...(build === 'plain' ? {} : { wasmBuild: build }),
          warmUp,
          preparedGraphs,
        });
        const t1 = performance.now();
        await clef.systemone(first);
        const t2 = performance.now();
        await clef.systemone(second);
        const t3 = performance.now();
        const { loadMs } = await clef.info();
        if (varied) await clef.systemone(varied);
        await new Promise((done) => setTimeout(done, lingerMs));
        await clef.dispose();
        return { createMs: t1 - t0, firstMs: t2 - t1, secondMs: t3 - t2, loadMs };
      },
      {
        model,
        build,
        first: REQUEST,
        second: SECOND,
        lingerMs,
        warmUp: o.warmUp,
        preparedGraphs: o.graphs === 'prepared',
        varied: o.varied ? VARIED : null,
      },
    );
    const wasmEvents = trace ? await trace.stop() : undefined;
    return { build, ...out, firstAnswerMs: out.createMs + out.firstMs, wasmEvents };
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

export interface FirstAnswerOptions {
  dir: string;
  url: string;
  runs: number;
  builds: string[];
  graphs: GraphsMode[];
  /** Page URL per serve mode; runs alternate them. */
  pages: Array<{ serve: ServeMode; pageUrl: string }>;
  lingerMs: number;
  trace: boolean;
  chromiumArgs: string[];
  /** createClef's warmUp option (default true). */
  warmUp: boolean;
  /** Each visit also makes VARIED's decision before it lingers. */
  varied: boolean;
}

/**
 * The library build's createClef has no wasmBuild switch (a measurement switch, kept out of the
 * public options), so a `dist` page runs the shipped default, plain; asyncify is measured on
 * `dev`, whose harness uses createTestClef (createClefWithBuild on the instrumented worker,
 * which alone times the wasm's instantiation: a `dist` page reports it as '?').
 */
function measurable(serve: string, build: string): boolean {
  return serve !== 'dist' || build === 'plain';
}

export async function benchFirstAnswer(options: FirstAnswerOptions, log: (s: string) => void) {
  const model = options.url;
  const visits: Visit[] = [];
  const node: Array<{ loadMs: number; firstMs: number }> = [];
  for (let run = 0; run < options.runs; run++) {
    for (const { serve, pageUrl } of options.pages) {
      for (const [build, graphs] of options.builds.flatMap((b) =>
        options.graphs.map((g) => [b, g] as const),
      )) {
        if (!measurable(serve, build)) continue;
        const profile = mkdtempSync(join(tmpdir(), 'clef-first-answer-'));
        try {
          for (const kind of ['cold', 'warm'] as const) {
            const { lingerMs, trace, chromiumArgs, warmUp, varied } = options;
            const v = {
              ...(await visit({
                pageUrl,
                profile,
                model,
                build,
                graphs,
                lingerMs,
                trace,
                chromiumArgs,
                warmUp,
                varied,
              })),
              serve,
              graphs,
              visit: kind,
              run,
            };
            visits.push(v);
            const l = v.loadMs;
            const events = v.wasmEvents ? ` wasm events ${JSON.stringify(v.wasmEvents)}` : '';
            log(
              `  ${serve} ${build} ${graphs} ${kind} #${run}: first answer ${v.firstAnswerMs.toFixed(0)} ms = createClef ${v.createMs.toFixed(0)} + decision ${v.firstMs.toFixed(0)} (runtime import ${l.runtime?.importMs.toFixed(0)}, init ${l.runtime?.initMs.toFixed(0)} = instantiate ${l.runtime?.instantiateMs?.toFixed(0) ?? '?'} + start ${l.runtime && l.runtime.instantiateMs !== null ? (l.runtime.initMs - l.runtime.instantiateMs).toFixed(0) : '?'}, wasm ${l.runtime?.wasmSource} ${l.runtime?.wasmFetchMs?.toFixed(0) ?? '?'} ms; download ${l.download.toFixed(0)}, sessions ${Object.values(
                l.sessions,
              )
                .reduce((a, b) => a + b, 0)
                .toFixed(
                  0,
                )}); second decision ${v.secondMs.toFixed(0)} ms; warm-up ${l.warmup === null ? 'not finished' : l.warmup.toFixed(0)}, total ${l.total.toFixed(0)}${events}`,
            );
          }
        } finally {
          rmSync(profile, { recursive: true, force: true });
        }
      }
    }
    const n = await nodeFirstAnswer(options.dir);
    node.push(n);
    log(`  node #${run}: load ${n.loadMs.toFixed(0)} + first ${n.firstMs.toFixed(0)} ms`);
  }
  const nodeMs = median(node.map((n) => n.loadMs + n.firstMs));
  const summary = options.pages.flatMap(({ serve }) =>
    options.builds
      .filter((build) => measurable(serve, build))
      .flatMap((build) =>
        options.graphs.map((graphs) => {
          const mine = visits.filter(
            (v) => v.build === build && v.serve === serve && v.graphs === graphs,
          );
          const pick = (kind: string) =>
            median(mine.filter((v) => v.visit === kind).map((v) => v.firstAnswerMs));
          const cold = pick('cold');
          const warm = pick('warm');
          const second = median(mine.map((v) => v.secondMs));
          return {
            serve,
            build,
            graphs,
            coldMs: cold,
            warmMs: warm,
            warmVsCold: warm / cold,
            coldVsNode: cold / nodeMs,
            secondDecisionMs: second,
          };
        }),
      ),
  );
  log(
    '\nFirst answer (medians, ms): serve | build | graphs | cold | warm | warm/cold (≤ 0.35) | cold/node (≤ 3) | 2nd decision',
  );
  for (const s of summary) {
    log(
      `  ${s.serve} | ${s.build} | ${s.graphs} | ${s.coldMs.toFixed(0)} | ${s.warmMs.toFixed(0)} | ${s.warmVsCold.toFixed(2)}× | ${s.coldVsNode.toFixed(2)}× | ${s.secondDecisionMs.toFixed(0)}`,
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
      graphs: { type: 'string', default: 'prepared' },
      serve: { type: 'string', default: 'dist,dev' },
      linger: { type: 'string', default: '0' },
      trace: { type: 'boolean' },
      'no-warm-up': { type: 'boolean' },
      varied: { type: 'boolean' },
      'chromium-arg': { type: 'string', multiple: true, default: [] },
      label: { type: 'string', default: 'first-answer' },
      'no-write': { type: 'boolean' },
    },
  });
  const loadStart = loadAverage();
  const servers = [];
  for (const [i, mode] of (values.serve!.split(',') as ServeMode[]).entries()) {
    servers.push(await serve(mode, 5198 + i));
  }
  for (const s of servers) console.log(`${s.mode}: ${s.pageUrl}`);
  console.log(`load average ${loadStart?.join(' ') ?? '?'}`);
  try {
    const result = await benchFirstAnswer(
      {
        dir: values.model!,
        url: values.url!,
        runs: Number(values.runs),
        builds: values.builds!.split(','),
        graphs: values.graphs!.split(',') as GraphsMode[],
        pages: servers.map((s) => ({ serve: s.mode, pageUrl: s.pageUrl })),
        lingerMs: Number(values.linger),
        trace: values.trace === true,
        chromiumArgs: values['chromium-arg']!,
        warmUp: values['no-warm-up'] !== true,
        varied: values.varied === true,
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
        lingerMs: Number(values.linger),
        warmUp: values['no-warm-up'] !== true,
        varied: values.varied === true,
        chromiumArgs: values['chromium-arg'],
        ...result,
      };
      writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
      console.log(`wrote ${file}`);
    }
  } finally {
    for (const s of servers) await s.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve('tools/bench/first-answer.ts')) {
  await main();
}
export { main as firstAnswerMain };
