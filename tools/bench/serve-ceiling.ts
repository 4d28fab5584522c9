/**
 * The ceiling of `clef-web serve`'s HTTP thread: the server of src/node/serve with an engine that
 * answers at once (a fixed System One answer, as many at once as asked), under keep-alive load
 * at concurrency 16 and 64. Whatever `--workers` adds, the server cannot answer more requests
 * per second than this: it reads, checks, parses and routes every request on one thread.
 *
 *   npx tsx tools/bench/serve-ceiling.ts [--requests 4000]
 */
import { Agent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startServer, type ServeEngine } from '../../src/node/serve/server.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '4000' } } });
const MODEL = 'stub';
const answer = JSON.stringify({
  model: MODEL,
  answers: { q: { type: 'noul', choice: 'true', confidence: 1.0, probabilities: {} } },
  usage: { input_tokens: 1, output_tokens: 0 },
});
const stub: ServeEngine = {
  lanes: 1024,
  decide: () => Promise.resolve({ json: answer }),
  modelCards: () => [{ name: MODEL, description: 'stub', release_date: '2026-12-02' }],
};
const body = JSON.stringify({
  model: MODEL,
  state: 'I was charged twice for my order and want a refund',
  questions: { q: { type: 'noul' } },
});

const server = await startServer(stub, { port: 0, maxQueue: 4096 });
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
try {
  for (const concurrency of [16, 64]) {
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const count = Number(values.requests);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count) {
          await new Promise<void>((resolve, reject) => {
            const req = httpRequest(
              {
                host: '127.0.0.1',
                port: server.port,
                method: 'POST',
                path: '/v1/systemone',
                agent,
                headers: { 'content-type': 'application/json' },
              },
              (res) => {
                res.resume();
                res.on('end', () => resolve());
              },
            );
            req.on('error', reject);
            req.end(body);
          });
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    agent.destroy();
    console.log(
      `c ${concurrency}: ${(count / seconds).toFixed(0)} req/s (client in the same process)`,
    );
  }
} finally {
  await server.close();
}
