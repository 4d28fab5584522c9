// Device choice: what `auto` picks for each adapter, and what probing reports for
// fake `navigator.gpu` objects (with the flag, without it, named SwiftShader or not); the js
// device placed by its estimated first answers.
import { describe, expect, it } from 'vitest';
import {
  deviceBeforeManifest,
  deviceOrder,
  planDevices,
  PROBES,
  probeWith,
  type GpuAdapterLike,
} from '../../../src/engine/capabilities.js';
import {
  DEVICE_NAMES,
  deviceOf,
  JS_MEMORY_LIMIT,
  NODE_CPU,
  NODE_DEVICES,
  tensorLimitProblem,
  type Capabilities,
  type DeviceDescriptor,
  type NodeDeviceDescriptor,
} from '../../../src/core/devices.js';
import { MissingDependencyError } from '../../../src/node/missing-dependency.js';
import { pickNodeDevice, type NodeProbeResult } from '../../../src/node/node-runtime.js';
import { costFacts, firstAnswersMs } from '../../../src/core/device-cost.js';
import { noDeviceError } from '../../../src/engine/host-util.js';
import type { PackageManifest } from '../../../src/core/manifest.js';
import { DeviceError, ModelTooLargeError } from '../../../src/wire/errors.js';

/**
 * A package of `weightBytes` of fp32 backbone weights besides its embedding table (2,500 × 104
 * float32, 1 MB), with clef-nano's shape otherwise: 2 full-attention layers, hidden 104.
 */
const manifest = (peakBytes: number, weightBytes = 200e6) =>
  ({
    model: { name: 'clef-nano' },
    architecture: {
      vocabSize: 2500,
      hiddenSize: 104,
      numLayers: 2,
      layerTypes: ['full_attention', 'full_attention'],
      headWidth: 16,
    },
    variant: {
      dtype: 'fp32',
      devices: ['webgpu', 'wasm'],
      needsShaderF16: false,
      peakBytes,
    },
    files: [
      { path: 'backbone.onnx', role: 'backbone', bytes: 20_000 },
      { path: 'backbone.onnx.data', role: 'backbone-data', bytes: 1e6 + weightBytes },
    ],
  }) as unknown as PackageManifest;
/** 50 M weights: the js device's estimate loses to onnxruntime's everywhere. */
const SMALL = manifest(4e8);
/** clef-nano's size (55 k linear weights): the js device answers first. */
const NANO = manifest(16e6, 220e3);
const HUGE = manifest(6 * 1024 ** 3);

const caps = (adapter: string | null, fallbackAdapter: boolean): Capabilities => ({
  webgpu: adapter !== null,
  shaderF16: false,
  adapter,
  fallbackAdapter,
  webgpuReason: adapter ? null : 'no adapter',
  crossOriginIsolated: true,
  // A 5-core machine: the engine gives onnxruntime's WASM 4 threads.
  threads: 4,
  maxStorageBufferBindingSize: null,
  maxBufferSize: null,
});

const gpuWith = (info: GpuAdapterLike['info']) => ({
  requestAdapter: async (): Promise<GpuAdapterLike> => ({
    features: { has: () => false },
    limits: { maxStorageBufferBindingSize: 1 << 27 },
    info,
  }),
});

/** What deviceOrder's reason adds when the js device comes last. */
const JS_LAST =
  /; js would give the first 5 answers in \d+ ms, not \d+ ms on (WASM|WebGPU) for 400-token requests/;

