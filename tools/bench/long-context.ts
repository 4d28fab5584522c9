/**
 * `npx tsx tools/bench/long-context.ts [--package bench/work/real-q4] [--tokens 2048,16384]
 *   [--threads 2] [--budget N] [--kv float32|float16] [--arena on|off] [--label x] [--no-write]`
 *
 * Memory growth with the state on onnxruntime-node: one decision per state length (a fresh
 * state each, so every token runs through the backbone), the process's peak resident memory
 * during it (VmHWM, reset before each through /proc/self/clear_refs) against its resident
 * memory right after load, and the time. `--budget` sets the engine's score budget (tokens ×
 * keys per run, src/core/chunk-plan.ts; 0 = unbounded: fixed 256-token chunks, as before);
 * `--kv float16` runs the package's float16-KV graphs; `--arena off` turns onnxruntime's CPU
 * memory arena off (it keeps every buffer size a run used reserved for the next).
 * Results go to bench/results/<date>-long-context-node[-label].json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadNodePackage } from '../../src/node/engine.js';
import { loadAverage, machineFacts } from './proc.js';

const MiB = 2 ** 20;

function status(key: 'VmRSS' | 'VmHWM'): number {
  const s = readFileSync('/proc/self/status', 'utf8');
  return Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN) * 1024;
}

function resetPeak(): void {
  writeFileSync('/proc/self/clear_refs', '5');
}

const { values } = parseArgs({
  options: {
    package: { type: 'string', default: 'bench/work/real-q4' },
    tokens: { type: 'string', default: '2048,16384' },
    threads: { type: 'string', default: '2' },
    budget: { type: 'string' },
    kv: { type: 'string', default: 'float32' },
    arena: { type: 'string', default: 'on' },
    label: { type: 'string' },
    'no-write': { type: 'boolean' },
  },
});
const budget = values.budget === undefined ? undefined : Number(values.budget) || Infinity;
const loadStart = loadAverage();
const engine = await loadNodePackage(values.package!, {
  threads: Number(values.threads),
  ...(budget !== undefined ? { scoreBudget: budget } : {}),
  kvDtype: values.kv === 'float16' ? 'float16' : 'float32',
  memoryArena: values.arena !== 'off',
});
const weights = engine.manifest.variant.weightBytes;
const afterLoad = status('VmRSS');
console.log(
  `${values.package}: ${(weights / MiB).toFixed(0)} MiB of weights; RSS after load ${(afterLoad / MiB).toFixed(0)} MiB; budget ${budget ?? 'default'}; KV ${values.kv}; arena ${values.arena}; load average ${loadStart?.join(' ')}`,
);
const sentence = 'The parcel left the depot on Monday and the courier has not called since then. ';
const perSentence = engine.tokenizer.encode(sentence).length;
const rows: Array<Record<string, number>> = [];
for (const [k, target] of values.tokens!.split(',').map(Number).entries()) {
  // A distinct opening per run: no prefix-cache hit between lengths.
  const state = `Case ${k}. ` + sentence.repeat(Math.ceil(target / perSentence));
  const request = {
    model: engine.models[0],
    state,
    questions: { late: { type: 'noul' }, mood: { type: 'score', criteria: ['calm', 'upset'] } },
  };
  resetPeak();
  const t0 = performance.now();
  const out = await engine.decide(request);
  const ms = performance.now() - t0;
  const peak = status('VmHWM');
  const row = {
    stateTokens: out.encoded.stateEnd,
    inputTokens: out.encoded.inputIds.length,
    ms: Math.round(ms),
    peakBytes: peak,
    growthBytes: peak - afterLoad,
    growthOfWeights: (peak - afterLoad) / weights,
  };
  rows.push(row);
  console.log(
    `  state ${row.stateTokens} tokens: ${(ms / 1000).toFixed(0)} s; peak ${(peak / MiB).toFixed(0)} MiB, +${(row.growthBytes / MiB).toFixed(0)} MiB over load = ${(100 * row.growthOfWeights).toFixed(1)}% of the weights; answers ${JSON.stringify(out.response.answers.late)}`,
  );
}
await engine.dispose();
if (!values['no-write']) {
  mkdirSync('bench/results', { recursive: true });
  const date = new Date().toISOString();
  const path = `bench/results/${date.slice(0, 10)}-long-context-node${values.label ? `-${values.label}` : ''}.json`;
  const machine = machineFacts(loadStart);
  const command = `npx tsx tools/bench/long-context.ts ${process.argv.slice(2).join(' ')}`;
  const options = { kv: values.kv, arena: values.arena, budget: budget ?? 'default' };
  const result = {
    date,
    command,
    machine,
    package: values.package,
    options,
    weights,
    afterLoad,
    rows,
  };
  writeFileSync(path, `${JSON.stringify(result, null, 1)}\n`);
  console.log(`wrote ${path}`);
}
