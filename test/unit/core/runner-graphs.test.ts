// The one session assembly of the page and Node engines (src/core/runner-graphs.ts): the head
// graphs open first, then each backbone group in run order, with the names, data files and
// device-kept outputs each engine reads; every session is guarded (a graph without an input the
// runner feeds is refused, naming its file); a failure releases every session opened so far.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest, type PackageManifest } from '../../../src/core/manifest.js';
import { openRunnerGraphs, type GraphToOpen } from '../../../src/core/runner-graphs.js';
import type { SessionLike } from '../../../src/core/runtime-types.js';
import { PackageError } from '../../../src/wire/errors.js';

const NANO = resolve(import.meta.dirname, '../../../models/clef-nano/manifest.json');
const nano = parseManifest(JSON.parse(readFileSync(NANO, 'utf8')));

/** clef-nano's manifest with its backbone split in two groups (one layer each). */
function split(): PackageManifest {
  const m = structuredClone(nano) as any;
  const past = (l: number) => m.graphs.backbone.inputs.filter((i: any) => i.name.endsWith(`.${l}`));
  const present = (l: number) =>
    m.graphs.backbone.outputs.filter((o: any) => o.name.endsWith(`.${l}`));
  const stream = (name: string) => ({ name, dtype: 'float32', shape: [1, 'sequence_length', 190] });
  m.graphs.backboneGroups = [
    {
      layers: [0, 1],
      inputs: [m.graphs.backbone.inputs[0], ...past(0)],
      outputs: [stream('residual_out'), ...present(0)],
    },
    {
      layers: [1, 2],
      inputs: [stream('residual_in'), ...past(1)],
      outputs: [stream('hidden'), ...present(1)],
    },
  ];
  const file = (path: string, role: string, group: number) => ({
    path,
    role,
    group,
    bytes: 1,
    sha256: '0',
  });
  m.files = [
    ...m.files.filter((f: any) => !f.role.startsWith('backbone')),
    file('backbone.0.onnx', 'backbone', 0),
    file('backbone.0.onnx.data', 'backbone-data', 0),
    file('backbone.1.onnx', 'backbone', 1),
    file('backbone.1.onnx.data', 'backbone-data', 1),
  ];
  return m as PackageManifest;
}

/** A fake runtime: a session per graph with the inputs each graph has, and a log of calls. */
function runtime(options: { failAt?: string; drop?: { graph: string; input: string } } = {}) {
  const log: string[] = [];
  const released: string[] = [];
  const open = async (g: GraphToOpen): Promise<SessionLike> => {
    log.push(
      `open ${g.name} ${g.file.path} [${g.data.map((f) => f.path).join(' ')}] keep [${g.keepOnDevice.join(' ')}]`,
    );
    if (g.name === options.failAt) throw new Error(`cannot open ${g.name}`);
    const inputs = [
      'hidden',
      'past_memory',
      'memory',
      'question_weights',
      'option_weights',
      'option_question',
      'question_type',
      'lex',
      'input_ids',
      'residual_in',
      // clef-nano's layer 0 is linear attention (its conv and recurrent state), layer 1 full.
      'conv_state.0',
      'recurrent_state.0',
      'past_key.1',
      'past_value.1',
    ].filter((name) => g.name !== options.drop?.graph || name !== options.drop.input);
    return {
      inputNames: inputs,
      outputNames: [],
      run: async () => ({}),
      release: async () => void released.push(g.name),
    } as unknown as SessionLike;
  };
  return { log, released, open, afterHeads: async () => void log.push('after heads') };
}

describe('openRunnerGraphs', () => {
  it('opens the heads, then the backbone, with what each graph reads and keeps on the device', async () => {
    const rt = runtime();
    const { graphs, release } = await openRunnerGraphs(nano, undefined, rt);
    expect(rt.log).toEqual([
      'open headMemory head_memory.onnx [head_memory.onnx.data head_decide.onnx.data] keep [memory]',
      'open headDecide head_decide.onnx [head_memory.onnx.data head_decide.onnx.data] keep []',
      'after heads',
      'open backbone backbone.onnx [backbone.onnx.data] keep [hidden present_conv_state.0 present_recurrent_state.0 present_key.1 present_value.1]',
    ]);
    expect(graphs.backbone).toHaveLength(1);
    expect(graphs.backbone[0]).toMatchObject({ input: 'input_ids', output: 'hidden' });
    expect(graphs.backbone[0]!.states.map((s) => s.input)).toEqual([
      'conv_state.0',
      'recurrent_state.0',
      'past_key.1',
      'past_value.1',
    ]);
    await release();
    expect(rt.released.sort()).toEqual(['backbone', 'headDecide', 'headMemory']);
  });

  it('runs the float16-KV backbone graph when asked', async () => {
    const rt = runtime();
    await openRunnerGraphs(nano, 'float16', rt);
    expect(rt.log.at(-1)).toMatch(/^open backbone backbone\.kv16\.onnx \[backbone\.onnx\.data\]/);
  });

  it('opens a split backbone group by group, in run order, each with its own data', async () => {
    const rt = runtime();
    const { graphs } = await openRunnerGraphs(split(), 'float32', rt);
    expect(rt.log.slice(3)).toEqual([
      'open backbone.0 backbone.0.onnx [backbone.0.onnx.data] keep [residual_out present_conv_state.0 present_recurrent_state.0]',
      'open backbone.1 backbone.1.onnx [backbone.1.onnx.data] keep [hidden present_key.1 present_value.1]',
    ]);
    expect(graphs.backbone.map((b) => [b.input, b.output])).toEqual([
      ['input_ids', 'residual_out'],
      ['residual_in', 'hidden'],
    ]);
  });

  it('refuses a graph without an input the runner feeds, naming it, and releases every session', async () => {
    const rt = runtime({ drop: { graph: 'backbone.1', input: 'past_key.1' } });
    const error = await openRunnerGraphs(split(), 'float32', rt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageError);
    expect((error as Error).message).toMatch(/^backbone\.1\.onnx has no input past_key\.1: /);
    expect(rt.released.sort()).toEqual(['backbone.0', 'backbone.1', 'headDecide', 'headMemory']);
  });

  it('releases what it opened when a graph fails to open, and says why', async () => {
    const rt = runtime({ failAt: 'headDecide' });
    await expect(openRunnerGraphs(nano, undefined, rt)).rejects.toThrow('cannot open headDecide');
    expect(rt.released).toEqual(['headMemory']);
    expect(rt.log).not.toContain('after heads');
  });
});
