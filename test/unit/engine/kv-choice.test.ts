// The KV cache precision the engine runs, for every request × device × adapter ×
// package case: auto takes float16 only on WebGPU with shader-f16; an explicit float16 is
// refused where it cannot run, with the error class that says whose problem it is.
import { describe, expect, it } from 'vitest';
import { chooseKv } from '../../../src/engine/kv-choice.js';
import type { PackageManifest } from '../../../src/core/manifest.js';
import { DeviceError, PackageError } from '../../../src/wire/errors.js';

const pkg = (kv16: boolean) =>
  ({
    model: { name: 'clef-nano' },
    files: [
      { role: 'backbone', path: 'backbone.onnx' },
      ...(kv16 ? [{ role: 'backbone-kv16', path: 'backbone.kv16.onnx' }] : []),
    ],
  }) as unknown as PackageManifest;
const WITH = pkg(true);
const WITHOUT = pkg(false);
const F16 = { shaderF16: true, adapter: 'nvidia' };
const NO_F16 = { shaderF16: false, adapter: 'google swiftshader' };

describe('chooseKv', () => {
  it('auto: float16 on WebGPU with shader-f16, float32 without it and on WASM', () => {
    expect(chooseKv('auto', 'webgpu', WITH, F16)).toEqual({
      dtype: 'float16',
      reason: 'auto: float16, the WebGPU adapter has shader-f16',
    });
    expect(chooseKv('auto', 'webgpu', WITH, NO_F16)).toEqual({
      dtype: 'float32',
      reason: 'auto: float32, the WebGPU adapter lacks shader-f16',
    });
    expect(chooseKv('auto', 'wasm', WITH, F16).dtype).toBe('float32');
    expect(chooseKv('auto', 'wasm', WITH, F16).reason).toMatch(/^auto: float32 on WASM/);
  });
  it('auto: float32 when the package has no float16-KV graphs, whatever the device', () => {
    for (const device of ['webgpu', 'wasm'] as const) {
      expect(chooseKv('auto', device, WITHOUT, F16)).toEqual({
        dtype: 'float32',
        reason: 'auto: float32, the package has no float16-KV graphs',
      });
    }
  });
  it('float16: on WASM always, on WebGPU only with shader-f16', () => {
    expect(chooseKv('float16', 'wasm', WITH, NO_F16).dtype).toBe('float16');
    expect(chooseKv('float16', 'webgpu', WITH, F16).dtype).toBe('float16');
    expect(() => chooseKv('float16', 'webgpu', WITH, NO_F16)).toThrow(DeviceError);
    expect(() => chooseKv('float16', 'webgpu', WITH, NO_F16)).toThrow(
      "kvDtype 'float16' on WebGPU needs the feature shader-f16, which the adapter (google swiftshader) lacks",
    );
  });
  it('float16 on a package without the graphs is the package’s problem', () => {
    expect(() => chooseKv('float16', 'wasm', WITHOUT, F16)).toThrow(PackageError);
    expect(() => chooseKv('float16', 'wasm', WITHOUT, F16)).toThrow(/convert it again/);
  });
  it('float32 is float32 everywhere', () => {
    for (const device of ['webgpu', 'wasm'] as const) {
      expect(chooseKv('float32', device, WITH, F16).dtype).toBe('float32');
    }
  });
});
