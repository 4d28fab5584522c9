/**
 * The js device against onnxruntime-web's WASM, in one run, on a production build
 * served over loopback, each visit in a fresh browser profile:
 *
 * - first answer: navigation → createClef → the first decision of a ~300-token request on the
 *   bundled, trained clef-nano, against onnxruntime-node's load + first answer in a fresh
 *   process (target: js ≤ 3× Node);
 * - bytes fetched until that answer, split into the package's files and everything else
 *   (target: js ≤ the package + 300 KB), and the onnxruntime files among them;
 * - decisions (prefix cache cold): ~300 tokens (target: js ≤ 1.5× WASM, same page) and ~2,048
 *   tokens on clef-nano; ~300 tokens on the tiny fixture and on a mid-size random release (3.4 M
 *   linear weights), for the cost model;
 * - what `auto` picks for each package and why;
 * - each device's cost-model figures (src/core/device-cost.ts) fitted to the decisions measured
 *   here, and the runtime start and session creation from info().loadMs.
 *
 *   npm run build:lib && npm run build:node && npm run models:tiny
 *   npx tsx tools/bench/js-device.ts [--runs 3] [--no-write] [--port 5590]
 *
 * Writes bench/results/<date>-js-device.json unless --no-write.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Request } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';
import type { PackageManifest } from '../../src/core/manifest.js';
import { costFacts, decisionFeatures, type CostFacts } from '../../src/core/device-cost.js';
import { convertRelease } from '../../src/node/build-runtime.js';
import { writeTinyFixture } from '../fixture/cli.js';
import { TINY_TEXT, type TextShape } from '../fixture/config.js';
import { loadAverage } from './proc.js';
import { serve } from './serve.js';

/** A random release with bigger layers than the tiny fixture: the cost model's per-weight term. */
const MID_TEXT: TextShape = {
  ...TINY_TEXT,
  hidden_size: 256,
  intermediate_size: 768,
  num_attention_heads: 8,
  num_key_value_heads: 2,
  head_dim: 32,
  linear_num_key_heads: 4,
  linear_num_value_heads: 8,
  linear_key_head_dim: 32,
  linear_value_head_dim: 32,
};

/** Packages the page fetches (public/ is copied into the build: /models/<name>/). */
const PACKAGES = {
  nano: { url: '/clef-web/models/clef-nano/', dir: 'models/clef-nano', model: 'clef-nano' },
  tiny: { url: '/models/tiny/', dir: 'public/models/tiny', model: 'clef-tiny' },
  mid: { url: '/models/bench-js-mid/', dir: 'public/models/bench-js-mid', model: 'clef-mid' },
} as const;
type PackageName = keyof typeof PACKAGES;

const WORDS = (
  'order card charged twice refund parcel late billing account password email reset invoice ' +
  'shipping damaged box priority customer angry happy thanks urgent support subscription cancel'
).split(' ');

/** A request of about `words` words of state (a distinct state per `seed`: no prefix hits). */
function request(model: string, words: number, seed: number) {
  const state = Array.from(
    { length: words },
    (_, i) => `${WORDS[(i * 7 + seed * 13) % WORDS.length]}${(i + seed) % 10}`,
  ).join(' ');
  return {
    model,
    state,
    questions: {
      route: {
        type: 'choice',
        instructions: 'Which team should answer?',
        criteria: { billing: 'Money and charges', shipping: 'Parcels', account: null, other: null },
      },
      urgent: { type: 'noul', instructions: 'Does it need an answer today?' },
    },
  };
}

/** Words of state that make clef-nano's input about 300 and 2,048 tokens. */
const SHORT_WORDS = 95;
const LONG_WORDS = 720;

/** The mid-size package under public/models (gitignored), converted once. */
async function writeMidPackage(): Promise<void> {
  const dir = PACKAGES.mid.dir;
  if (existsSync(join(dir, 'manifest.json'))) return;
  const release = mkdtempSync(join(tmpdir(), 'clef-bench-js-mid-'));
  try {
    writeTinyFixture(release, { dtype: 'fp32', seed: 3, text: MID_TEXT });
    await convertRelease(release, dir, {
      dtype: 'fp32',
      name: PACKAGES.mid.model,
      fidelityRequests: 0,
    });
  } finally {
    rmSync(release, { recursive: true, force: true });
  }
}

