// Devices as data (src/core/devices.ts): one ordered list with a descriptor each, and the engine
// reads what differs between devices from it instead of comparing names.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cpuDevice,
  DEVICE_NAMES,
  DEVICES,
  deviceOf,
  WASM_MEMORY_LIMIT,
  type Capabilities,
  type PackageFacts,
} from '../../src/core/devices.js';

const ROOT = resolve(import.meta.dirname, '../..');

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

/** Comparisons of a device name with a string literal, in the given source text. */
function literalComparisons(text: string): string[] {
  return [...text.matchAll(/[!=]==\s*'(webgpu|wasm)'|'(webgpu|wasm)'\s*[!=]==/g)].map((m) => m[0]);
}

describe('the device list', () => {
  it('is ordered best first, one descriptor per name', () => {
    expect(DEVICE_NAMES).toEqual(['webgpu', 'wasm']);
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
    expect(cpuDevice().name).toBe('wasm');
    for (const d of DEVICES) expect(d.executionProvider).toBe(d.name);
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