describe('deviceOrder', () => {
  it('auto puts WASM before a software adapter, and says why', () => {
    const plan = deviceOrder('auto', SMALL, caps('google swiftshader', true));
    expect(plan.order).toEqual(['wasm', 'webgpu', 'js']);
    expect(plan.reason).toMatch(/^auto: WASM, because the WebGPU adapter \(google swiftshader\)/);
    expect(plan.reason).toMatch(JS_LAST);
    expect(plan.skipped.map((s) => s.device)).toEqual(['webgpu']);
  });
  it('auto takes a hardware adapter first', () => {
    const plan = deviceOrder('auto', SMALL, caps('nvidia ampere', false));
    expect(plan).toMatchObject({ order: ['webgpu', 'wasm', 'js'], skipped: [] });
    expect(plan.reason).toMatch(/^auto: WebGPU on nvidia ampere; js would give the first 5/);
  });
  it('auto uses a software adapter when WASM (and js) cannot hold the package', () => {
    const plan = deviceOrder('auto', HUGE, caps('google swiftshader', true));
    expect(plan.order).toEqual(['webgpu']);
    expect(plan.reason).toMatch(/software fallback, but WASM cannot run this package/);
    expect(plan.skipped.map((s) => [s.device, s.tooLarge])).toEqual([
      ['wasm', true],
      ['js', true],
    ]);
  });
  it("an explicit 'webgpu' keeps the software adapter", () => {
    const plan = deviceOrder('webgpu', SMALL, caps('google swiftshader', true));
    expect(plan.order).toEqual(['webgpu']);
    expect(plan.reason).toMatch(/^device 'webgpu' requested on google swiftshader/);
  });
  it('auto without WebGPU runs WASM and names the reason', () => {
    const plan = deviceOrder('auto', SMALL, caps(null, false));
    expect(plan.order).toEqual(['wasm', 'js']);
    expect(plan.reason).toMatch(/^auto: WASM, because no adapter; js would give the first 5/);
  });
});

describe('the js device in auto', () => {
  it('goes first for a small package, with both estimates in the reason', () => {
    for (const c of [caps(null, false), caps('google swiftshader', true)]) {
      const plan = deviceOrder('auto', NANO, c);
      expect(plan.order[0]).toBe('js');
      expect(plan.order.slice(1)).toEqual(c.webgpu ? ['wasm', 'webgpu'] : ['wasm']);
      const m =
        /^auto: js, first 5 answers in (\d+) ms against (\d+) ms on WASM for 400-token requests/.exec(
          plan.reason,
        );
      expect(m, plan.reason).not.toBeNull();
      expect(Number(m![1])).toBeLessThan(Number(m![2]));
    }
  });
  it('goes before a hardware GPU only when it answers before its runtime has started', () => {
    const plan = deviceOrder('auto', NANO, caps('nvidia ampere', false));
    expect(plan.order).toEqual(['js', 'webgpu', 'wasm']);
    expect(plan.reason).toMatch(/^auto: js, first 5 answers in \d+ ms against \d+ ms on WebGPU/);
  });
  it('runs a package whose manifest predates it (its devices list no js)', () => {
    expect(NANO.variant.devices).not.toContain('js');
    expect(deviceOrder('js', NANO, caps(null, false))).toMatchObject({
      order: ['js'],
      reason: "device 'js' requested",
    });
  });
  it("is refused for a package above its memory; 'wasm' and 'webgpu' still force onnxruntime", () => {
    const big = manifest(JS_MEMORY_LIMIT + 1, 220e3);
    const auto = deviceOrder('auto', big, caps(null, false));
    expect(auto.order).toEqual(['wasm']);
    const js = auto.skipped.find((s) => s.device === 'js');
    expect(js).toMatchObject({ tooLarge: true });
    expect(js!.reason).toMatch(/the js device holds at most 1 GiB/);
    expect(deviceOrder('wasm', NANO, caps(null, false)).order).toEqual(['wasm']);
    expect(deviceOrder('webgpu', NANO, caps('nvidia ampere', false)).order).toEqual(['webgpu']);
  });
  it("counts WASM's threads in its favour", () => {
    // Perfect scaling for WASM's per-token work: more threads can only move auto away from js.
    const on = (device: 'wasm' | 'js', threads: number) =>
      firstAnswersMs(deviceOf(device).cost, costFacts(SMALL), { tokens: 4000, threads });
    expect(on('wasm', 4)).toBeLessThan(on('wasm', 1));
    expect(on('js', 4)).toBe(on('js', 1));
  });
});