interface Decisions {
  tokens: number;
  ms: number[];
  /** Session creation of the package's graphs when this visit loaded it for these decisions. */
  sessionsMs: number | null;
}

interface VisitResult {
  device: string;
  run: number;
  /** navigation start → first answer (page clock). */
  firstAnswerMs: number;
  createMs: number;
  firstDecisionMs: number;
  bytes: {
    total: number;
    package: number;
    other: number;
    onnxruntimeFiles: string[];
    /**
     * Everything fetched that is not the package's, by path: as it crossed the network
     * (`bytes`, compressed where the server compressed it) and decoded (`decodedBytes`, fetched
     * again here: the browser reports some worker scripts' transfer without their bodies).
     */
    otherFiles: Array<{ path: string; bytes: number; decodedBytes: number }>;
    /** The same split with every file at its decoded size. */
    decoded: { package: number; other: number };
  };
  info: { device: string; deviceReason: string; loadMs: unknown };
  decisions: Record<string, Decisions>;
  auto: Record<string, { device: string; reason: string }>;
}

/** Bytes of these URLs' bodies, decoded (fetched again from Node). */
async function decodedSize(urls: string[]): Promise<number> {
  let n = 0;
  for (const url of urls) n += (await (await fetch(url)).arrayBuffer()).byteLength;
  return n;
}

