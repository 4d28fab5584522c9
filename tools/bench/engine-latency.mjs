#!/usr/bin/env node
/**
 * Engine latency on each device:
 *   node tools/bench/engine-latency.mjs [--devices wasm,webgpu] [--runs 20] [--model /models/tiny/]
 * Starts the Vite dev server, opens the test harness in Debian's Chromium (WebGPU on whatever
 * adapter the browser finds: SwiftShader here), and prints per device: load time (download,
 * verify, compile, from info().loadMs), the median decision latency over `runs` fresh states
 * with 1 and with 8 questions, and cold vs prefix-cache-hit latency (new questions about a state
 * just decided). Latencies are the engine's own (`clef.decide()` timings.totalMs, in the worker)
 * with the page's wall clock (worker round trip included) next to them.
 */
/* global window, document, performance -- page-side callbacks of page.evaluate */
import { chromium } from '@playwright/test';
import { createServer } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium.mjs';

function argument(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const DEVICES = argument('devices', 'wasm,webgpu').split(',');
const RUNS = Number(argument('runs', '20'));
const MODEL_URL = argument('model', '/models/tiny/');
const PORT = Number(argument('port', '5189'));
/** Decisions before measuring: a WebGPU engine compiles its shaders on its first runs. */
const WARMUP = 3;

const WORDS =
  'order card charged twice refund parcel late billing account password email reset invoice ' +
  'shipping damaged box priority customer angry happy thanks urgent support subscription';

/** A distinct state per index (~40 words), so each one is a prefix-cache miss. */
function state(i) {
  const words = WORDS.split(' ');
  const text = Array.from({ length: 40 }, (_, k) => words[(i * 7 + k * 3) % words.length]);
  return `Ticket ${i}: ${text.join(' ')}`;
}

/** `n` questions cycling through the three types; `salt` makes them differ between calls. */
function questions(n, salt) {
  const out = {};
  for (let k = 0; k < n; k++) {
    const id = `q${k}_${salt}`;
    if (k % 3 === 0) out[id] = { type: 'noul', instructions: `Is it about item ${salt}-${k}?` };
    else if (k % 3 === 1)
      out[id] = { type: 'choice', criteria: { billing: null, shipping: 'parcels', other: null } };
    else out[id] = { type: 'score', criteria: ['calm', 'annoyed', `angry ${salt}`] };
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function decideMany(page, bodies) {
  return page.evaluate(async (bodies) => {
    const clef = window.__bench;
    const out = [];
    for (const body of bodies) {
      const t0 = performance.now();
      const d = await clef.decide(body);
      out.push({
        wallMs: performance.now() - t0,
        totalMs: d.timings.totalMs,
        prefixHit: d.timings.prefixHit,
        backboneTokens: d.timings.backboneTokens,
        inputTokens: d.response.usage.input_tokens,
      });
    }
    return out;
  }, bodies);
}

function summary(samples, expectHit) {
  if (samples.some((s) => s.prefixHit !== expectHit)) {
    throw new Error(`expected every decision to be a prefix-cache ${expectHit ? 'hit' : 'miss'}`);
  }
  return {
    totalMs: median(samples.map((s) => s.totalMs)),
    wallMs: median(samples.map((s) => s.wallMs)),
    tokens: median(samples.map((s) => s.backboneTokens)),
  };
}

async function measure(browser, origin, device) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.routeWebSocket(/.*/, () => undefined); // no HMR reloads mid-run
  await page.goto(`${origin}/test/browser/pages/harness.html`);
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'ready');
  const info = await page.evaluate(
    async ([model, device]) => {
      window.__bench = await window.clefWeb.createClef({ model, device, cache: false });
      return window.__bench.info();
    },
    [MODEL_URL, device],
  );
  if (info.device !== device) throw new Error(`asked for ${device}, got ${info.device}`);
  const model = info.model;
  const body = (i, n, salt) => ({ model, state: state(i), questions: questions(n, salt) });
  let next = 0;
  await decideMany(
    page,
    Array.from({ length: WARMUP }, () => body(next++, 8, 'warm')),
  );
  const one = summary(
    await decideMany(
      page,
      Array.from({ length: RUNS }, () => body(next++, 1, 'a')),
    ),
    false,
  );
  const eight = summary(
    await decideMany(
      page,
      Array.from({ length: RUNS }, () => body(next++, 8, 'b')),
    ),
    false,
  );
  // Cold then hit: a new state, then new questions about it.
  const pairs = [];
  for (let r = 0; r < RUNS; r++) {
    const i = next++;
    pairs.push(...(await decideMany(page, [body(i, 1, 'cold'), body(i, 1, 'hit')])));
  }
  const cold = summary(
    pairs.filter((_, k) => k % 2 === 0),
    false,
  );
  const hit = summary(
    pairs.filter((_, k) => k % 2 === 1),
    true,
  );
  await context.close();
  return { device, info, one, eight, cold, hit };
}

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const cell = (s) => `${fmt(s.totalMs)} (${fmt(s.wallMs)})`;

async function main() {
  const server = await createServer({
    server: { port: PORT, strictPort: true, host: 'localhost' },
    logLevel: 'error',
  });
  await server.listen();
  const origin = `http://localhost:${PORT}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const version = browser.version();
  const rows = [];
  try {
    for (const device of DEVICES) {
      process.stderr.write(`measuring ${device}...\n`);
      rows.push(await measure(browser, origin, device));
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const { info } = rows[0];
  console.log(
    `clef-web engine latency: ${info.model} (${info.dtype}) from ${MODEL_URL}, Chromium ${version}, ` +
      `median of ${RUNS}; decision cells: engine time (page wall clock)\n`,
  );
  console.log(
    '| device | adapter | load total (download / verify / compile) | 1 question | 8 questions | cold (1 q) | prefix hit (1 q) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const l = r.info.loadMs;
    console.log(
      `| ${r.device} | ${r.info.adapter ?? `cpu, ${r.info.threads} thread(s)`} | ${fmt(l.total)} (${fmt(l.download)} / ${fmt(l.verify)} / ${fmt(l.compile)}) ` +
        `| ${cell(r.one)} | ${cell(r.eight)} | ${cell(r.cold)} | ${cell(r.hit)} |`,
    );
  }
  const r = rows[0];
  console.log(
    `\nbackbone tokens per decision (median): 1 question ${r.one.tokens}, 8 questions ${r.eight.tokens}, ` +
      `cold ${r.cold.tokens}, hit ${r.hit.tokens}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