describe('deviceBeforeManifest (the runtime that starts before the manifest arrives)', () => {
  const adapters = [
    caps(null, false),
    caps('google swiftshader', true),
    caps('nvidia ampere', false),
  ];
  it("is deviceOrder's first device for a package both devices can run, whenever it names one", () => {
    for (const c of adapters) {
      for (const requested of ['auto', 'wasm', 'webgpu', 'js'] as const) {
        const known = deviceBeforeManifest(requested, c);
        for (const m of [SMALL, NANO]) {
          if (known !== null) expect(deviceOrder(requested, m, c).order[0]).toBe(known);
        }
      }
    }
  });
  it('waits for the manifest under auto: whether js (no onnxruntime at all) goes first depends on it', () => {
    for (const c of adapters) expect(deviceBeforeManifest('auto', c)).toBeNull();
  });
  it('names an explicit device this browser has, and nothing for WebGPU without it', () => {
    expect(deviceBeforeManifest('wasm', caps('nvidia ampere', false))).toBe('wasm');
    expect(deviceBeforeManifest('js', caps(null, false))).toBe('js');
    expect(deviceBeforeManifest('webgpu', caps('google swiftshader', true))).toBe('webgpu');
    expect(deviceBeforeManifest('webgpu', caps(null, false))).toBeNull();
  });
});

describe('the tensor-limit preflight', () => {
  const withTensor = (bytes: number) =>
    ({
      ...SMALL,
      variant: { ...SMALL.variant, largestTensor: { name: 'embed_q', bytes } },
    }) as PackageManifest;
  const limited = (binding: number, buffer: number): Capabilities => ({
    ...caps('acme gpu', false),
    maxStorageBufferBindingSize: binding,
    maxBufferSize: buffer,
  });

  it('names the binding limit a tensor exceeds, and what would work', () => {
    const problem = tensorLimitProblem(withTensor(2 ** 31), limited(2 ** 30, 2 ** 32));
    expect(problem).toBe(
      "its largest tensor (embed_q, 2.00 GiB) exceeds this adapter's maxStorageBufferBindingSize of 1.00 GiB; it needs a WebGPU adapter whose maxStorageBufferBindingSize reaches 2.00 GiB, or a package converted with smaller tensors (a q4 or q8 variant)",
    );
    // Too big, not unavailable: with no device left the engine says ModelTooLargeError.
    const plan = deviceOrder('webgpu', withTensor(2 ** 31), limited(2 ** 30, 2 ** 32));
    expect(plan.skipped).toEqual([{ device: 'webgpu', reason: problem, tooLarge: true }]);
  });
  it('checks maxBufferSize too, and passes a tensor exactly at the limits', () => {
    expect(tensorLimitProblem(withTensor(2 ** 30 + 1), limited(2 ** 31, 2 ** 30))).toMatch(
      /exceeds this adapter's maxBufferSize of 1.00 GiB/,
    );
    expect(tensorLimitProblem(withTensor(2 ** 30), limited(2 ** 30, 2 ** 30))).toBeNull();
    // A package converted before the field existed is not checked.
    expect(tensorLimitProblem(SMALL, limited(1, 1))).toBeNull();
  });
  it('auto moves to WASM when the tensor does not fit; an explicit webgpu is refused', () => {
    const big = withTensor(2 ** 31);
    const auto = deviceOrder('auto', big, limited(2 ** 30, 2 ** 30));
    expect(auto.order).toEqual(['wasm', 'js']);
    expect(auto.skipped[0]?.reason).toMatch(/^its largest tensor/);
    const explicit = deviceOrder('webgpu', big, limited(2 ** 30, 2 ** 30));
    expect(explicit.order).toEqual([]);
  });
});

describe('the refusal when no device is left', () => {
  it('is ModelTooLargeError when a device was too small, DeviceError when none was there', () => {
    const tooBig = deviceOrder('wasm', HUGE, caps(null, false));
    expect(tooBig.skipped).toMatchObject([{ device: 'wasm', tooLarge: true }]);
    expect(noDeviceError(HUGE, tooBig.skipped)).toBeInstanceOf(ModelTooLargeError);
    const absent = deviceOrder('webgpu', SMALL, caps(null, false));
    expect(absent.skipped).toEqual([{ device: 'webgpu', reason: 'no adapter', tooLarge: false }]);
    const error = noDeviceError(SMALL, absent.skipped);
    expect(error).toBeInstanceOf(DeviceError);
    expect(error.message).toBe('No device can run clef-nano here: webgpu: no adapter');
  });
});

