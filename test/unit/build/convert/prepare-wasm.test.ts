// WASM-prepared graphs: the converter writes each graph WASM runs optimised once by
// onnxruntime-node, over the original's data files. Checked here: the wire-format reader
// round-trips real model files; a prepared graph names only its original's data files, holds
// no copy of its weights, and run at 'disabled' answers bit for bit what the original answers
// at 'all' on fresh random inputs (onnxruntime-node; the browser suite checks onnxruntime-web);
// an optimisation that makes a big new initializer is refused, a small one goes inline; the
// manifest check refuses a wasm-graph that replaces nothing, or a second twin.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertRelease as convertInBuild } from '../../../../src/build/convert/package.js';
import { convertRelease, nodeBuildRuntime } from '../../../../src/node/build-runtime.js';
import {
  externalInitializers,
  prepareGraphForWasm,
  PREPARED_INLINE_LIMIT_BYTES,
} from '../../../../src/build/convert/prepare-wasm.js';
import { GraphBuilder } from '../../../../src/build/onnx/graph.js';
import { DataType } from '../../../../src/build/onnx/proto.js';
import { readFields, writeFields } from '../../../../src/build/onnx/wire.js';
import {
  prepareWasmGraphs,
  type PackageFileEntry,
} from '../../../../src/build/convert/wasm-graphs.js';
import { graphFor, unusedGraphs } from '../../../../src/engine/graph-choice.js';
import { parseManifest, type PackageManifest } from '../../../../src/core/manifest.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';
import { SEED_ENV, testSeed } from '../../../support/seed.js';

const work = mkdtempSync(join(tmpdir(), 'prepare-wasm-'));
const release = join(work, 'release');
const dirs = {
  fp32: join(work, 'fp32'),
  q4split: join(work, 'q4split'),
  off: join(work, 'off'),
};

beforeAll(async () => {
  writeTinyFixture(release, { seed: 5, dtype: 'fp32' });
  const base = { name: 'clef-tiny', contextTokens: 2048, fidelityRequests: 0 };
  await convertRelease(release, dirs.fp32, { ...base, dtype: 'fp32' });
  await convertRelease(release, dirs.q4split, { ...base, dtype: 'q4', backboneGroups: [2, 2] });
  await convertRelease(release, dirs.off, { ...base, dtype: 'fp32', wasmGraphs: false });
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;

// A fresh generator per run: inputs differ between runs of the suite, not between the two graphs.
// The seed is printed and named in each failure; CLEF_TEST_SEED=<seed> reruns those inputs.
const SEED = testSeed('prepare-wasm random feeds and weights');
let state = (SEED ^ 0x5bd1e995) >>> 0;
const next = () => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 2 ** 32;
};

function randomFeeds(session: ort.InferenceSession, tokens: number, past: number) {
  const feeds: Record<string, ort.Tensor> = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) continue;
    const shape = meta.shape.map((d) =>
      typeof d === 'number' ? d : /past/.test(String(d)) ? past : tokens,
    );
    const n = shape.reduce((a, b) => a * b, 1);
    if (meta.type === 'int64') {
      feeds[meta.name] = new ort.Tensor(
        'int64',
        BigInt64Array.from({ length: n }, () => BigInt(Math.floor(next() * 200))),
        shape,
      );
    } else {
      const data = Float32Array.from({ length: n }, () => next() * 2 - 1);
      feeds[meta.name] = new ort.Tensor('float32', data, shape);
    }
  }
  return feeds;
}

async function outputsOf(
  path: string,
  level: 'all' | 'disabled',
  feeds: Record<string, ort.Tensor>,
) {
  const s = await ort.InferenceSession.create(path, {
    graphOptimizationLevel: level,
    intraOpNumThreads: 1,
  });
  try {
    const out = await s.run(feeds);
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.data as Float32Array]));
  } finally {
    await s.release();
  }
}

