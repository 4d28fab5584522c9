// The converter's backbone split: how groups are planned, what a grouped package's
// manifest says (format 2, files tagged by group, each group's I/O), that the graphs have
// exactly that I/O, that the manifest check refuses inconsistent groups, and that the default
// stays one graph (format 1) for a small backbone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTO_GROUP_BYTES,
  AUTO_SPLIT_ABOVE_BYTES,
  planBackboneGroups,
} from '../../../../src/build/convert/backbone-groups.js';
import { groupingOf, parseGroupBytes } from '../../../../src/node/convert/cli.js';
import { convertRelease } from '../../../../src/node/build-runtime.js';
import { backboneGroups } from '../../../../src/core/graph-spec.js';
import { parseManifest, type PackageManifest } from '../../../../src/core/manifest.js';
import type { Qwen35TextConfig } from '../../../../src/build/release.js';
import { writeTinyFixture } from '../../../../tools/fixture/cli.js';

const work = mkdtempSync(join(tmpdir(), 'backbone-groups-'));
const release = join(work, 'release');
let single: PackageManifest;
let grouped: PackageManifest;

beforeAll(async () => {
  writeTinyFixture(release, { seed: 2 });
  const base = { dtype: 'fp32' as const, name: 'clef-tiny', fidelityRequests: 0 };
  single = await convertRelease(release, join(work, 'single'), base);
  grouped = await convertRelease(release, join(work, 'grouped'), {
    ...base,
    backboneGroups: [2, 2],
  });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const text = (layers: number) => ({ num_hidden_layers: layers }) as Qwen35TextConfig;
const MiB = 2 ** 20;

describe('planning', () => {
  it('auto keeps a backbone up to 1 GiB in one graph', () => {
    const plan = planBackboneGroups(text(4), {
      embedding: 100 * MiB,
      layers: [200 * MiB, 0, 0, 0],
    });
    expect(plan).toEqual([{ embed: true, layers: [0, 4], finalNorm: true, bytes: 300 * MiB }]);
    expect(AUTO_SPLIT_ABOVE_BYTES).toBe(2 ** 30);
  });

  it('auto splits a Clef-flash-sized q4 backbone: the embedding alone, then ≤ 512 MiB groups', () => {
    const layers = Array.from({ length: 32 }, () => 115e6);
    const plan = planBackboneGroups(text(32), { embedding: 1.2e9, layers });
    expect(plan[0]).toEqual({ embed: true, layers: [0, 0], finalNorm: false, bytes: 1.2e9 });
    expect(plan.slice(1).map((g) => g.layers)).toEqual(
      Array.from({ length: 8 }, (_, k) => [4 * k, 4 * k + 4]),
    );
    for (const g of plan.slice(1)) {
      expect(g.bytes).toBeLessThanOrEqual(AUTO_GROUP_BYTES);
      expect(g.embed).toBe(false);
    }
    expect(plan.map((g) => g.finalNorm)).toEqual([...Array<boolean>(8).fill(false), true]);
  });

  it('a byte limit packs consecutive layers; a layer above it gets a group alone', () => {
    const plan = planBackboneGroups(text(5), { embedding: 1, layers: [3, 3, 9, 2, 2] }, 6);
    expect(plan.map((g) => g.layers)).toEqual([
      [0, 0],
      [0, 2],
      [2, 3],
      [3, 5],
    ]);
    expect(planBackboneGroups(text(5), { embedding: 1, layers: [3, 3, 9, 2, 2] }, 0)).toHaveLength(
      1,
    );
  });

  it('an explicit list must cover every layer with positive groups', () => {
    const est = { embedding: 1, layers: [1, 1, 1, 1] };
    expect(planBackboneGroups(text(4), est, [1, 3]).map((g) => g.layers)).toEqual([
      [0, 0],
      [0, 1],
      [1, 4],
    ]);
    expect(() => planBackboneGroups(text(4), est, [2, 1])).toThrow(/sum to 4/);
    expect(() => planBackboneGroups(text(4), est, [0, 4])).toThrow(/positive/);
  });

  it('the CLI reads sizes and layer lists', () => {
    expect(parseGroupBytes('auto')).toBe('auto');
    expect(parseGroupBytes('0')).toBe(0);
    expect(parseGroupBytes('512M')).toBe(512 * MiB);
    expect(parseGroupBytes('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(() => parseGroupBytes('lots')).toThrow(/not auto or a size/);
    expect(groupingOf(undefined, '4,4')).toEqual([4, 4]);
    expect(groupingOf('1G', '4,4')).toEqual([4, 4]);
    expect(groupingOf()).toBe('auto');
    expect(() => groupingOf(undefined, '4,x')).toThrow(/layer counts/);
  });
});

describe('the grouped package', () => {
  it('the default (auto) keeps the tiny backbone one graph, format 1, untagged files', () => {
    expect(single.formatVersion).toBe(1);
    expect(single.files.filter((f) => f.role === 'backbone').map((f) => f.path)).toEqual([
      'backbone.onnx',
    ]);
    expect(single.files.some((f) => 'group' in f)).toBe(false);
    expect('backboneGroups' in single.graphs).toBe(false);
  });

  it('format 2: files tagged by group, each group with its own layers’ state', () => {
    expect(grouped.formatVersion).toBe(2);
    const tagged = grouped.files
      .filter((f) => f.role === 'backbone' || f.role === 'backbone-data')
      .map((f) => [f.path, f.group]);
    expect(tagged).toEqual([
      ['backbone-g0.onnx', 0],
      ['backbone-g0.onnx.data', 0],
      ['backbone-g1.onnx', 1],
      ['backbone-g1.onnx.data', 1],
      ['backbone-g2.onnx', 2],
      ['backbone-g2.onnx.data', 2],
    ]);
    expect(grouped.files.filter((f) => f.group !== undefined).every((f) => f.bytes > 0)).toBe(true);
    // The whole backbone's I/O is the single graph's.
    expect(grouped.graphs.backbone).toEqual(single.graphs.backbone);
    const groups = backboneGroups(parseManifest(grouped));
    expect(groups.map((g) => [g.layers, g.input, g.output])).toEqual([
      [[0, 0], 'input_ids', 'residual_out'],
      [[0, 2], 'residual_in', 'residual_out'],
      [[2, 4], 'residual_in', 'hidden'],
    ]);
    expect(groups.map((g) => g.states.map((s) => s.input))).toEqual([
      [],
      ['conv_state.0', 'recurrent_state.0', 'conv_state.1', 'recurrent_state.1'],
      ['conv_state.2', 'recurrent_state.2', 'past_key.3', 'past_value.3'],
    ]);
    // Together, the groups carry exactly the single graph's state.
    const all = groups.flatMap((g) => g.states.map((s) => s.input)).sort();
    expect(all).toEqual(
      backboneGroups(single)[0]!
        .states.map((s) => s.input)
        .sort(),
    );
  });

  it('each graph has exactly the I/O its manifest entry lists', async () => {
    for (const g of backboneGroups(grouped)) {
      const session = await ort.InferenceSession.create(join(work, 'grouped', g.graph.path));
      const entry = (grouped.graphs as { backboneGroups: PackageManifest['graphs'][] })
        .backboneGroups[g.index] as unknown as {
        inputs: { name: string }[];
        outputs: { name: string }[];
      };
      expect(session.inputNames).toEqual(entry.inputs.map((i) => i.name));
      expect(session.outputNames).toEqual(entry.outputs.map((o) => o.name));
      await session.release();
    }
  });

  it('the manifest check refuses groups that do not add up', () => {
    const copy = (): PackageManifest =>
      JSON.parse(readFileSync(join(work, 'grouped', 'manifest.json'), 'utf8')) as PackageManifest;
    expect(() => parseManifest(copy())).not.toThrow();
    const cases: Array<[string, (m: PackageManifest) => void, RegExp]> = [
      ['format 1 with groups', (m) => (m.formatVersion = 1), /needs format version 2/],
      ['an untagged backbone file', (m) => delete m.files[1]!.group, /is not one of the 3/],
      ['a tag out of range', (m) => (m.files[0]!.group = 7), /is not one of the 3/],
      ['a group without a graph', (m) => (m.files[2]!.group = 0), /group 0 has 2 graph files/],
      [
        'two float16-KV graphs in a group',
        (m) => {
          const kv16 = m.files.find((f) => f.role === 'backbone-kv16')!;
          m.files.push({ ...kv16, path: 'other.kv16.onnx' });
        },
        /group \d has 2 float16-KV graph files/,
      ],
      [
        'an untagged float16-KV graph',
        (m) => delete m.files.find((f) => f.role === 'backbone-kv16')!.group,
        /is not one of the 3/,
      ],
      [
        'a tagged head file',
        (m) => (m.files.find((f) => f.role === 'lexicon')!.group = 0),
        /only backbone files/,
      ],
      [
        'layers that skip',
        (m) => {
          (m.graphs as { backboneGroups: { layers: number[] }[] }).backboneGroups[2]!.layers = [
            3, 4,
          ];
        },
        /group 2: layers/,
      ],
      [
        'layers that stop short',
        (m) => {
          const g = (m.graphs as { backboneGroups: { layers: number[] }[] }).backboneGroups;
          g[2]!.layers = [2, 3];
        },
        /run 3 of 4 layers/,
      ],
    ];
    for (const [what, mutate, error] of cases) {
      const m = copy();
      mutate(m);
      expect(() => parseManifest(m), what).toThrow(error);
    }
    const old = JSON.parse(JSON.stringify(single)) as PackageManifest;
    old.files.push({ ...old.files[0]!, path: 'backbone2.onnx' });
    expect(() => parseManifest(old)).toThrow(/2 backbone graphs/);
  });
});
