/**
 * The three attacks of issue 27 against the built `clef-web serve` (`npm run build:node` first),
 * with the numbers docs/reliability.md quotes:
 * 1. `--words` distinct single-word states of `--word-kib` KiB each: the server's RSS before and
 *    after, and the slowest refusal;
 * 2. while 4 clients send such bodies back to back for `--seconds` from `--hostile-from`
 *    (127.0.0.2: the server's fair queue tells clients apart by address), a normal client's
 *    (127.0.0.1, one request at a time) `GET /v1/models` latency (p50, p95, max) and its
 *    decisions per second alone and meanwhile, with their ratio;
 * 3. `--idle` TCP connections from 127.0.0.2 that send nothing: whether a normal request from
 *    127.0.0.1 is answered meanwhile, and how many of the idle ones the server has closed after
 *    its header timeout (`--client-timeout-ms`).
 *
 *   npx tsx tools/bench/serve-hostile.ts [--package models/clef-nano] [--words 100]
 *     [--word-kib 1000] [--seconds 10] [--idle 300] [--client-timeout-ms 3000] [--parts 1,2,3]
 *     [--hostile-from 127.0.0.2] [--workers 1]
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { rssMiB, startServeCli, stopServeCli } from './serve-cli.js';

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'models/clef-nano' },
    words: { type: 'string', default: '100' },
    'word-kib': { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    idle: { type: 'string', default: '300' },
    'client-timeout-ms': { type: 'string', default: '3000' },
    parts: { type: 'string', default: '1,2,3' },
    'hostile-from': { type: 'string', default: '127.0.0.2' },
    workers: { type: 'string', default: '1' },
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
  const wordLength = Number(values['word-kib']) * 1024;
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
          (await send(port, 'POST', '/v1/systemone', decision(`hello ${decisions}`))).status === 200
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
    const hostileBodies = Array.from({ length: 8 }, (_, k) => decision(word(wordLength, 5000 + k)));
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