describe('probeWith', () => {
  it('reads both buffer limits', async () => {
    const gpu = {
      requestAdapter: async (): Promise<GpuAdapterLike> => ({
        features: { has: () => false },
        limits: { maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 },
      }),
    };
    const c = await probeWith(gpu, true, 2);
    expect(c).toMatchObject({ maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 });
  });
  it('reads isFallbackAdapter from adapter.info', async () => {
    const c = await probeWith(gpuWith({ vendor: 'acme', isFallbackAdapter: true }), true, 8);
    expect(c).toMatchObject({ webgpu: true, fallbackAdapter: true, adapter: 'acme', threads: 4 });
  });
  it('trusts the flag over the name', async () => {
    const info = { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: false };
    expect((await probeWith(gpuWith(info), false, 2)).fallbackAdapter).toBe(false);
  });
  it('without the flag, knows SwiftShader by name and nothing else', async () => {
    const swift = await probeWith(
      gpuWith({ vendor: 'google', architecture: 'swiftshader' }),
      true,
      2,
    );
    expect(swift.fallbackAdapter).toBe(true);
    const other = await probeWith(gpuWith({ vendor: 'intel', architecture: 'gen-12lp' }), true, 2);
    expect(other.fallbackAdapter).toBe(false);
  });
  it('is frozen, and reports no adapter without navigator.gpu', async () => {
    const c = await probeWith(undefined, false, 2);
    expect(Object.isFrozen(c)).toBe(true);
    expect(c).toMatchObject({ webgpu: false, fallbackAdapter: false, adapter: null, threads: 1 });
  });
});

describe('the order, derived from the device list (planDevices)', () => {
  const [webgpu, wasm, js] = [deviceOf('webgpu'), deviceOf('wasm'), deviceOf('js')];
  /** A second GPU device: a hardware one whatever the WebGPU adapter is. */
  const gpu2: DeviceDescriptor = {
    ...webgpu,
    name: 'gpu2',
    label: 'GPU 2',
    problem: () => null,
    emulated: () => null,
  };
  /** A GPU device whose probe found nothing here. */
  const gpu0: DeviceDescriptor = {
    ...gpu2,
    name: 'gpu0',
    label: 'GPU 0',
    problem: () => ({ reason: 'no gpu0 adapter', tooLarge: false }),
  };
  const builtFor = (...devices: string[]) =>
    ({ ...SMALL, variant: { ...SMALL.variant, devices } }) as unknown as PackageManifest;
  const m = builtFor('webgpu', 'gpu2', 'gpu0', 'wasm');

  it("is deviceOrder over the engine's list", () => {
    for (const c of [caps(null, false), caps('google swiftshader', true), caps('nvidia', false)]) {
      expect(planDevices(DEVICE_NAMES.map(deviceOf), 'auto', SMALL, c)).toEqual(
        deviceOrder('auto', SMALL, c),
      );
    }
  });
  it("keeps every usable GPU device, in the list's order", () => {
    const plan = planDevices([webgpu, gpu2, wasm, js], 'auto', m, caps('nvidia ampere', false));
    expect(plan.order).toEqual(['webgpu', 'gpu2', 'wasm', 'js']);
    expect(plan.reason).toMatch(/^auto: WebGPU on nvidia ampere;/);
  });
  it('puts an emulated GPU after the CPU devices, and a hardware one still first', () => {
    const plan = planDevices([webgpu, gpu2, wasm, js], 'auto', m, caps('google swiftshader', true));
    expect(plan.order).toEqual(['gpu2', 'wasm', 'webgpu', 'js']);
    expect(plan.skipped).toEqual([
      {
        device: 'webgpu',
        reason:
          'the WebGPU adapter (google swiftshader) is a software fallback, slower than WASM on the same CPU',
        tooLarge: false,
      },
    ]);
    expect(plan.reason).toMatch(/^auto: GPU 2 on google swiftshader;/);
  });
  it('moves past a device its probe found unavailable to the next one, keeping the reason', () => {
    const plan = planDevices([gpu0, gpu2, wasm], 'auto', m, caps('nvidia ampere', false));
    expect(plan.order).toEqual(['gpu2', 'wasm']);
    expect(plan.skipped).toEqual([{ device: 'gpu0', reason: 'no gpu0 adapter', tooLarge: false }]);
    const cpuOnly = planDevices([gpu0, wasm, js], 'auto', m, caps('nvidia ampere', false));
    expect(cpuOnly.order).toEqual(['wasm', 'js']);
    expect(cpuOnly.reason).toMatch(/^auto: WASM, because no gpu0 adapter;/);
    expect(planDevices([gpu0, wasm], 'gpu0', m, caps('nvidia', false)).order).toEqual([]);
  });
  it('follows a list that puts the CPU first, and says so', () => {
    const plan = planDevices([wasm, webgpu], 'auto', SMALL, caps('nvidia ampere', false));
    expect(plan.order).toEqual(['wasm', 'webgpu']);
    expect(plan.reason).toBe('auto: WASM, because it comes before the GPU devices in the list');
  });
});

