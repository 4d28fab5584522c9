// Devices as data (src/core/devices.ts): one ordered list with a descriptor each, and the engine
// reads what differs between devices from it instead of comparing names.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cpuDevice,
  DEVICE_NAMES,
  DEVICES,
  deviceOf,
  JS_MEMORY_LIMIT,
  NODE_CPU,
  NODE_DEVICES,
  nodeDeviceOf,
  WASM_MEMORY_LIMIT,
  type Capabilities,
  type PackageFacts,
} from '../../../src/core/devices.js';
import { costFacts, decisionMs, firstAnswersMs } from '../../../src/core/device-cost.js';

const ROOT = resolve(import.meta.dirname, '../../..');

const caps = (over: Partial<Capabilities> = {}): Capabilities => ({
  webgpu: true,
  shaderF16: true,
  adapter: 'test-gpu',
  fallbackAdapter: false,
  webgpuReason: null,
  crossOriginIsolated: true,
  threads: 4,
  maxStorageBufferBindingSize: 2 ** 30,
  maxBufferSize: 2 ** 30,
  ...over,
});
const pkg = (over: Partial<PackageFacts['variant']> = {}): PackageFacts => ({
  model: { name: 'clef-tiny' },
  variant: { dtype: 'fp32', needsShaderF16: false, peakBytes: 2 ** 20, ...over },
});

/** The .ts files under `dir`, recursively, relative to the root. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Comparisons of a device name with a string literal, in the given source text. */
function literalComparisons(text: string): string[] {
  return [...text.matchAll(/[!=]==\s*'(webgpu|wasm)'|'(webgpu|wasm)'\s*[!=]==/g)].map((m) => m[0]);
}

