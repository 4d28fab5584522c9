/**
 * `npm run bench` (= `tsx tools/bench/run.ts`): what a decision costs in Chromium (WASM, and
 * WebGPU: SwiftShader here, the real GPU wherever Chromium finds one) against onnxruntime-node
 * on the same graphs and thread count. Prints tables and writes bench/results/<date>-<device>.json.
 *
 * Options:
 *   --models tiny,real-q4,real-q8   which packages (default: all that exist; real-* are built by
 *                                   `npx tsx tools/bench/real-shape.ts`)
 *   --backends wasm,webgpu,node     (default all three)
 *   --runs N                        runs per scenario on the tiny fixture (default 20)
 *   --gpu-runs N                    runs per scenario on WebGPU (default: --runs; SwiftShader
 *                                   emulates the GPU on the CPU and is slow)
 *   --real-runs N                   runs per scenario on the real-shape packages (default 2)
 *   --real-budget-min M             minutes per backend per real-shape package (default 8);
 *                                   scenarios beyond it are cut, and the output says so
 *   --real-long                     also a 16,384-token state on the real-shape packages (slow)
 *   --package KEY=DIR               also bench the package in DIR (under the repo, so the dev
 *                                   server serves it) as KEY, with the tiny fixture's scenarios
 *                                   when its context is 4,096 tokens or less, else the real ones
 *   --scenarios ID,ID               only these scenarios (e.g. s2048-q1-o2-miss)
 *   --label TEXT                    appended to the results file name (e.g. "before")
 *   --no-write                      print only
 *   --wasm-build plain|asyncify     onnxruntime-web build for WASM (default plain, the engine's)
 *   --first-answer                  instead: time to first answer on clef-nano, cold and warm,
 *                                   per onnxruntime-web build, vs onnxruntime-node
 *                                   (tools/bench/first-answer.ts; its options follow)
 * Timings never feed pass/fail unit tests: this is run by hand and its results committed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { release as osRelease } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseManifest, type PackageManifest } from '../../src/core/manifest.js';
import { benchBrowser, type BrowserRun, type ScenarioBodies } from './browser.js';
import { firstAnswerMain } from './first-answer.js';
import { benchNode, type NodeRun } from './node-ceiling.js';
import { serve } from './serve.js';
import { loadAverage, machineFacts } from './proc.js';
import { RequestMaker, scenario, type Scenario } from './requests.js';
import {
  SCENARIO_HEADER,
  mib,
  scenarioRows,
  summarize,
  table,
  targets,
  type Backend,
  type ModelFigures,
  type ScenarioSummary,
  type TargetResult,
} from './report.js';

interface ModelSpec {
  key: string;
  dir: string;
  url: string;
  runs: number;
  scenarios: Scenario[];
  /** Backends that can load this package. */
  backends: Backend[];
  budgetMs: number;
  /** A small model (tiny-like): long states cannot run and memory ratios mean nothing. */
  small: boolean;
  note?: string;
}

const NO_WASM_NOTE =
  "no WASM: onnxruntime-web's WebGPU build (the engine's WASM build until issue 15) has no CPU kernel for " +
  'GatherBlockQuantized, the q8 embedding of the q4/q8 packages; real-q4-f16emb (fp16 ' +
  'embedding, same layers) stands in for it';

const TINY_SCENARIOS: Scenario[] = [
  scenario(256, 1, 2),
  scenario(256, 8, 2),
  scenario(256, 64, 2),
  scenario(256, 1, 16),
  scenario(256, 1, 255),
  scenario(2048, 1, 2),
  scenario(2048, 8, 2),
  scenario(2048, 1, 2, true),
  scenario(2048, 8, 2, true),
  scenario(3800, 1, 2),
];

/** Most telling first: a time budget cuts from the end. */
function realScenarios(long: boolean): Scenario[] {
  const list = [
    scenario(256, 1, 2),
    scenario(2048, 1, 2),
    scenario(2048, 1, 2, true),
    scenario(256, 8, 2),
    scenario(2048, 8, 2),
  ];
  if (long) list.push(scenario(16384, 1, 2));
  return list;
}