describe('the wire-format reader', () => {
  it('round-trips a model file and its graph byte for byte', () => {
    const bytes = readFileSync(join(dirs.fp32, 'backbone.onnx'));
    const fields = readFields(bytes);
    expect(Buffer.from(writeFields(fields)).equals(bytes)).toBe(true);
    const graph = fields.find((f) => f.no === 7)!;
    expect(Buffer.from(writeFields(readFields(graph.bytes!))).equals(graph.bytes!)).toBe(true);
  });
});

describe('the converter', () => {
  it('writes a wasm-graph for every float32 graph, pointing into the original data only', () => {
    for (const dir of [dirs.fp32, dirs.q4split]) {
      const m = manifestOf(dir);
      parseManifest(m);
      const sources = m.files.filter((f) =>
        ['backbone', 'head-memory', 'head-decide'].includes(f.role),
      );
      const twins = m.files.filter((f) => f.role === 'wasm-graph');
      expect(twins.map((t) => t.replaces).sort()).toEqual(sources.map((s) => s.path).sort());
      for (const twin of twins) {
        const own = externalInitializers(readFileSync(join(dir, twin.path)));
        const original = externalInitializers(readFileSync(join(dir, twin.replaces!)));
        const files = new Set([...original.values()].map((r) => r.location));
        for (const [name, ref] of own) {
          expect(files.has(ref.location), `${twin.path}: ${name} in ${ref.location}`).toBe(true);
          expect(original.get(name)).toEqual(ref);
        }
        if (dir === dirs.fp32) {
          // Nothing to fold in fp32: every weight stays where it was, and the file is structure.
          expect(own.size).toBe(original.size);
          expect(twin.bytes).toBeLessThan(statSync(join(dir, twin.replaces!)).size * 2);
        }
        // (q4's heads cast float16 weights to float32: the optimiser folds those casts into new
        // float32 initializers, small enough here to go inline; prepareGraphForWasm refuses
        // big ones.)
      }
      // Prepared graphs replace others: not counted again in the weights or the GPU's bytes.
      const data = m.files.filter((f) => f.role.endsWith('-data'));
      expect(m.variant.gpuBytes).toBe([...sources, ...data].reduce((n, f) => n + f.bytes, 0));
    }
  });

  it('leaves them out with wasmGraphs false', () => {
    expect(manifestOf(dirs.off).files.some((f) => f.role === 'wasm-graph')).toBe(false);
  });

  it('leaves them out of a package too big for WASM, and says so', async () => {
    const dir = join(work, 'huge-context');
    const lines: string[] = [];
    // 2^24 tokens of context: its KV bound alone passes WASM's 4 GiB.
    const m = await convertRelease(release, dir, {
      dtype: 'fp32',
      contextTokens: 2 ** 24,
      fidelityRequests: 0,
      log: (l) => lines.push(l),
    });
    expect(m.variant.peakBytes).toBeGreaterThan(4 * 1024 ** 3);
    expect(m.files.some((f) => f.role === 'wasm-graph')).toBe(false);
    expect(lines).toContain(
      'no WASM-prepared graphs: the package needs more memory than WASM addresses',
    );
  });

  // The backbone graphs on random token ids and state; the heads' inputs are indices into each
  // other (spans, options): the browser suite compares whole decisions through them.
  it('prepared backbones at "disabled" answer bit for bit what the originals answer at "all"', async () => {
    for (const dir of [dirs.fp32, dirs.q4split]) {
      const m = manifestOf(dir);
      const backbones = new Set(m.files.filter((f) => f.role === 'backbone').map((f) => f.path));
      const twins = m.files.filter((f) => f.role === 'wasm-graph' && backbones.has(f.replaces!));
      expect(twins.length).toBe(backbones.size);
      for (const twin of twins) {
        const source = join(dir, twin.replaces!);
        const probe = await ort.InferenceSession.create(source);
        for (const [tokens, past] of [
          [1, 0],
          [37, 0],
          [5, 11],
        ] as const) {
          const feeds = randomFeeds(probe, tokens, past);
          const a = await outputsOf(source, 'all', feeds);
          const b = await outputsOf(join(dir, twin.path), 'disabled', feeds);
          expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
          for (const name of Object.keys(a)) {
            const x = a[name]!;
            const y = b[name]!;
            expect(y.length).toBe(x.length);
            let differing = 0;
            for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) differing++;
            expect(
              differing,
              `${twin.path} ${name} at ${tokens}+${past} tokens (${SEED_ENV}=${SEED})`,
            ).toBe(0);
          }
        }
        await probe.release();
      }
    }
  }, 120_000);
});

