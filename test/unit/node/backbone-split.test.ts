// A backbone split into groups decides exactly as the single graph converted from the
// same release: on onnxruntime-node, the response bytes and the raw logits are identical, for
// fp32 and q4, split two ways (two layer groups; one layer per group), over long states fed in
// uneven chunks, with prefix-cache hits and misses. Any fusion or reordering across a group
// boundary would show here as a differing bit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertRelease } from '../../../src/node/build-runtime.js';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { randomRequests } from '../../../src/build/verify/requests.js';
import { writeTinyFixture } from '../../../tools/fixture/cli.js';
import type { SystemOneRequest } from '../../../src/protocol/types.js';

const work = mkdtempSync(join(tmpdir(), 'backbone-split-'));
const release = join(work, 'release');
const SPLITS = { pairs: [2, 2], layers: [1, 1, 1, 1] } as const;
const DTYPES = ['fp32', 'q4'] as const;
const engines = new Map<string, NodeEngine>();

async function convert(dtype: (typeof DTYPES)[number], split: keyof typeof SPLITS | 'single') {
  const dir = join(work, `${dtype}-${split}`);
  await convertRelease(release, dir, {
    dtype,
    name: 'clef-tiny',
    contextTokens: 2048,
    fidelityRequests: 0,
    // onnxruntime-node runs the package graphs: the WASM-prepared ones would only cost time.
    wasmGraphs: false,
    ...(split === 'single' ? {} : { backboneGroups: SPLITS[split] }),
  });
  // One onnxruntime thread, as in verify.test.ts: both engines of a comparison run the same
  // kernels on the same thread count either way, and the tiny model's small runs take about a
  // third of the time without a thread pool on a busy 2-core machine.
  engines.set(`${dtype}-${split}`, await loadNodePackage(dir, { threads: 1 }));
}

beforeAll(async () => {
  writeTinyFixture(release, { seed: 5 });
  for (const dtype of DTYPES) {
    for (const split of ['single', 'pairs', 'layers'] as const) await convert(dtype, split);
  }
}, 120_000);

afterAll(async () => {
  for (const e of engines.values()) await e.dispose();
  rmSync(work, { recursive: true, force: true });
});

function requests(engine: NodeEngine): SystemOneRequest[] {
  return randomRequests(6, 11, {
    model: 'clef-tiny',
    tokenizer: engine.tokenizer,
    contextTokens: 2048,
    longStateTokens: [300, 700],
    longStateShare: 0.5,
    maxQuestions: 4,
  });
}

const bits = (logits: Float32Array[]) =>
  logits.map((l) => Array.from(new Uint32Array(l.buffer, l.byteOffset, l.length)));

describe.each(DTYPES)('%s: a split backbone decides byte for byte as the single graph', (dtype) => {
  it('the converter wrote the groups asked for', () => {
    const groups = (s: string) =>
      (engines.get(`${dtype}-${s}`)!.manifest.graphs as { backboneGroups?: unknown[] })
        .backboneGroups?.length;
    expect(groups('single')).toBeUndefined();
    expect(groups('pairs')).toBe(3); // the embedding, layers 0-1, layers 2-3
    expect(groups('layers')).toBe(5);
  });

  it.each(Object.keys(SPLITS))(
    'split %s: same JSON, same logit bits',
    async (split) => {
      const single = engines.get(`${dtype}-single`)!;
      const grouped = engines.get(`${dtype}-${split}`)!;
      let compared = 0;
      for (const request of requests(single)) {
        // The default chunk, then uneven small chunks (state carried across chunks and groups);
        // each request twice: a prefix-cache miss, then a hit.
        for (const chunkTokens of [undefined, 37]) {
          for (let k = 0; k < 2; k++) {
            const run = chunkTokens === undefined ? {} : { chunkTokens };
            const a = await single.decide(request, run);
            const b = await grouped.decide(request, run);
            expect(b.json).toBe(a.json);
            expect(bits(b.logits)).toEqual(bits(a.logits));
            compared++;
          }
        }
      }
      expect(compared).toBe(24);
    },
    120_000,
  );

  it('a request sharing another’s state (a prefix hit with new questions) matches too', async () => {
    const single = engines.get(`${dtype}-single`)!;
    const grouped = engines.get(`${dtype}-layers`)!;
    const [first, second] = requests(single);
    const shared = { ...second!, state: first!.state };
    for (const request of [first!, shared]) {
      const a = await single.decide(request);
      const b = await grouped.decide(request);
      expect(b.json).toBe(a.json);
      expect(bits(b.logits)).toEqual(bits(a.logits));
    }
  });
});
