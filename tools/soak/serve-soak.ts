/**
 * Soak of `clef-web serve`: 10,000 decisions of varied size against a server in a
 * child process, after a warm-up, sampling the child's memory (RSS, JS heap, external and
 * ArrayBuffer memory, all after full GCs) and its live onnxruntime tensors, and printing a table
 * and JSON. Passes when every decision is answered and RSS and heap end within 5% of their level
 * after the warm-up, and the live tensor count does not grow (within 10%). The engine runs with a
 * prefix-cache budget the warm-up fills (`--cache-mib`, default 16; the server's default is
 * 256 MiB, which a tiny model needs ~3,500 decisions to fill), so the level after the warm-up is
 * the steady one.
 *
 * Warm-up: `--warmup` decisions at least, then more in steps of `--warmup-step` until RSS (after
 * GCs) has stopped rising: two steps in a row that each add less than `--plateau-pct` (1%) to the
 * RSS of the step before end it (one flat step can fall in a flat stretch of a cache's sawtooth), and the warm level is that sample, at most `--warmup-max` decisions in (then
 * the soak says the plateau was not reached and the bound is measured from there anyway). Every
 * warm-up sample is printed, so the reader sees where the level was taken. A fixed warm-up was
 * read too early once: with caches that fill and empty (`--distinct-words`), RSS climbed +11%
 * in the 500 decisions after the warm sample and was then flat within ±1.4%. A leak still fails:
 * it keeps growing after the plateau, across the whole measured run, against the ±5% bound.
 *
 *   nice -n 5 npx tsx tools/soak/serve-soak.ts [--decisions 10000] [--warmup 1000] [--package DIR]
 *     [--cache-mib 16] [--samples 10] [--seed 9] [--distinct-words 0] [--heap-slack-mib 0]
 *     [--warmup-step 250] [--warmup-max 3x --warmup] [--plateau-pct 1]
 *
 * Tensor count: onnxruntime-node gives no count of its own, and a Node tensor has no dispose to
 * count (its data is a JS typed array the GC frees). So the child wraps
 * `InferenceSession.prototype.run` and registers every tensor fed to or returned by a session
 * (each once) in a FinalizationRegistry: live = registered - collected, read after full GCs.
 * Tensors the engine builds and never feeds are not seen; every tensor that reaches onnxruntime is.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { caseRng, type Rng } from '../fuzz/prng.js';

interface Sample {
  label: string;
  decisions: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  tensorsSeen: number;
  tensorsLive: number;
}

async function child(packageDir: string, cacheBudgetBytes: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc || !process.send) throw new Error('run through fork() with --expose-gc');
  let seen = 0;
  let collected = 0;
  const registered = new WeakSet<object>();
  const registry = new FinalizationRegistry<null>(() => collected++);
  const track = (tensors: Record<string, unknown>) => {
    for (const t of Object.values(tensors)) {
      if (typeof t === 'object' && t !== null && !registered.has(t)) {
        registered.add(t);
        registry.register(t, null);
        seen++;
      }
    }
  };
  // The factory's type hides it, but `InferenceSession` is the class every session is made of.
  const proto = (ort.InferenceSession as unknown as { prototype: unknown }).prototype as {
    run: (feeds: Record<string, unknown>, ...rest: unknown[]) => Promise<Record<string, unknown>>;
  };
  const run = proto.run;
  proto.run = async function (this: unknown, feeds, ...rest) {
    track(feeds);
    const out = await run.call(this, feeds, ...rest);
    track(out);
    return out;
  };
  // Imported after the patch so nothing can have bound the original first.
  const { loadNodePackage } = await import('../../src/node/engine.js');
  const { nodeEngineBackend, startServer } = await import('../../src/node/serve/server.js');
  const engine = await loadNodePackage(packageDir, { threads: 1, cacheBudgetBytes });
  const server = await startServer(nodeEngineBackend(engine), { port: 0 });
  const settle = () => new Promise((r) => setTimeout(r, 100));
  process.send({ type: 'listening', url: server.url, models: engine.models });
  process.on('message', (m: { type: string }) => {
    if (m.type === 'memory') {
      void (async () => {
        // Two rounds: finalizers run after a GC, and what they free needs another one.
        for (let i = 0; i < 3; i++) {
          gc();
          await settle();
        }
        const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
        const live = seen - collected;
        process.send!({ type: 'memory', rss, heapUsed, external, arrayBuffers, seen, live });
      })();
    } else if (m.type === 'close') {
      void server
        .close()
        .then(() => engine.dispose())
        .then(() => process.exit(0));
    }
  });
}

function ask<T>(c: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type !== type) return;
      c.off('message', on);
      resolve(m as T);
    };
    c.on('message', on);
    c.send({ type });
  });
}

const WORDS = ['order', 'late', 'refund', 'card', 'charged', 'twice', 'parcel', 'damaged', 'help'];

/**
 * Decision i: 0-120 words of state, 1-4 questions of every type, 2-8 options; plus `distinct`
 * made-up words of 4-12 letters, each new to the tokenizer (they churn its piece cache).
 */