describe('the device list', () => {
  it('is ordered best first, one descriptor per name', () => {
    expect(DEVICE_NAMES).toEqual(['webgpu', 'wasm', 'js']);
    expect(DEVICES.map((d) => d.name)).toEqual(DEVICE_NAMES);
    expect(Object.isFrozen(DEVICES)).toBe(true);
    expect(deviceOf('webgpu')).toMatchObject({
      gpu: true,
      runtimeBuilds: ['jspi', 'asyncify'],
      warmUpRetries: false,
    });
    expect(deviceOf('wasm')).toMatchObject({
      gpu: false,
      runtimeBuilds: ['plain', 'jspi', 'asyncify'],
      warmUpRetries: true,
    });
    // The js device runs no onnxruntime build: nothing of onnxruntime is shipped or fetched for it.
    expect(deviceOf('js')).toMatchObject({
      gpu: false,
      runtime: 'js',
      executionProvider: null,
      runtimeBuilds: [],
      preparedGraphs: false,
    });
    // A lost GPU falls back to WASM, which runs every package the GPU did.
    expect(cpuDevice().name).toBe('wasm');
    for (const d of DEVICES.filter((x) => x.runtime === 'onnxruntime')) {
      expect(d.executionProvider).toBe(d.name);
    }
  });

  it('says what each device needs of the browser and the package', () => {
    const webgpu = deviceOf('webgpu');
    const wasm = deviceOf('wasm');
    expect(webgpu.problem(pkg(), caps())).toBeNull();
    expect(webgpu.problem(pkg(), caps({ webgpu: false, webgpuReason: 'no adapter' }))).toEqual({
      reason: 'no adapter',
      tooLarge: false,
    });
    expect(
      webgpu.problem(pkg({ needsShaderF16: true }), caps({ shaderF16: false }))?.reason,
    ).toMatch(/shader-f16/);
    const big = pkg({ largestTensor: { name: 'w', bytes: 2 ** 31 } });
    expect(webgpu.problem(big, caps())).toMatchObject({ tooLarge: true });
    expect(wasm.problem(pkg({ peakBytes: WASM_MEMORY_LIMIT }), caps())).toBeNull();
    expect(wasm.problem(pkg({ peakBytes: WASM_MEMORY_LIMIT + 1 }), caps())).toMatchObject({
      tooLarge: true,
    });
    const js = deviceOf('js');
    expect(js.problem(pkg({ peakBytes: JS_MEMORY_LIMIT }), caps({ webgpu: false }))).toBeNull();
    expect(js.problem(pkg({ peakBytes: JS_MEMORY_LIMIT + 1 }), caps())).toMatchObject({
      tooLarge: true,
    });
  });

  it('is what the engine reads: no device name compared with a string literal there', () => {
    const bad: string[] = [];
    for (const dir of ['src/engine', 'src/core']) {
      for (const f of readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.ts'))) {
        for (const c of literalComparisons(readFileSync(join(ROOT, dir, f), 'utf8'))) {
          bad.push(`${dir}/${f}: ${c}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(literalComparisons("if (device === 'webgpu') {}")).toHaveLength(1); // the check can fail
  });
});

describe('the cost model (src/core/device-cost.ts)', () => {
  it("reads a package's sizes from its manifest (the bundled clef-nano)", () => {
    const dir = join(ROOT, 'models/clef-nano');
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const facts = costFacts(m);
    // Expected from the package's own files, not its manifest: the backbone's data files on disk
    // less the float32 embedding table that clef_config.json's vocabulary and width make.
    expect(m.variant.dtype).toBe('fp32');
    const text = JSON.parse(readFileSync(join(dir, 'clef_config.json'), 'utf8')).config.text_config;
    const backboneData = readdirSync(dir)
      .filter((f) => f.startsWith('backbone') && f.endsWith('.data'))
      .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(facts.weights).toBe((backboneData - text.vocab_size * text.hidden_size * 4) / 4);
    const layerTypes = text.layer_types as string[];
    expect(facts).toMatchObject({
      layers: text.num_hidden_layers,
      attentionLayers: layerTypes.filter((t) => t === 'full_attention').length,
      linearLayers: layerTypes.filter((t) => t === 'linear_attention').length,
      hidden: text.hidden_size,
    });
    const graphs = ['backbone.onnx', 'backbone.onnx.data', 'head_memory.onnx', 'head_decide.onnx'];
    const bytes = (m.files as Array<{ path: string; role: string; bytes: number }>)
      .filter((f) => graphs.includes(f.path) || f.role === 'head-data')
      .reduce((n, f) => n + f.bytes, 0);
    expect(facts.graphBytes).toBe(bytes);
  });

  it('grows with tokens, weights and layers, and counts the start once', () => {
    const m = JSON.parse(readFileSync(join(ROOT, 'models/clef-nano/manifest.json'), 'utf8'));
    const facts = costFacts(m);
    const js = deviceOf('js').cost;
    expect(decisionMs(js, facts, 2000)).toBeGreaterThan(decisionMs(js, facts, 400));
    expect(decisionMs(js, { ...facts, weights: facts.weights * 10 }, 400)).toBeGreaterThan(
      decisionMs(js, facts, 400),
    );
    const wasm = deviceOf('wasm').cost;
    const one = firstAnswersMs(wasm, facts, { answers: 1 });
    const five = firstAnswersMs(wasm, facts, { answers: 5 });
    expect(five - one).toBeCloseTo(4 * decisionMs(wasm, facts, 400), 6);
    expect(one).toBeGreaterThan(wasm.startMs);
  });
});

describe("Node's devices", () => {
  it('are a list of descriptors too, best first: onnxruntime-node on the CPU, then js', () => {
    expect(NODE_DEVICES.map((d) => d.name)).toEqual(['cpu', 'js']);
    expect(Object.isFrozen(NODE_DEVICES)).toBe(true);
    expect(NODE_CPU).toMatchObject({ executionProvider: 'cpu', engineRuntime: 'onnxruntime-node' });
    // The js device is the page's, run in Node: its name and runtime are read from there.
    expect(nodeDeviceOf('js')).toMatchObject({
      name: deviceOf('js').name,
      runtime: deviceOf('js').runtime,
      recordRuntime: 'clef-web js',
      label: 'the js device',
    });
    expect(nodeDeviceOf('onnxruntime-node')).toBe(NODE_CPU);
    expect(NODE_DEVICES.every((d) => !d.gpu)).toBe(true);
  });

  it("are read, not written out: no 'cpu' literal in the Node runtime or the build tools", () => {
    const files = [...sourcesUnder('src/node'), ...sourcesUnder('src/build')];
    expect(files.length).toBeGreaterThan(60);
    const bad = files.filter((f) => /'cpu'/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(bad).toEqual([]);
  });
});

describe('the per-device browser specs and the playground', () => {
  it('read the list: a spec that runs for each device compares no device name with a literal', () => {
    const perDevice = readdirSync(join(ROOT, 'test/browser'))
      .filter((f) => f.endsWith('.spec.ts'))
      .map((f) => [f, readFileSync(join(ROOT, 'test/browser', f), 'utf8')] as const)
      .filter(([, text]) => /for \(const device of DEVICES\)/.test(text));
    expect(perDevice.length).toBeGreaterThanOrEqual(6);
    const bad = perDevice.flatMap(([f, text]) => literalComparisons(text).map((c) => `${f}: ${c}`));
    expect(bad).toEqual([]);
  });

  it('the playground names no device: its select and its types come from the list', () => {
    const bad: string[] = [];
    for (const f of sourcesUnder('src/playground')) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/['"](webgpu|wasm)['"]/g)) bad.push(`${f}: ${m[0]}`);
    }
    expect(bad).toEqual([]);
  });
});