function parseArgs(argv: string[]) {
  const o = {
    models: null as string[] | null,
    backends: ['wasm', 'webgpu', 'node'] as Backend[],
    runs: 20,
    gpuRuns: 0,
    realRuns: 2,
    realBudgetMin: 8,
    realLong: false,
    label: '',
    write: true,
    packages: [] as Array<{ key: string; dir: string }>,
    scenarios: null as string[] | null,
    wasmBuild: 'plain' as 'plain' | 'asyncify',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i] ?? '';
    if (a === '--models') o.models = next().split(',');
    else if (a === '--backends') o.backends = next().split(',') as Backend[];
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--gpu-runs') o.gpuRuns = Number(next());
    else if (a === '--real-runs') o.realRuns = Number(next());
    else if (a === '--real-budget-min') o.realBudgetMin = Number(next());
    else if (a === '--real-long') o.realLong = true;
    else if (a === '--label') o.label = next();
    else if (a === '--package') {
      const [key, dir] = next().split('=');
      if (!key || !dir) throw new Error('--package wants KEY=DIR');
      o.packages.push({ key, dir: dir.replace(/\/+$/, '') });
    } else if (a === '--scenarios') o.scenarios = next().split(',');
    else if (a === '--no-write') o.write = false;
    else if (a === '--wasm-build') o.wasmBuild = next() as 'plain' | 'asyncify';
    else throw new Error(`unknown argument ${a} (see the header of tools/bench/run.ts)`);
  }
  return o;
}

function readManifest(dir: string): PackageManifest {
  return parseManifest(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
}

function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'unknown'
  );
}

