/**
 * Fuzzes `clef-web serve` over HTTP and prints a summary (counts per kind and status,
 * mismatches, requests without an answer, the slowest answer):
 *
 *   npx tsx tools/fuzz/run-serve.ts --seed 1 --count 10000
 *       starts a server in this process on a freshly built tiny package (the unit tests' one);
 *   npx tsx tools/fuzz/run-serve.ts --seed 1 --count 10000 --url http://127.0.0.1:8787 \
 *       --model clef-flash --context 65536
 *       fuzzes a server already running (its model name, context and body cap must be given).
 *
 * Exits 1 when any answer differs from what system-one.md prescribes.
 */
import { parseArgs } from 'node:util';
import {
  buildTinyPackage,
  TINY_ALIAS,
  TINY_CONTEXT,
  TINY_MODEL,
} from '../../test/unit/support/tiny-package.js';
import { loadNodePackage } from '../../src/node/engine.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  nodeEngineBackend,
  startServer,
} from '../../src/node/serve/server.js';
import { driveServe } from './serve-driver.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    count: { type: 'string', default: '10000' },
    url: { type: 'string' },
    model: { type: 'string', default: TINY_MODEL },
    alias: { type: 'string', default: TINY_ALIAS },
    context: { type: 'string', default: String(TINY_CONTEXT) },
    'max-body': { type: 'string', default: String(DEFAULT_MAX_BODY_BYTES) },
    concurrency: { type: 'string', default: '4' },
  },
});

let url = values.url;
let cleanup = async () => undefined as void;
if (url === undefined) {
  const tiny = await buildTinyPackage('clef-fuzz-serve-');
  const engine = await loadNodePackage(tiny.dir, { threads: 1 });
  const server = await startServer(nodeEngineBackend(engine), { port: 0 });
  url = server.url;
  cleanup = async () => {
    await server.close();
    await engine.dispose();
    tiny.remove();
  };
}

const summary = await driveServe({
  url,
  seed: Number(values.seed),
  count: Number(values.count),
  concurrency: Number(values.concurrency),
  contextTokens: Number(values.context),
  maxBodyBytes: Number(values['max-body']),
  generate: { model: values.model, alias: values.alias, transport: 'http' },
  afterBatch: async (done) => {
    process.stderr.write(`\r${done} cases`);
  },
});
process.stderr.write('\n');
await cleanup();

console.log(
  `clef-web serve fuzz: seed ${summary.seed}, ${summary.cases} cases in ${(summary.totalMs / 1000).toFixed(1)} s against ${url}`,
);
console.log('status counts:', JSON.stringify(summary.byStatus));
for (const [kind, statuses] of Object.entries(summary.byKind).sort()) {
  console.log(`  ${kind.padEnd(14)} ${JSON.stringify(statuses)}`);
}
console.log(`max latency: ${summary.maxLatencyMs.toFixed(1)} ms (${summary.maxLatencyKind})`);
console.log(`mismatches: ${summary.mismatches.length}; no answer: ${summary.noAnswer.length}`);
for (const line of [...summary.mismatches, ...summary.noAnswer].slice(0, 30))
  console.log(`  ${line}`);
console.log(
  JSON.stringify({
    ...summary,
    mismatches: summary.mismatches.length,
    noAnswer: summary.noAnswer.length,
  }),
);
process.exitCode = summary.mismatches.length + summary.noAnswer.length > 0 ? 1 : 0;