async function visit(pageUrl: string, device: string, run: number, decide: boolean) {
  const profile = mkdtempSync(join(tmpdir(), 'clef-bench-js-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  const sizes: Array<Promise<{ url: string; bytes: number }>> = [];
  context.on('requestfinished', (r: Request) => {
    sizes.push(
      r.sizes().then((s) => ({ url: r.url(), bytes: s.responseBodySize + s.responseHeadersSize })),
    );
  });
  try {
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.locator('#status').filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    const first = request(PACKAGES.nano.model, SHORT_WORDS, 1000 + run);
    const out = await page.evaluate(
      async ({ device, first, url }) => {
        type C = {
          systemone(r: object): Promise<{ usage: { input_tokens: number } }>;
          info(): Promise<{ device: string; deviceReason: string; loadMs: unknown }>;
          dispose(): Promise<void>;
        };
        const w = window as unknown as {
          clefWeb: { createClef(o: object): Promise<C> };
          bench?: C;
        };
        const t0 = performance.now();
        const clef = await w.clefWeb.createClef({ model: url, device, warmUp: false });
        const t1 = performance.now();
        await clef.systemone(first);
        const t2 = performance.now();
        w.bench = clef;
        return {
          createMs: t1 - t0,
          firstDecisionMs: t2 - t1,
          firstAnswerMs: t2,
          info: await clef.info(),
        };
      },
      { device, first, url: PACKAGES.nano.url },
    );
    // What crossed the network until then (the decisions below fetch nothing more for nano).
    const fetched = await Promise.all(sizes.splice(0));
    const total = fetched.reduce((n, f) => n + f.bytes, 0);
    const pkg = fetched.filter((f) => new URL(f.url).pathname.startsWith(PACKAGES.nano.url));
    const packageBytes = pkg.reduce((n, f) => n + f.bytes, 0);
    const otherFiles = await Promise.all(
      fetched
        .filter((f) => !new URL(f.url).pathname.startsWith(PACKAGES.nano.url))
        .map(async (f) => ({
          path: new URL(f.url).pathname,
          bytes: f.bytes,
          decodedBytes: await decodedSize([f.url]),
        })),
    );
    const onnxruntimeFiles = fetched
      .map((f) => new URL(f.url).pathname)
      .filter((p) => /\/ort\/|onnxruntime|ort-wasm/.test(p));
    const decisions: Record<string, Decisions> = {};
    const auto: VisitResult['auto'] = {};
    const time = async (
      name: string,
      pkg: PackageName,
      words: number,
      count: number,
      seed: number,
    ) => {
      const requests = Array.from({ length: count }, (_, i) =>
        request(PACKAGES[pkg].model, words, seed + i),
      );
      const r = await page.evaluate(
        async ({ requests, url, device, reuse }) => {
          type C = {
            systemone(r: object): Promise<{ usage: { input_tokens: number } }>;
            info(): Promise<{ loadMs: { sessions: Record<string, number> } }>;
            dispose(): Promise<void>;
          };
          const w = window as unknown as {
            clefWeb: { createClef(o: object): Promise<C> };
            bench: C;
          };
          const clef = reuse
            ? w.bench
            : await w.clefWeb.createClef({ model: url, device, warmUp: false });
          const sessions = Object.values((await clef.info()).loadMs.sessions);
          const sessionsMs = reuse ? null : sessions.reduce((a, b) => a + b, 0);
          const ms: number[] = [];
          let tokens = 0;
          for (const body of requests) {
            const t0 = performance.now();
            tokens = (await clef.systemone(body)).usage.input_tokens;
            ms.push(performance.now() - t0);
          }
          if (!reuse) await clef.dispose();
          return { ms, tokens, sessionsMs };
        },
        { requests, url: PACKAGES[pkg].url, device, reuse: pkg === 'nano' },
      );
      decisions[name] = r;
    };
    if (decide) {
      await time('nano-300', 'nano', SHORT_WORDS, 5, 2000 + run * 10);
      await time('nano-2048', 'nano', LONG_WORDS, 2, 3000 + run * 10);
      await time('tiny-300', 'tiny', SHORT_WORDS, 2, 4000 + run * 10);
      await time('tiny-2048', 'tiny', LONG_WORDS, 1, 4500 + run * 10);
      await time('mid-300', 'mid', SHORT_WORDS, 2, 5000 + run * 10);
      await time('mid-2048', 'mid', LONG_WORDS, 1, 5500 + run * 10);
    }
    if (device === 'auto') {
      for (const name of Object.keys(PACKAGES) as PackageName[]) {
        auto[name] = await page.evaluate(
          async ({ url }) => {
            type C = {
              info(): Promise<{ device: string; deviceReason: string }>;
              dispose(): Promise<void>;
            };
            const w = window as unknown as { clefWeb: { createClef(o: object): Promise<C> } };
            const clef = await w.clefWeb.createClef({ model: url, warmUp: false });
            const { device, deviceReason } = await clef.info();
            await clef.dispose();
            return { device, reason: deviceReason };
          },
          { url: PACKAGES[name].url },
        );
      }
    }
    await page.evaluate(() =>
      (window as unknown as { bench: { dispose(): Promise<void> } }).bench.dispose(),
    );
    return {
      device,
      run,
      firstAnswerMs: out.firstAnswerMs,
      createMs: out.createMs,
      firstDecisionMs: out.firstDecisionMs,
      bytes: {
        total,
        package: packageBytes,
        other: total - packageBytes,
        onnxruntimeFiles,
        otherFiles,
        decoded: {
          package: await decodedSize(pkg.map((f) => f.url)),
          other: otherFiles.reduce((n, f) => n + f.decodedBytes, 0),
        },
      },
      info: out.info,
      decisions,
      auto,
    } satisfies VisitResult;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** onnxruntime-node's or the js device's load + first answer in a fresh Node process (dist/node). */
function nodeFirstAnswer(runtime: 'onnxruntime' | 'js'): { loadMs: number; firstMs: number } {
  const script = `
    const { loadNodePackage } = await import(${JSON.stringify(resolve('dist/node/node/engine.js'))});
    const t0 = performance.now();
    const engine = await loadNodePackage(${JSON.stringify(PACKAGES.nano.dir)}, { threads: 1, runtime: '${runtime}' });
    const t1 = performance.now();
    await engine.decide(${JSON.stringify(request(PACKAGES.nano.model, SHORT_WORDS, 1000))});
    const t2 = performance.now();
    await engine.dispose();
    console.log(JSON.stringify({ loadMs: t1 - t0, firstMs: t2 - t1 }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { loadMs: number; firstMs: number };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

/**
 * The cost model's per-decision figures (device-cost.ts's decisionFeatures) fitted by least
 * squares to the decisions measured: [decisionMs, tokenMsPerMWeight, attentionNsPerUnit,
 * layerNsPerUnit, recurrenceNsPerUnit].
 */
/**
 * The per-decision costs (device-cost.ts's decisionFeatures) from the fastest decisions measured:
 * clef-nano (full attention only, few weights) at ~520 and ~2,350 tokens gives the fixed part and
 * attention's cost; the tiny and the mid-size releases (linear attention, 0.17 M and 3.4 M
 * weights) at ~570 tokens give the per-weight and the recurrence costs; the two solved in turn
 * until they settle. The 2,767-token decisions are left out, as the check (printed beside).
 * Every layer's small ops fall into the recurrence term: these packages cannot tell them apart.
 */
function fitCost(
  m: Record<
    'nano5' | 'nano23' | 'tiny5' | 'mid5',
    { facts: CostFacts; tokens: number; ms: number }
  >,
) {
  const x = (p: { facts: CostFacts; tokens: number }) => decisionFeatures(p.facts, p.tokens);
  let tokenMsPerMWeight = 0.1;
  let attentionNsPerUnit = 0;
  let decisionMs = 0;
  let recurrenceNsPerUnit = 0;
  for (let i = 0; i < 50; i++) {
    const [n5, n23] = [x(m.nano5), x(m.nano23)];
    const rest5 = m.nano5.ms - tokenMsPerMWeight * n5[1]!;
    const rest23 = m.nano23.ms - tokenMsPerMWeight * n23[1]!;
    attentionNsPerUnit = Math.max(0, (rest23 - rest5) / (n23[2]! - n5[2]!));
    decisionMs = Math.max(0, rest5 - attentionNsPerUnit * n5[2]!);
    const [t, d] = [x(m.tiny5), x(m.mid5)];
    const yt = m.tiny5.ms - decisionMs - attentionNsPerUnit * t[2]!;
    const yd = m.mid5.ms - decisionMs - attentionNsPerUnit * d[2]!;
    const det = t[1]! * d[4]! - t[4]! * d[1]!;
    tokenMsPerMWeight = Math.max(0, (yt * d[4]! - t[4]! * yd) / det);
    recurrenceNsPerUnit = Math.max(0, (t[1]! * yd - yt * d[1]!) / det);
  }
  return {
    decisionMs,
    tokenMsPerMWeight,
    attentionNsPerUnit,
    layerNsPerUnit: 0,
    recurrenceNsPerUnit,
  };
}

/**
 * Least squares with every coefficient ≥ 0: a feature whose coefficient comes out negative is
 * dropped (held at 0) and the rest fitted again, until none is (measurements on a busy machine
 * otherwise trade one term against another).
 */
function nonNegativeFit(rows: number[][], y: number[]): number[] {
  const n = rows[0]!.length;
  const active = new Set(Array.from({ length: n }, (_, i) => i));
  for (;;) {
    const idx = [...active];
    const x = leastSquares(
      rows.map((r) => idx.map((i) => r[i]!)),
      y,
    );
    const full = new Array<number>(n).fill(0);
    idx.forEach((i, k) => (full[i] = x[k]!));
    const negative = idx.filter((i) => full[i]! < 0);
    if (negative.length === 0) return full;
    for (const i of negative) active.delete(i);
  }
}

function leastSquares(rows: number[][], y: number[]): number[] {
  const n = rows[0]!.length;
  const a = Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)),
  );
  const b = Array.from({ length: n }, (_, i) => rows.reduce((s, r, k) => s + r[i]! * y[k]!, 0));
  for (let c = 0; c < n; c++) {
    for (let r = c + 1; r < n; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k < n; k++) a[r]![k]! -= f * a[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!;
    for (let k = r + 1; k < n; k++) s -= a[r]![k]! * x[k]!;
    x[r] = s / a[r]![r]!;
  }
  return x;
}

async function main() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      'no-write': { type: 'boolean' },
      port: { type: 'string', default: '5590' },
    },
  });
  const runs = Number(values.runs);
  for (const need of [
    'dist/lib/clef.worker.js',
    'dist/node/node/engine.js',
    'public/models/tiny/manifest.json',
  ]) {
    if (!existsSync(need))
      throw new Error(
        `${need} is missing: npm run build:lib && npm run build:node && npm run models:tiny`,
      );
  }
  await writeMidPackage();
  const loadStart = loadAverage();
  const server = await serve('dist', Number(values.port));
  const log = (s: string) => console.log(s);
  log(
    `page ${server.pageUrl}; ${cpus().length} cores; load average ${loadStart?.join(' ') ?? '?'}`,
  );
  const visits: VisitResult[] = [];
  const node: Array<{ runtime: string; loadMs: number; firstMs: number }> = [];
  try {
    for (let run = 0; run < runs; run++) {
      for (const device of ['js', 'wasm', 'auto']) {
        const v = await visit(server.pageUrl, device, run, device !== 'auto');
        visits.push(v);
        const l = v.info.loadMs as {
          download: number;
          verify: number;
          tokenizer: number;
          compile: number;
          sessions: Record<string, number>;
          total: number;
          runtime: { importMs: number; initMs: number } | null;
        };
        log(
          `  load: download ${l.download.toFixed(0)}, verify ${l.verify.toFixed(0)}, tokenizer ${l.tokenizer.toFixed(0)}, compile ${l.compile.toFixed(0)} (sessions ${Object.values(
            l.sessions,
          )
            .reduce((a, b) => a + b, 0)
            .toFixed(
              0,
            )}, runtime import ${l.runtime?.importMs.toFixed(0)} + init ${l.runtime?.initMs.toFixed(0)}), total ${l.total.toFixed(0)} ms`,
        );
        const d = Object.entries(v.decisions)
          .map(([k, x]) => `${k} (${x.tokens} tokens) ${median(x.ms).toFixed(0)} ms`)
          .join(', ');
        log(
          `${device} #${run}: first answer ${v.firstAnswerMs.toFixed(0)} ms after navigation (createClef ${v.createMs.toFixed(0)} + decision ${v.firstDecisionMs.toFixed(0)}) on ${v.info.device}; fetched ${v.bytes.total} bytes (package ${v.bytes.package}, other ${v.bytes.other}, onnxruntime files ${v.bytes.onnxruntimeFiles.length})${d ? `; ${d}` : ''}`,
        );
        for (const [name, a] of Object.entries(v.auto))
          log(`  auto on ${name}: ${a.device} — ${a.reason}`);
      }
      for (const runtime of ['onnxruntime', 'js'] as const) {
        const n = nodeFirstAnswer(runtime);
        node.push({ runtime, ...n });
        log(
          `node ${runtime} #${run}: load ${n.loadMs.toFixed(0)} + first answer ${n.firstMs.toFixed(0)} ms (fresh process, 1 thread)`,
        );
      }
    }
  } finally {
    await server.close();
  }
  const loadEnd = loadAverage();

  const of = (device: string) => visits.filter((v) => v.device === device);
  const med = (device: string, f: (v: VisitResult) => number) => median(of(device).map(f));
  const decisionMedian = (device: string, name: string) =>
    median(of(device).flatMap((v) => v.decisions[name]?.ms ?? []));
  const tokens = (name: string) => of('js')[0]?.decisions[name]?.tokens ?? 0;
  const nodeOrt = median(
    node.filter((n) => n.runtime === 'onnxruntime').map((n) => n.loadMs + n.firstMs),
  );
  const nodeJs = median(node.filter((n) => n.runtime === 'js').map((n) => n.loadMs + n.firstMs));
  const first = {
    js: med('js', (v) => v.firstAnswerMs),
    wasm: med('wasm', (v) => v.firstAnswerMs),
    auto: med('auto', (v) => v.firstAnswerMs),
  };
  // createClef → first answer (the page's own clock, from its call): what Node's figure is.
  const fromCreate = {
    js: med('js', (v) => v.createMs + v.firstDecisionMs),
    wasm: med('wasm', (v) => v.createMs + v.firstDecisionMs),
  };
  const bytes = { js: of('js')[0]!.bytes, wasm: of('wasm')[0]!.bytes };
  const d300 = { js: decisionMedian('js', 'nano-300'), wasm: decisionMedian('wasm', 'nano-300') };
  const d2048 = {
    js: decisionMedian('js', 'nano-2048'),
    wasm: decisionMedian('wasm', 'nano-2048'),
  };
  const autoPick = of('auto')[0]!.auto;

  // Cost model: fitted per device from the decisions; start and load from info().loadMs.
  const facts = (name: PackageName) =>
    costFacts(
      JSON.parse(
        readFileSync(join(PACKAGES[name].dir, 'manifest.json'), 'utf8'),
      ) as PackageManifest,
    );
  // The fastest of each (the least disturbed by other work on the machine).
  const best = (device: string, name: string) =>
    Math.min(...of(device).flatMap((v) => v.decisions[name]?.ms ?? []));
  const cost = Object.fromEntries(
    (['js', 'wasm'] as const).map((device) => {
      const point = (p: PackageName, n: '300' | '2048') => ({
        facts: facts(p),
        tokens: tokens(`${p}-${n}`),
        ms: best(device, `${p}-${n}`),
      });
      const fit = fitCost({
        nano5: point('nano', '300'),
        nano23: point('nano', '2048'),
        tiny5: point('tiny', '300'),
        mid5: point('mid', '300'),
      });
      const c = [
        fit.decisionMs,
        fit.tokenMsPerMWeight,
        fit.attentionNsPerUnit,
        0,
        fit.recurrenceNsPerUnit,
      ];
      for (const [p, n] of [
        ['nano', '300'],
        ['nano', '2048'],
        ['tiny', '300'],
        ['tiny', '2048'],
        ['mid', '300'],
        ['mid', '2048'],
      ] as const) {
        const q = point(p, n);
        const predicted = decisionFeatures(q.facts, q.tokens).reduce(
          (sum, f, i) => sum + f * c[i]!,
          0,
        );
        log(
          `  ${device} ${p} ${q.tokens} tokens: fastest ${q.ms.toFixed(0)} ms, model ${predicted.toFixed(0)} ms`,
        );
      }
      const loads = of(device).map(
        (v) =>
          v.info.loadMs as {
            runtime: { importMs: number; initMs: number } | null;
            sessions: Record<string, number>;
          },
      );
      const startMs = Math.min(
        ...loads.map((l) => (l.runtime ? l.runtime.importMs + l.runtime.initMs : 0)),
      );
      // Session creation: a fixed part and a part per MiB of graph files, from the three packages.
      const sessions = [
        {
          mib: facts('nano').graphBytes / 2 ** 20,
          ms: Math.min(...loads.map((l) => Object.values(l.sessions).reduce((a, b) => a + b, 0))),
        },
        ...(['tiny', 'mid'] as const).map((p) => ({
          mib: facts(p).graphBytes / 2 ** 20,
          ms: Math.min(...of(device).flatMap((v) => v.decisions[`${p}-300`]?.sessionsMs ?? [])),
        })),
      ];
      const [loadFixedMs, loadMsPerMiB] = nonNegativeFit(
        sessions.map((x) => [1, x.mib]),
        sessions.map((x) => x.ms),
      );
      log(
        `  ${device} sessions: ${sessions.map((x) => `${x.mib.toFixed(2)} MiB ${x.ms.toFixed(0)} ms`).join(', ')}`,
      );
      return [device, { startMs, loadFixedMs, loadMsPerMiB, ...fit }];
    }),
  );

  const pct = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  log('\nSummary (medians):');
  log(
    `  first answer (clef-nano, ~${tokens('nano-300')} tokens, fresh profile, after navigation): js ${first.js.toFixed(0)} ms, wasm ${first.wasm.toFixed(0)} ms (wasm/js ${pct(first.wasm, first.js)}), auto ${first.auto.toFixed(0)} ms`,
  );
  log(
    `  createClef → first answer: js ${fromCreate.js.toFixed(0)} ms, wasm ${fromCreate.wasm.toFixed(0)} ms (wasm/js ${pct(fromCreate.wasm, fromCreate.js)}); Node load + first answer, fresh process: onnxruntime-node ${nodeOrt.toFixed(0)} ms, js ${nodeJs.toFixed(0)} ms; page js / Node onnxruntime ${pct(fromCreate.js, nodeOrt)} from createClef, ${pct(first.js, nodeOrt)} from navigation (target ≤ 3×: ${fromCreate.js <= 3 * nodeOrt ? 'met' : 'missed'})`,
  );
  log(
    `  decoded: js package ${bytes.js.decoded.package} + other ${bytes.js.decoded.other} (target other ≤ 300 KB: ${bytes.js.decoded.other <= 300 * 1024 ? 'met' : 'missed'}); wasm other ${bytes.wasm.decoded.other}`,
  );
  log(
    `  bytes until the first answer: js ${bytes.js.total} (package ${bytes.js.package} + other ${bytes.js.other}; target other ≤ 300 KB: ${bytes.js.other <= 300 * 1024 ? 'met' : 'missed'}; onnxruntime files ${bytes.js.onnxruntimeFiles.length}), wasm ${bytes.wasm.total} (other ${bytes.wasm.other}, onnxruntime files ${bytes.wasm.onnxruntimeFiles.length})`,
  );
  log(
    `  decision ~${tokens('nano-300')} tokens: js ${d300.js.toFixed(1)} ms, wasm ${d300.wasm.toFixed(1)} ms, js/wasm ${pct(d300.js, d300.wasm)} (target ≤ 1.5×: ${d300.js <= 1.5 * d300.wasm ? 'met' : 'missed'})`,
  );
  log(
    `  decision ~${tokens('nano-2048')} tokens: js ${d2048.js.toFixed(0)} ms, wasm ${d2048.wasm.toFixed(0)} ms, js/wasm ${pct(d2048.js, d2048.wasm)}; auto picks ${autoPick.nano?.device} for clef-nano (faster at this length: ${d2048.js <= d2048.wasm ? 'js' : 'wasm'})`,
  );
  for (const name of ['tiny', 'mid'] as const) {
    log(
      `  decision ~${tokens(`${name}-300`)} tokens on ${name}: js ${decisionMedian('js', `${name}-300`).toFixed(1)} ms, wasm ${decisionMedian('wasm', `${name}-300`).toFixed(1)} ms; auto picks ${autoPick[name]?.device}`,
    );
  }
  log(`  fitted costs: ${JSON.stringify(cost)}`);
  log(`load average ${loadStart?.join(' ')} at start, ${loadEnd?.join(' ')} at end`);
  if (!values['no-write']) {
    mkdirSync('bench/results', { recursive: true });
    const date = new Date().toISOString();
    const file = join('bench/results', `${date.slice(0, 10)}-js-device.json`);
    const result = {
      date,
      command: `npx tsx tools/bench/js-device.ts ${process.argv.slice(2).join(' ')}`,
      browser: CHROMIUM_PATH,
      cores: cpus().length,
      loadAverage: { start: loadStart, end: loadEnd },
      summary: {
        first,
        fromCreate,
        nodeOrt,
        nodeJs,
        bytes,
        d300,
        d2048,
        autoPick,
        cost,
        tokens: { short: tokens('nano-300'), long: tokens('nano-2048') },
      },
      visits,
      node,
    };
    writeFileSync(file, `${JSON.stringify(result, null, 1)}\n`);
    log(`wrote ${file}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve('tools/bench/js-device.ts')) {
  await main();
}
