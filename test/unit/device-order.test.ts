// Device choice (issue 15): what `auto` picks for each adapter, and what probing reports for
// fake `navigator.gpu` objects (with the flag, without it, named SwiftShader or not).
import { describe, expect, it } from 'vitest';
import {
  deviceBeforeManifest,
  deviceOrder,
  probeWith,
  type GpuAdapterLike,
} from '../../src/engine/capabilities.js';
import { tensorLimitProblem, type Capabilities } from '../../src/core/devices.js';
import { noDeviceError } from '../../src/engine/host-util.js';
import type { PackageManifest } from '../../src/core/manifest.js';
import { DeviceError, ModelTooLargeError } from '../../src/wire/errors.js';

const manifest = (peakBytes: number) =>
  ({
    model: { name: 'clef-nano' },
    variant: { dtype: 'fp32', devices: ['webgpu', 'wasm'], needsShaderF16: false, peakBytes },
  }) as unknown as PackageManifest;
const SMALL = manifest(4e6);
const HUGE = manifest(6 * 1024 ** 3);

const caps = (adapter: string | null, fallbackAdapter: boolean): Capabilities => ({
  webgpu: adapter !== null,
  shaderF16: false,
  adapter,
  fallbackAdapter,
  webgpuReason: adapter ? null : 'no adapter',
  crossOriginIsolated: true,
  threads: 1,
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

describe('deviceOrder', () => {
  it('auto puts WASM before a software adapter, and says why', () => {
    const plan = deviceOrder('auto', SMALL, caps('google swiftshader', true));
    expect(plan.order).toEqual(['wasm', 'webgpu']);
    expect(plan.reason).toMatch(/^auto: WASM, because the WebGPU adapter \(google swiftshader\)/);
    expect(plan.skipped.map((s) => s.device)).toEqual(['webgpu']);
  });
  it('auto takes a hardware adapter first', () => {
    const plan = deviceOrder('auto', SMALL, caps('nvidia ampere', false));
    expect(plan).toMatchObject({ order: ['webgpu', 'wasm'], skipped: [] });
    expect(plan.reason).toBe('auto: WebGPU on nvidia ampere');
  });
  it('auto uses a software adapter when WASM cannot hold the package', () => {
    const plan = deviceOrder('auto', HUGE, caps('google swiftshader', true));
    expect(plan.order).toEqual(['webgpu']);
    expect(plan.reason).toMatch(/software fallback, but WASM cannot run this package/);
  });
  it("an explicit 'webgpu' keeps the software adapter", () => {
    const plan = deviceOrder('webgpu', SMALL, caps('google swiftshader', true));
    expect(plan.order).toEqual(['webgpu']);
    expect(plan.reason).toMatch(/^device 'webgpu' requested on google swiftshader/);
  });
  it('auto without WebGPU runs WASM and names the reason', () => {
    const plan = deviceOrder('auto', SMALL, caps(null, false));
    expect(plan.order).toEqual(['wasm']);
    expect(plan.reason).toBe('auto: WASM, because no adapter');
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
      for (const requested of ['auto', 'wasm', 'webgpu'] as const) {
        const known = deviceBeforeManifest(requested, c);
        if (known !== null) expect(deviceOrder(requested, SMALL, c).order[0]).toBe(known);
      }
    }
  });
  it('names WASM for auto without a hardware adapter, and waits for the manifest with one', () => {
    expect(deviceBeforeManifest('auto', caps(null, false))).toBe('wasm');
    expect(deviceBeforeManifest('auto', caps('google swiftshader', true))).toBe('wasm');
    // A real GPU wins or loses by the package (shader-f16, tensor limits): the manifest decides.
    expect(deviceBeforeManifest('auto', caps('nvidia ampere', false))).toBeNull();
  });
  it('names an explicit device this browser has, and nothing for WebGPU without it', () => {
    expect(deviceBeforeManifest('wasm', caps('nvidia ampere', false))).toBe('wasm');
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
    expect(auto.order).toEqual(['wasm']);
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
