/**
 * Three ways one hostile client could hurt the others, run against the built `clef-web serve`
 * (`npm run build:node` first), with the numbers docs/reliability.md quotes:
 * 1. `--words` distinct single-word states of `--word-kib` KiB each: the server's RSS before and
 *    after, and the slowest refusal;
 * 2. while 4 clients send such bodies back to back for `--seconds` from `--hostile-from`
 *    (127.0.0.2: the server's fair queue tells clients apart by address), a normal client's
 *    (127.0.0.1, one request at a time) `GET /v1/models` latency (p50, p95, max) and its
 *    decisions per second alone and meanwhile, with their ratio;
 * 3. `--idle` TCP connections from 127.0.0.2 that send nothing: whether a normal request from
 *    127.0.0.1 is answered meanwhile, and how many of the idle ones the server has closed after
 *    its header timeout (`--client-timeout-ms`).
 * 4. The event-loop stall of a server in this process (`startServer(nodeEngineBackend(engine))`,
 *    as `clef-web/node` users run it: the engine on the HTTP thread, no workers): the worst and
 *    p99 delay (monitorEventLoopDelay) while 4 bodies of one `--word-kib` single-word state are
 *    refused and `GET /v1/models` is polled, `--rounds` times, against the same polling alone,
 *    with their ratio. (test/unit/node/serve/serve-hostile.test.ts asserts why it stays small, by
 *    counting: such a state never reaches the BPE.) Parts 1-3 need the built CLI; part 4 runs from
 *    source.
 *
 *   npx tsx tools/bench/serve-hostile.ts [--package models/clef-nano] [--words 100]
 *     [--word-kib 1000] [--seconds 10] [--idle 300] [--client-timeout-ms 3000]
 *     [--parts 1,2,3,4] [--hostile-from 127.0.0.2] [--workers 1] [--rounds 5]
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { nodeEngineBackend, startServer } from '../../src/node/serve/server.js';
import { rssMiB, startServeCli, stopServeCli } from './serve-cli.js';

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'models/clef-nano' },
    words: { type: 'string', default: '100' },
    'word-kib': { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    idle: { type: 'string', default: '300' },
    'client-timeout-ms': { type: 'string', default: '3000' },
    parts: { type: 'string', default: '1,2,3,4' },
    'hostile-from': { type: 'string', default: '127.0.0.2' },
    workers: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
  },
});

function send(
  port: number,
  method: string,
  path: string,
  body?: string,
  localAddress?: string,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: body ? { 'content-type': 'application/json' } : {},
        ...(localAddress ? { localAddress } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function word(length: number, seed: number): string {
  const codes = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    codes[i] = 97 + ((x >>> 0) % 26);
  }
  return Buffer.from(codes).toString('latin1');
}

const parts = new Set(values.parts!.split(',').map(Number));
const q = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const wordLength = Number(values['word-kib']) * 1024;
if ([1, 2, 3].some((p) => parts.has(p))) await cliParts();
if (parts.has(4)) await eventLoopStall();

/** Parts 1-3, against the built CLI. */
async function cliParts() {
  const { child, port, model } = await startServeCli(values.package!, [
    '--client-timeout-ms',
    values['client-timeout-ms']!,
    '--workers',
    values.workers!,
  ]);
  const decision = (state: string) =>
    JSON.stringify({ model, state, questions: { q: { type: 'noul' } } });
  try {
    await send(port, 'POST', '/v1/systemone', decision('warm up'));
    // 1. Distinct huge single-word states.
    if (parts.has(1)) {
      const before = rssMiB(child.pid!);
      let slowest = 0;
      const statuses = new Map<number, number>();
      for (let i = 0; i < Number(values.words); i++) {
        const r = await send(port, 'POST', '/v1/systemone', decision(word(wordLength, 1 + i)));
        slowest = Math.max(slowest, r.ms);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      const after = rssMiB(child.pid!);
      console.log(
        `1. ${values.words} distinct ${values['word-kib']} KiB single-word states: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ` +
          `slowest answer ${slowest.toFixed(1)} ms, RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MiB`,
      );
    }

    // 2. A normal client while 4 clients send over-long bodies.
    if (parts.has(2)) {
      const normal = async (ms: number) => {
        const lat: number[] = [];
        let decisions = 0;
        const end = performance.now() + ms;
        while (performance.now() < end) {
          lat.push((await send(port, 'GET', '/v1/models')).ms);
          if (
            (await send(port, 'POST', '/v1/systemone', decision(`hello ${decisions}`))).status ===
            200
          )
            decisions++;
        }
        lat.sort((a, b) => a - b);
        return { lat, rate: decisions / (ms / 1000) };
      };
      const seconds = Number(values.seconds) * 1000;
      const quiet = await normal(seconds / 2);
      let stop = false;
      let hostileSent = 0;
      // Made beforehand: generating them here would take this process's own time from the
      // normal client it measures. They are refused by length, so repeating 8 of them is enough.
      const hostileBodies = Array.from({ length: 8 }, (_, k) =>
        decision(word(wordLength, 5000 + k)),
      );
      const hostile = Array.from({ length: 4 }, async () => {
        while (!stop) {
          const body = hostileBodies[hostileSent++ % 8];
          await send(port, 'POST', '/v1/systemone', body, values['hostile-from']);
        }
      });
      const loaded = await normal(seconds);
      stop = true;
      await Promise.all(hostile);
      console.log(
        `2. GET /v1/models while 4 clients sent ${hostileSent} over-long bodies: p50 ${q(loaded.lat, 0.5).toFixed(1)} ms, ` +
          `p95 ${q(loaded.lat, 0.95).toFixed(1)} ms, max ${loaded.lat.at(-1)!.toFixed(1)} ms ` +
          `(quiet: p95 ${q(quiet.lat, 0.95).toFixed(1)} ms); a normal client's decisions ${quiet.rate.toFixed(1)} -> ${loaded.rate.toFixed(1)} /s ` +
          `(${(loaded.rate / quiet.rate).toFixed(2)}x of alone; hostile from ${values['hostile-from']}, ${values.workers} worker(s))`,
      );
      console.log(
        `   load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    }

    // 3. Idle sockets.
    if (parts.has(3)) {
      const idle: Socket[] = [];
      let closedByServer = 0;
      await Promise.all(
        Array.from(
          { length: Number(values.idle) },
          () =>
            new Promise<void>((resolve) => {
              const s = connect({
                port,
                host: '127.0.0.1',
                localAddress: '127.0.0.2',
                allowHalfOpen: true,
              });
              idle.push(s);
              s.on('data', () => undefined);
              // The server's FIN ('end'; this side stays half-open, as an attacker's would).
              s.once('end', () => closedByServer++);
              s.on('error', () => undefined);
              s.once('connect', () => resolve());
              s.once('error', () => resolve());
            }),
        ),
      );
      const served = await send(port, 'GET', '/v1/models', undefined, '127.0.0.1').catch(
        (e: Error) => ({ status: 0, ms: 0, error: e.message }),
      );
      const atOnce = closedByServer;
      await new Promise((r) => setTimeout(r, Number(values['client-timeout-ms']) + 1500));
      console.log(
        `3. ${values.idle} idle sockets from 127.0.0.2: a request from 127.0.0.1 got ${served.status} in ${served.ms.toFixed(1)} ms; ` +
          `${atOnce} closed at once (per-client limit), ${closedByServer} closed ${Number(values['client-timeout-ms']) + 1500} ms later`,
      );
      for (const s of idle) s.destroy();
    }
  } finally {
    await stopServeCli(child);
  }
}

/** Part 4: the event loop of a server in this process, with the engine on it. */
async function eventLoopStall() {
  const engine = await loadNodePackage(values.package!, { threads: 1 });
  const server = await startServer(nodeEngineBackend(engine), { port: 0 });
  try {
    const model = engine.manifest.model.name;
    const decision = (state: string) =>
      JSON.stringify({ model, state, questions: { q: { type: 'noul' } } });
    await send(server.port, 'POST', '/v1/systemone', decision('warm up'));
    // Made beforehand, so that this process's own work is the sending, not the making.
    const bodies = Array.from({ length: 4 }, (_, k) => decision(word(wordLength, 9000 + k)));
    const round = async (hostile: boolean) => {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const refusals = hostile
        ? Promise.all(bodies.map((b) => send(server.port, 'POST', '/v1/systemone', b)))
        : Promise.resolve([]);
      const polls: number[] = [];
      for (let i = 0; i < 5; i++) polls.push((await send(server.port, 'GET', '/v1/models')).ms);
      const statuses = (await refusals).map((r) => r.status);
      delay.disable();
      if (statuses.some((s) => s !== 400)) throw new Error(`refusals answered ${statuses}`);
      return {
        maxMs: delay.max / 1e6,
        p99Ms: delay.percentile(99) / 1e6,
        pollMs: Math.max(...polls),
      };
    };
    const rounds = Number(values.rounds);
    const quiet: Array<Awaited<ReturnType<typeof round>>> = [];
    const hostile: Array<Awaited<ReturnType<typeof round>>> = [];
    // Interleaved, so that the machine's load falls on both alike.
    for (let i = 0; i < rounds; i++) {
      quiet.push(await round(false));
      hostile.push(await round(true));
    }
    const worst = (rs: typeof quiet, key: 'maxMs' | 'p99Ms' | 'pollMs') =>
      Math.max(...rs.map((r) => r[key]));
    const median = (rs: typeof quiet, key: 'maxMs') => {
      const sorted = rs.map((r) => r[key]).sort((a, b) => a - b);
      return sorted[sorted.length >> 1]!;
    };
    console.log(
      `4. event loop of an in-process server, ${rounds} rounds of 4 bodies of one ${values['word-kib']} KiB word (all 400) ` +
        `while GET /v1/models is polled 5 times: worst stall ${worst(hostile, 'maxMs').toFixed(1)} ms ` +
        `(median of rounds ${median(hostile, 'maxMs').toFixed(1)} ms, p99 ${worst(hostile, 'p99Ms').toFixed(1)} ms, slowest poll ${worst(hostile, 'pollMs').toFixed(1)} ms); ` +
        `polling alone: worst ${worst(quiet, 'maxMs').toFixed(1)} ms (median ${median(quiet, 'maxMs').toFixed(1)} ms); ` +
        `ratio of medians ${median(quiet, 'maxMs') > 0 ? `${(median(hostile, 'maxMs') / median(quiet, 'maxMs')).toFixed(2)}x` : 'n/a (no quiet sample)'}`,
    );
    console.log(
      `   load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await server.close();
    await engine.dispose();
  }
}