function decisionBody(
  rng: Rng,
  i: number,
  model: string,
  distinct = 0,
): { text: string; ids: string[] } {
  const made = Array.from({ length: distinct }, () =>
    Array.from({ length: rng.int(4, 12) }, () => String.fromCharCode(97 + rng.int(0, 25))).join(''),
  );
  const words = Array.from({ length: rng.int(0, 120) }, () => rng.pick(WORDS));
  const state = [...made, ...words].join(' ');
  const questions: Record<string, unknown> = {};
  for (let q = rng.int(1, 4); q > 0; q--) {
    const n = rng.int(2, 8);
    const type = rng.pick(['noul', 'choice', 'score']);
    questions[`q${i}_${q}`] =
      type === 'noul'
        ? { type, instructions: 'Is it urgent?' }
        : type === 'choice'
          ? { type, criteria: Object.fromEntries(WORDS.slice(0, n).map((w) => [w, null])) }
          : { type, criteria: WORDS.slice(0, Math.min(n, 10)) };
  }
  return { text: JSON.stringify({ model, state, questions }), ids: Object.keys(questions) };
}

function post(url: URL, agent: Agent, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

async function parent(): Promise<void> {
  const { values } = parseArgs({
    options: {
      decisions: { type: 'string', default: '10000' },
      warmup: { type: 'string', default: '1000' },
      samples: { type: 'string', default: '10' },
      package: { type: 'string' },
      seed: { type: 'string', default: '9' },
      'cache-mib': { type: 'string', default: '16' },
      'distinct-words': { type: 'string', default: '0' },
      // Heap allowed above the warm level besides the 5%: caches that fill after the warm-up
      // (the tokenizer's piece cache, 4 MiB, with --distinct-words).
      'heap-slack-mib': { type: 'string', default: '0' },
      'warmup-step': { type: 'string', default: '250' },
      'warmup-max': { type: 'string' },
      'plateau-pct': { type: 'string', default: '1' },
    },
  });
  const total = Number(values.decisions);
  const warmupMin = Number(values.warmup);
  const warmupStep = Number(values['warmup-step']);
  const warmupMax = Number(values['warmup-max'] ?? 3 * warmupMin);
  const plateau = Number(values['plateau-pct']) / 100;
  let warmup = 0;
  let plateauReached = false;
  let dir = values.package;
  let remove = () => undefined as void;
  if (dir === undefined) {
    const { buildTinyPackage } = await import('../../test/unit/support/tiny-package.js');
    const tiny = await buildTinyPackage('clef-soak-');
    dir = tiny.dir;
    remove = tiny.remove;
  }
  const script = fileURLToPath(import.meta.url);
  const cacheBytes = Number(values['cache-mib']) * 2 ** 20;
  const c = fork(script, ['--child', dir, String(cacheBytes)], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const started = performance.now();
  const samples: Sample[] = [];
  let failures = 0;
  let done = 0;
  try {
    const { url, models } = await ask<{ url: string; models: string[] }>(c, 'listening');
    const target = new URL('/v1/systemone', url);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const sample = async (label: string) => {
      const m = await ask<Record<string, number>>(c, 'memory');
      const s: Sample = {
        label,
        decisions: done,
        rss: m['rss']!,
        heapUsed: m['heapUsed']!,
        external: m['external']!,
        arrayBuffers: m['arrayBuffers']!,
        tensorsSeen: m['seen']!,
        tensorsLive: m['live']!,
      };
      samples.push(s);
      process.stderr.write(`${label}: ${done} decisions, rss ${mib(s.rss)} MiB\n`);
    };
    const decide = async (from: number, to: number) => {
      let next = from;
      const lane = async () => {
        while (next < to) {
          const i = next++;
          const { text, ids } = decisionBody(
            caseRng(Number(values.seed), i),
            i,
            models[0]!,
            Number(values['distinct-words']),
          );
          const r = await post(target, agent, text);
          const ok =
            r.status === 200 && Object.keys(JSON.parse(r.body).answers).join() === ids.join();
          if (!ok) failures++;
          done++;
        }
      };
      await Promise.all([lane(), lane(), lane(), lane()]);
    };
    await sample('start');
    await decide(0, warmupMin);
    warmup = warmupMin;
    await sample(`warm-up ${warmup}`);
    let flatSteps = 0;
    while (warmup < warmupMax) {
      const before = samples[samples.length - 1]!.rss;
      const to = Math.min(warmupMax, warmup + warmupStep);
      await decide(warmup, to);
      warmup = to;
      await sample(`warm-up ${warmup}`);
      flatSteps = samples[samples.length - 1]!.rss < before * (1 + plateau) ? flatSteps + 1 : 0;
      if (flatSteps === 2) {
        plateauReached = true;
        break;
      }
    }
    done = 0;
    await sample('warm');
    const step = Math.ceil(total / Number(values.samples));
    for (let from = 0; from < total; from += step) {
      await decide(warmup + from, warmup + Math.min(total, from + step));
      await sample(`after ${done}`);
    }
    agent.destroy();
    const exited = new Promise((r) => c.once('exit', r));
    c.send({ type: 'close' });
    await exited;
  } finally {
    c.kill('SIGKILL');
    remove();
  }
  report(
    samples,
    failures,
    total,
    warmup,
    plateauReached
      ? `two steps in a row each within ${values['plateau-pct']}% RSS of the one before`
      : 'no plateau reached',
    performance.now() - started,
    cacheBytes,
    Number(values['heap-slack-mib']),
  );
}

const mib = (b: number) => (b / 2 ** 20).toFixed(1);

function report(
  samples: Sample[],
  failures: number,
  total: number,
  warmup: number,
  warmupEnd: string,
  ms: number,
  cacheBytes: number,
  heapSlackMib: number,
) {
  const warm = samples.find((s) => s.label === 'warm')!;
  const last = samples[samples.length - 1]!;
  const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)}%`;
  console.log(
    `clef-web serve soak: ${total} decisions after a ${warmup}-decision warm-up (${warmupEnd}), ` +
      `${(ms / 1000).toFixed(0)} s; engine prefix cache budget ${mib(cacheBytes)} MiB ` +
      '(the warm-up fills it: what it holds is not a leak)',
  );
  console.log(
    '| sample | decisions | RSS MiB | ΔRSS vs warm | heap MiB | Δheap vs warm | external MiB | tensors seen | tensors live |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const s of samples) {
    console.log(
      `| ${s.label} | ${s.decisions} | ${mib(s.rss)} | ${pct(s.rss, warm.rss)} | ${mib(s.heapUsed)} | ` +
        `${pct(s.heapUsed, warm.heapUsed)} | ${mib(s.external)} | ${s.tensorsSeen} | ${s.tensorsLive} |`,
    );
  }
  const rssOk = Math.abs(last.rss - warm.rss) / warm.rss <= 0.05;
  // Every sample after the warm-up, not only the last: a cache that empties when full would
  // make the last one look flat.
  const slack = heapSlackMib * 2 ** 20;
  const after = samples.slice(samples.indexOf(warm) + 1);
  const heapMax = Math.max(...after.map((s) => s.heapUsed));
  const heapOk =
    heapMax <= warm.heapUsed * 1.05 + slack && last.heapUsed >= warm.heapUsed * 0.95 - slack;
  // The prefix cache holds a varying number of entries (they differ in size): a leak grows with
  // every decision, so 10% over the warm level over 10,000 decisions would be far below one.
  const tensorsOk = last.tensorsLive <= warm.tensorsLive * 1.1;
  const pass = failures === 0 && rssOk && heapOk && tensorsOk;
  console.log(
    `failed decisions: ${failures}; RSS ${pct(last.rss, warm.rss)}, heap ${pct(last.heapUsed, warm.heapUsed)} ` +
      `vs warm (bound ±5%, heap +${heapSlackMib} MiB; highest heap ${pct(heapMax, warm.heapUsed)}); live tensors ${warm.tensorsLive} -> ${last.tensorsLive}: ${pass ? 'PASS' : 'FAIL'}`,
  );
  console.log(JSON.stringify({ total, warmup, warmupEnd, failures, pass, samples }));
  process.exitCode = pass ? 0 : 1;
}

if (process.argv[2] === '--child') await child(process.argv[3]!, Number(process.argv[4]));
else await parent();