describe('the probes (one per device)', () => {
  const env = { gpu: undefined, crossOriginIsolated: true, cores: 8 };
  it('are one per device of the list, each reading its own facts', async () => {
    expect(Object.keys(PROBES)).toEqual([...DEVICE_NAMES]);
    expect(Object.isFrozen(PROBES)).toBe(true);
    expect(await PROBES.wasm(env)).toEqual({ crossOriginIsolated: true, threads: 4 });
    expect(await PROBES.js(env)).toEqual({});
    expect(await PROBES.webgpu(env)).toMatchObject({ webgpu: false });
  });
  it("a failing WebGPU probe moves auto to the next device, with the probe's reason", async () => {
    const failing = {
      requestAdapter: async (): Promise<GpuAdapterLike> => {
        throw new Error('GPU process crashed');
      },
    };
    const found = await probeWith(failing, true, 5);
    expect(found).toMatchObject({ webgpu: false, adapter: null, threads: 4 });
    const plan = deviceOrder('auto', SMALL, found);
    expect(plan.order).toEqual(['wasm', 'js']);
    expect(plan.reason).toMatch(
      /^auto: WASM, because requestAdapter\(\) failed: GPU process crashed;/,
    );
  });
});

describe("Node's device (pickNodeDevice over the Node list)", () => {
  const runtime = { adapter: {} as any, createSession: async () => ({}) as any };
  const missing = new MissingDependencyError('onnxruntime-node', 'npm i onnxruntime-node', 'x');
  const probes =
    (absent: string[]) =>
    async (d: NodeDeviceDescriptor): Promise<NodeProbeResult> =>
      absent.includes(d.name) ? { missing } : runtime;

  it("auto takes the list's first device its probe finds", async () => {
    const got = await pickNodeDevice(NODE_DEVICES, 'auto', probes([]));
    expect(got).toMatchObject({
      name: 'onnxruntime-node',
      reason: 'auto: onnxruntime-node is installed',
    });
  });
  it('a probe that finds nothing moves auto to the next device, and says why', async () => {
    const got = await pickNodeDevice(NODE_DEVICES, 'auto', probes(['cpu']));
    expect(got).toMatchObject({
      name: 'js',
      reason: 'auto: onnxruntime-node is not installed, so the js device runs the graphs',
    });
  });
  it('follows the list: a device before the CPU that is missing passes to the CPU', async () => {
    const npu = { ...NODE_CPU, name: 'npu', label: 'the NPU', missing: 'no NPU here' };
    const got = await pickNodeDevice([npu, ...NODE_DEVICES], 'auto', probes(['npu']));
    expect(got.reason).toBe('auto: no NPU here, so onnxruntime-node runs the graphs');
  });
  it("a device asked for by name is not replaced: its probe's error is thrown", async () => {
    await expect(pickNodeDevice(NODE_DEVICES, 'onnxruntime', probes(['cpu']))).rejects.toBe(
      missing,
    );
    const js = await pickNodeDevice(NODE_DEVICES, 'js', probes(['cpu']));
    expect(js).toMatchObject({ name: 'js', reason: "runtime 'js' requested" });
  });
});