/** x · Transpose(w): onnxruntime's constant folding turns Transpose(w) into a new initializer. */
function foldableGraph(dir: string, rows: number): string {
  const path = join(dir, `fold-${rows}.onnx`);
  const g = new GraphBuilder({ name: 'fold', onnxPath: path });
  const x = g.input('x', DataType.FLOAT, ['n', rows]);
  const w = Float32Array.from({ length: rows * 64 }, () => next());
  const weight = g.initializer('w', DataType.FLOAT, [64, rows], w);
  const t = g.op('Transpose', [weight]);
  g.output(g.op('MatMul', [x, t]), 'y', DataType.FLOAT, ['n', 64]);
  g.finish();
  return path;
}

describe('prepareGraphForWasm', () => {
  it('inlines a small new initializer and still answers bit for bit', async () => {
    const source = foldableGraph(work, 32);
    const out = join(work, 'fold-32.wasm.onnx');
    const r = await prepareGraphForWasm(ort, source, out);
    expect(r).toMatchObject({ prepared: true, inlined: 1, shared: 0 });
    const feeds = {
      x: new ort.Tensor('float32', Float32Array.from({ length: 96 }, next), [3, 32]),
    };
    const a = await outputsOf(source, 'all', feeds);
    const b = await outputsOf(out, 'disabled', feeds);
    expect(Array.from(b.y!), `${SEED_ENV}=${SEED}`).toEqual(Array.from(a.y!));
  });

  it('refuses when the optimiser makes a big new initializer, and writes nothing', async () => {
    const rows = Math.ceil(PREPARED_INLINE_LIMIT_BYTES / (64 * 4)) + 1;
    const source = foldableGraph(work, rows);
    const out = join(work, 'fold-big.wasm.onnx');
    const r = await prepareGraphForWasm(ort, source, out);
    expect(r.prepared).toBe(false);
    expect(r.prepared ? '' : r.reason).toMatch(/new \d+-byte initializer/);
    expect(() => statSync(out)).toThrow();
  });
});

describe('prepareWasmGraphs', () => {
  it('writes none with another onnxruntime-node version than the engine runtime’s', async () => {
    const files: PackageFileEntry[] = [{ path: 'backbone.onnx', role: 'backbone' }];
    const lines: string[] = [];
    const other = {
      ...ort,
      env: { ...ort.env, versions: { common: '1.29.0', node: '1.29.0' } },
    } as unknown as typeof ort;
    const runtime = { ...nodeBuildRuntime, loadOrt: async () => other };
    const written = await prepareWasmGraphs(dirs.off, files, (l) => lines.push(l), runtime);
    expect(written).toBe(0);
    expect(files).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/onnxruntime-node 1\.29\.0 is installed.*1\.30\.0/);
  });

  it('are refused before any work when no runtime is handed in (as is the fidelity pass)', async () => {
    const out = join(work, 'no-runtime');
    const base = { name: 'clef-tiny', dtype: 'fp32' as const };
    await expect(convertInBuild(release, out, base)).rejects.toThrow(
      /WASM-prepared graphs needs a runtime handed in.*wasmGraphs: false/,
    );
    await expect(
      convertInBuild(release, out, { ...base, wasmGraphs: false, fidelityRequests: 2 }),
    ).rejects.toThrow(/Measuring fidelity needs a runtime handed in.*fidelityRequests: 0/);
    expect(() => statSync(out)).toThrow();
  });
});