async function main(): Promise<void> {
  if (process.argv.includes('--first-answer')) return firstAnswerMain();
  const args = parseArgs(process.argv.slice(2));
  const log = (s: string) => console.log(s);
  if (!existsSync('public/models/tiny/manifest.json')) {
    log('building the tiny packages (npm run models:tiny) ...');
    execFileSync('npx', ['tsx', 'tools/models/build-tiny.ts'], { stdio: 'inherit' });
  }
  const all: ModelSpec[] = (
    [
      {
        key: 'tiny',
        dir: 'public/models/tiny',
        url: '/models/tiny/',
        runs: args.runs,
        scenarios: TINY_SCENARIOS,
        backends: ['wasm', 'webgpu', 'node'],
        budgetMs: Infinity,
        small: true,
      },
      ...(
        [
          ['real-q4', ['webgpu', 'node'], NO_WASM_NOTE],
          ['real-q4-f16emb', ['wasm', 'node'], undefined],
          ['real-q8', ['webgpu', 'node'], NO_WASM_NOTE],
        ] as Array<[string, Backend[], string | undefined]>
      ).map(([key, backends, note]) => ({
        key,
        dir: `bench/work/${key}`,
        url: `/bench/work/${key}/`,
        runs: args.realRuns,
        scenarios: realScenarios(args.realLong),
        backends,
        budgetMs: args.realBudgetMin * 60_000,
        small: false,
        ...(note ? { note } : {}),
      })),
      ...args.packages.map(({ key, dir }): ModelSpec => {
        const small = readManifest(dir).contextTokens <= 4096;
        return {
          key,
          dir,
          url: `/${dir}/`,
          runs: small ? args.runs : args.realRuns,
          scenarios: small ? TINY_SCENARIOS : realScenarios(args.realLong),
          backends: ['wasm', 'webgpu', 'node'],
          budgetMs: small ? Infinity : args.realBudgetMin * 60_000,
          small,
        };
      }),
    ] as ModelSpec[]
  ).map((m) =>
    args.scenarios
      ? { ...m, scenarios: m.scenarios.filter((s) => args.scenarios!.includes(s.id)) }
      : m,
  );
  const extra = args.packages.map((p) => p.key);
  const models = all.filter((m) =>
    args.models
      ? args.models.includes(m.key) || extra.includes(m.key)
      : existsSync(join(m.dir, 'manifest.json')),
  );
  const notes: string[] = [];
  const loadStart = loadAverage();
  // The dev server, no watcher and no HMR: edits elsewhere must not reload the page mid-run.
  const server = await serve('dev', 5199);
  const baseUrl = server.origin;
  log(`serving ${baseUrl}; load average ${loadStart?.join(' ') ?? '?'}`);

  const results: Array<{
    model: string;
    package: string;
    manifest: { name: string; dtype: string; weightBytes: number; contextTokens: number };
    runsPerScenario: number;
    skipped: string[];
    browser: Partial<Record<'wasm' | 'webgpu', Omit<BrowserRun, 'scenarios'>>>;
    node: Omit<NodeRun, 'scenarios'> | null;
    scenarios: Partial<Record<Backend, ScenarioSummary[]>>;
    targets: TargetResult[];
  }> = [];
  let browserVersion = '';
  let userAgent = '';
  let adapter: string | null = null;
  /** The results file's content (also written to bench/work/ after each model, in case of a crash). */
  const resultsJson = (end: number[] | null) => {
    const device = adapter ? slug(adapter) : 'no-webgpu';
    const date = new Date().toISOString().slice(0, 10);
    const out = {
      date: new Date().toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine: {
        ...machineFacts(loadStart, end),
        os: `${process.platform} ${osRelease()}`,
        node: process.version,
      },
      browser: { version: browserVersion, userAgent },
      device: { webgpuAdapter: adapter },
      notes,
      results,
    };
    return { json: `${JSON.stringify(out, null, 1)}\n`, device, date };
  };
  try {
    for (const m of models) {
      log(`\n== ${m.key} (${m.dir}) ==`);
      const manifest = readManifest(m.dir);
      const maker = new RequestMaker(m.dir, manifest);
      const skipped = m.scenarios.filter((s) => !maker.fits(s)).map((s) => s.id);
      if (skipped.length) {
        const note = `${m.key}: skipped ${skipped.join(', ')}: over the model's ${manifest.contextTokens}-token context`;
        notes.push(note);
        log(note);
      }
      if (m.small) {
        notes.push(
          `${m.key}: its context is ${manifest.contextTokens} tokens, so states of 16,384 and 65,536 tokens cannot run; the longest state measured is ~3,800 tokens`,
        );
      } else {
        notes.push(
          `${m.key}: ${m.runs} runs per scenario (what this machine affords); two layers at Clef-flash shapes, so backbone costs are ~1/16 of the real 32-layer model's`,
        );
      }
      const fitting = m.scenarios.filter((s) => !skipped.includes(s.id));
      const bodies: ScenarioBodies[] = fitting.map((s, i) => ({
        id: s.id,
        hit: s.hit,
        bodies: maker.bodies(s, m.runs, (i + 1) * 1000),
      }));
      // Fresh 256-token states with 2 questions: enough to tier up every kernel the scenarios use.
      const warmup = Array.from({ length: m.small ? 16 : 2 }, (_, i) =>
        maker.body(maker.state(256, 990_000 + i), 2, 2, 'w'),
      );
      const figures: ModelFigures = {
        backends: {},
        browser: {},
        node: null,
        weightBytes: manifest.variant.weightBytes,
        longNote: m.small
          ? `n/a on ${m.key}: its weights are ${mib(manifest.variant.weightBytes)}, so the browser runtime's own memory dominates`
          : null,
      };
      if (m.note) notes.push(`${m.key}: ${m.note}`);
      for (const device of ['wasm', 'webgpu'] as const) {
        if (!args.backends.includes(device) || !m.backends.includes(device)) continue;
        // WebGPU may get fewer runs (SwiftShader is slow): the first N of each scenario's bodies.
        const gpuRuns = args.gpuRuns > 0 && m.small ? args.gpuRuns : m.runs;
        const mine =
          device === 'webgpu'
            ? bodies.map((b) => ({ ...b, bodies: b.bodies.slice(0, gpuRuns + (b.hit ? 1 : 0)) }))
            : bodies;
        if (device === 'webgpu' && gpuRuns < m.runs) {
          notes.push(`${m.key}: ${gpuRuns} runs per scenario on WebGPU (SwiftShader is slow here)`);
        }
        log(`  ${device}:`);
        const run = await benchBrowser(
          baseUrl,
          m.url,
          device,
          warmup,
          mine,
          log,
          m.budgetMs,
          args.wasmBuild,
        );
        browserVersion ||= run.browserVersion;
        userAgent ||= run.userAgent;
        if (run.info?.device === 'webgpu') adapter = run.info.adapter;
        if (run.info && run.info.device !== device) {
          notes.push(
            `${m.key}: asked for ${device}, ran on ${run.info.device} (${run.info.fallbackReason})`,
          );
        }
        figures.browser[device] = run;
        figures.backends[device] = run.scenarios.map((s) => summarize(s, device));
      }
      let nodeRun: NodeRun | null = null;
      if (args.backends.includes('node') && m.backends.includes('node')) {
        const threads =
          figures.browser.wasm?.info?.threads ?? figures.browser.webgpu?.info?.threads ?? 1;
        log(`  onnxruntime-node:`);
        nodeRun = await benchNode(m.dir, threads, warmup, bodies, log, m.budgetMs);
        figures.node = nodeRun;
        figures.backends.node = nodeRun.scenarios.map((s) => summarize(s, 'node'));
      }
      const strip = <T extends { scenarios: unknown }>(r: T | undefined) => {
        if (!r) return undefined;
        const rest: Partial<T> = { ...r };
        delete rest.scenarios;
        return rest as Omit<T, 'scenarios'>;
      };
      results.push({
        model: m.key,
        package: m.dir,
        manifest: {
          name: manifest.model.name,
          dtype: manifest.variant.dtype,
          weightBytes: manifest.variant.weightBytes,
          contextTokens: manifest.contextTokens,
        },
        runsPerScenario: m.runs,
        skipped,
        browser: Object.fromEntries(
          Object.entries(figures.browser).map(([k, v]) => [k, strip(v)]),
        ) as Partial<Record<'wasm' | 'webgpu', Omit<BrowserRun, 'scenarios'>>>,
        node: strip(nodeRun ?? undefined) ?? null,
        scenarios: figures.backends,
        targets: targets(figures),
      });
      mkdirSync('bench/work', { recursive: true });
      writeFileSync('bench/work/partial-results.json', resultsJson(loadAverage()).json);
    }
  } finally {
    await server.close();
  }
  const loadEnd = loadAverage();

  // Tables.
  const loadRows: string[][] = [];
  for (const r of results) {
    for (const [device, b] of Object.entries(r.browser)) {
      const l = b?.info?.loadMs;
      loadRows.push([
        r.model,
        device,
        l ? l.download.toFixed(0) : '—',
        l ? l.verify.toFixed(0) : '—',
        l ? l.compile.toFixed(0) : '—',
        l ? l.total.toFixed(0) : '—',
        b?.memory.afterLoad
          ? mib((b.memory.afterLoad.renderer?.rss ?? 0) + (b.memory.afterLoad.gpu?.rss ?? 0))
          : '—',
        b?.error ?? '',
      ]);
    }
    if (r.node) loadRows.push([r.model, 'node', '—', '—', '—', r.node.loadMs.toFixed(0), '—', '']);
  }
  log('\nLoad (ms; cache off, files from the local dev server)');
  log(
    table(
      ['model', 'backend', 'download', 'verify', 'compile', 'total', 'RSS after load', 'note'],
      loadRows,
    ),
  );
  log('\nDecisions (latency in the page around clef.decide; node: around engine.decide)');
  const rows = results.flatMap((r) =>
    (Object.entries(r.scenarios) as Array<[Backend, ScenarioSummary[]]>).flatMap(([b, list]) =>
      scenarioRows(r.model, b, list),
    ),
  );
  log(table(SCENARIO_HEADER, rows));
  log('\nTargets (issue 7)');
  log(
    table(
      ['model', 'backend', 'figure', 'target', 'measured', 'verdict'],
      results.flatMap((r) =>
        r.targets.map((t) => [r.model, t.backend, t.figure, t.target, t.shown, t.verdict]),
      ),
    ),
  );
  const memNotes = results.flatMap((r) =>
    r.targets.filter((t) => t.note).map((t) => `${r.model}/${t.backend}: ${t.note}`),
  );
  for (const n of [...notes, ...new Set(memNotes)]) log(`note: ${n}`);

  if (args.write) {
    const { json, device, date } = resultsJson(loadEnd);
    mkdirSync('bench/results', { recursive: true });
    const file = join(
      'bench/results',
      `${date}-${device}${args.label ? `-${slug(args.label)}` : ''}.json`,
    );
    writeFileSync(file, json);
    log(`\nwrote ${file}`);
  }
}

await main();
