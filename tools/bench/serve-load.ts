/**
 * Load on `clef-web serve`: for each worker count, starts the built CLI
 * (`bin/clef-web.mjs serve`, so `npm run build:node` first) on a package, and at each
 * concurrency sends requests from that many keep-alive clients, every state distinct (a seeded
 * sentence of 4-40 words) so no answer comes from a cache it would not get in production. Prints
 * requests per second, p50 and p99 latency, errors, the server's RSS before the first request
 * and after each level, the machine's load average, and the throughput ratio of each worker
 * count to the first.
 *
 *   npx tsx tools/bench/serve-load.ts [--package models/clef-nano] [--workers 1,2]
 *     [--concurrency 1,4,16,64] [--requests 400] [--cache-mb 256] [--threads N] [--json out.json]
 *
 * `--threads` is onnxruntime's intra-op threads per worker (serve's --threads), to compare
 * `--workers 1 --threads 2` with `--workers 2`.
 */
import { writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { rssMiB, startServeCli, stopServeCli } from './serve-cli.js';

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'models/clef-nano' },
    workers: { type: 'string', default: '1,2' },
    concurrency: { type: 'string', default: '1,4,16,64' },
    requests: { type: 'string', default: '400' },
    'cache-mb': { type: 'string' },
    threads: { type: 'string' },
    json: { type: 'string' },
  },
});
const list = (s: string) => s.split(',').map(Number);

const WORDS = (
  'flight hotel book cancel my card was declined what is the weather tomorrow in paris set an ' +
  'alarm for seven please transfer money to savings account how much is left on the bill play ' +
  'some music reminder call mom check order status lost luggage at the airport'
).split(' ');
const INTENTS = ['book_flight', 'weather', 'alarm', 'transfer', 'play_music', 'bill_balance'];

/** Request `i` of a run: a distinct state (the index is in it) of 4-40 seeded words. */
function requestBody(model: string, i: number): string {
  let x = (i * 2654435761) >>> 0 || 1;
  const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x >>> 8);
  const words = Array.from({ length: 4 + (next() % 37) }, () => WORDS[next() % WORDS.length]);
  const criteria = Object.fromEntries(INTENTS.map((o) => [o, null]));
  return JSON.stringify({
    model,
    state: `#${i} ${words.join(' ')}`,
    questions: { intent: { type: 'choice', criteria } },
  });
}

function post(agent: Agent, port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/systemone',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Level {
  workers: number;
  concurrency: number;
  requests: number;
  errors: number;
  reqPerS: number;
  p50Ms: number;
  p99Ms: number;
  rssAfterMiB: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

let offset = 0;
async function level(
  port: number,
  model: string,
  concurrency: number,
  count: number,
): Promise<Omit<Level, 'workers' | 'rssAfterMiB'>> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const base = offset;
  offset += count;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const body = requestBody(model, base + next++);
        const t = performance.now();
        const status = await post(agent, port, body).catch(() => 0);
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    requests: count,
    errors,
    reqPerS: count / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

const results: Level[] = [];
const rssBefore: Record<number, number> = {};
const load = {
  start: loadavg()
    .map((l) => l.toFixed(2))
    .join(' '),
  end: '',
};
console.log(`machine: ${cpus().length} cores, load average ${load.start} (1/5/15 min)`);
for (const workers of list(values.workers!)) {
  const extra = ['--workers', String(workers), '--max-queue', '1024'];
  if (values['cache-mb'] !== undefined) extra.push('--cache-mb', values['cache-mb']);
  if (values.threads !== undefined) extra.push('--threads', values.threads);
  const { child, port, model } = await startServeCli(values.package!, extra);
  try {
    // Warm-up: every worker runs a few decisions (first runs allocate).
    await level(port, model, workers * 2, workers * 20);
    rssBefore[workers] = rssMiB(child.pid!);
    for (const concurrency of list(values.concurrency!)) {
      const r = await level(port, model, concurrency, Number(values.requests));
      results.push({ workers, ...r, rssAfterMiB: rssMiB(child.pid!) });
      const last = results.at(-1)!;
      console.log(
        `workers ${workers} c ${String(concurrency).padStart(2)}: ${last.reqPerS.toFixed(1).padStart(6)} req/s` +
          `  p50 ${last.p50Ms.toFixed(1).padStart(6)} ms  p99 ${last.p99Ms.toFixed(1).padStart(6)} ms` +
          `  errors ${last.errors}  RSS ${rssBefore[workers]!.toFixed(0)} -> ${last.rssAfterMiB.toFixed(0)} MiB`,
      );
    }
  } finally {
    await stopServeCli(child);
  }
}
load.end = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
console.log(`load average at the end: ${load.end}`);

const first = list(values.workers!)[0]!;
console.log('\n| workers | concurrency | req/s | vs first | p50 ms | p99 ms | errors | RSS MiB |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of results) {
  const base = results.find((b) => b.workers === first && b.concurrency === r.concurrency)!;
  console.log(
    `| ${r.workers} | ${r.concurrency} | ${r.reqPerS.toFixed(1)} | ${(r.reqPerS / base.reqPerS).toFixed(2)}x | ` +
      `${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.errors} | ${rssBefore[r.workers]!.toFixed(0)} → ${r.rssAfterMiB.toFixed(0)} |`,
  );
}
if (values.json) {
  writeFileSync(
    values.json,
    JSON.stringify({ cores: cpus().length, load, rssBefore, results }, null, 2),
  );
}