describe('the manifest check', () => {
  const good = () => structuredClone(manifestOf(dirs.fp32));
  it('refuses a wasm-graph that replaces nothing, a second twin, or replaces on other roles', () => {
    const none = good();
    none.files.find((f) => f.role === 'wasm-graph')!.replaces = 'nothing.onnx';
    expect(() => parseManifest(none)).toThrow(/replaces "nothing.onnx"/);
    const two = good();
    const twin = two.files.find((f) => f.role === 'wasm-graph')!;
    two.files.push({ ...twin, path: 'other.wasm.onnx' });
    expect(() => parseManifest(two)).toThrow(/has two wasm-graph files/);
    const stray = good();
    stray.files.find((f) => f.role === 'lexicon')!.replaces = 'backbone.onnx';
    expect(() => parseManifest(stray)).toThrow(/only wasm-graph files replace/);
    const data = good();
    data.files.find((f) => f.role === 'wasm-graph')!.replaces = 'backbone.onnx.data';
    expect(() => parseManifest(data)).toThrow(/not a graph of the package/);
    expect(() => parseManifest(good())).not.toThrow();
  });
});

describe('which graphs a session creates (graph-choice.ts)', () => {
  const sorted = (xs: string[]) => [...xs].sort();
  it('WASM creates the prepared twins at "disabled"; WebGPU and preparedGraphs false never', () => {
    const m = manifestOf(dirs.fp32);
    const backbone = m.files.find((f) => f.path === 'backbone.onnx')!;
    expect(graphFor(m, backbone, 'wasm', true)).toMatchObject({
      file: { path: 'backbone.wasm.onnx' },
      optimization: 'disabled',
      prepared: true,
    });
    for (const [device, prepared] of [
      ['webgpu', true],
      ['wasm', false],
    ] as const) {
      expect(graphFor(m, backbone, device, prepared)).toMatchObject({
        file: { path: 'backbone.onnx' },
        optimization: 'all',
        prepared: false,
      });
    }
    const wasmGraphs = ['backbone.wasm.onnx', 'head_memory.wasm.onnx', 'head_decide.wasm.onnx'];
    expect(sorted(unusedGraphs(m, 'wasm', 'float32', true))).toEqual(
      sorted(['backbone.onnx', 'backbone.kv16.onnx', 'head_memory.onnx', 'head_decide.onnx']),
    );
    expect(sorted(unusedGraphs(m, 'webgpu', 'float32', true))).toEqual(
      sorted(['backbone.kv16.onnx', ...wasmGraphs]),
    );
    expect(sorted(unusedGraphs(m, 'wasm', 'float32', false))).toEqual(
      sorted(['backbone.kv16.onnx', ...wasmGraphs]),
    );
    // float16 KV runs the kv16 graph, which has no twin: the float32 one and its twin stay away.
    expect(sorted(unusedGraphs(m, 'wasm', 'float16', true))).toEqual(
      sorted(['backbone.onnx', 'backbone.wasm.onnx', 'head_memory.onnx', 'head_decide.onnx']),
    );
    expect(unusedGraphs(manifestOf(dirs.off), 'wasm', 'float32', true)).toEqual([
      'backbone.kv16.onnx',
    ]);
  });

  it('a split backbone: per group; a group without KV keeps its twin at float16', () => {
    const m = manifestOf(dirs.q4split);
    const groups = m.files.filter((f) => f.role === 'backbone');
    expect(groups).toHaveLength(3);
    const unused = new Set(unusedGraphs(m, 'wasm', 'float16', true));
    let withKv = 0;
    for (const g of groups) {
      const kv16 = m.files.find((f) => f.role === 'backbone-kv16' && f.group === g.group);
      const twin = g.path.replace('.onnx', '.wasm.onnx');
      expect(unused.has(g.path)).toBe(true);
      expect(unused.has(twin), twin).toBe(kv16 !== undefined);
      if (kv16) {
        withKv++;
        expect(unused.has(kv16.path)).toBe(false);
      }
    }
    // Layers 0-1 are linear attention (no KV) in the tiny model; layer 3 is full attention.
    expect(withKv).toBe(1);
  });
});
