/**
 * What this browser can do, probed once and frozen. Devices are an explicit ordered list: each
 * probe returns null when the device is unavailable here, with the reason kept for `info()`.
 */
import type { DeviceName, PackageManifest } from './manifest.js';

export interface Capabilities {
  readonly webgpu: boolean;
  readonly shaderF16: boolean;
  readonly adapter: string | null;
  /** Why WebGPU is unavailable, when it is. */
  readonly webgpuReason: string | null;
  readonly crossOriginIsolated: boolean;
  readonly threads: number;
  readonly maxStorageBufferBindingSize: number | null;
}

/** The WASM back end is 32-bit: weights, activations and state share 4 GiB. */
export const WASM_MEMORY_LIMIT = 4 * 1024 ** 3;

interface GpuAdapterLike {
  features: { has(name: string): boolean };
  limits: { maxStorageBufferBindingSize: number };
  info?: { vendor?: string; architecture?: string; description?: string };
}
interface GpuLike {
  requestAdapter(options?: unknown): Promise<GpuAdapterLike | null>;
}

let probed: Promise<Readonly<Capabilities>> | null = null;

export function probeCapabilities(): Promise<Readonly<Capabilities>> {
  probed ??= (async () => {
    const isolated = globalThis.crossOriginIsolated === true;
    const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
    const base = {
      crossOriginIsolated: isolated,
      // Threads need SharedArrayBuffer, i.e. a cross-origin-isolated page; leave one core free.
      threads: isolated ? Math.max(1, Math.min(4, cores - 1)) : 1,
    };
    const gpu = (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu;
    if (!gpu) {
      return Object.freeze({
        ...base,
        webgpu: false,
        shaderF16: false,
        adapter: null,
        webgpuReason: 'navigator.gpu is missing (no WebGPU in this browser or context)',
        maxStorageBufferBindingSize: null,
      });
    }
    let adapter: GpuAdapterLike | null = null;
    let reason: string | null = null;
    try {
      adapter = await gpu.requestAdapter();
      if (!adapter) reason = 'requestAdapter() returned no adapter';
    } catch (e) {
      reason = `requestAdapter() failed: ${(e as Error).message}`;
    }
    const info = adapter?.info;
    return Object.freeze({
      ...base,
      webgpu: adapter !== null,
      shaderF16: adapter?.features.has('shader-f16') ?? false,
      adapter: adapter
        ? [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') ||
          'unknown'
        : null,
      webgpuReason: reason,
      maxStorageBufferBindingSize: adapter?.limits.maxStorageBufferBindingSize ?? null,
    });
  })();
  return probed;
}

/** Why `device` cannot run this package here, or null when it can. */
export function deviceProblem(
  device: DeviceName,
  manifest: PackageManifest,
  caps: Capabilities,
): string | null {
  if (!manifest.variant.devices.includes(device)) {
    return `the ${manifest.variant.dtype} variant of ${manifest.model.name} is built for ${manifest.variant.devices.join(', ')}, not ${device}`;
  }
  if (device === 'webgpu') {
    if (!caps.webgpu) return caps.webgpuReason ?? 'WebGPU is unavailable';
    if (manifest.variant.needsShaderF16 && !caps.shaderF16) {
      return `the ${manifest.variant.dtype} variant needs the WebGPU feature shader-f16, which this adapter lacks; load a q4, q8 or fp32 variant`;
    }
    return null;
  }
  if (manifest.variant.peakBytes > WASM_MEMORY_LIMIT) {
    const gib = (manifest.variant.peakBytes / 1024 ** 3).toFixed(1);
    return `${manifest.model.name} (${manifest.variant.dtype}) needs about ${gib} GiB; the WASM back end addresses at most 4 GiB, so this model needs WebGPU`;
  }
  return null;
}

/** The devices to try, in order: the explicit one alone, or every usable one best first. */
export function deviceOrder(
  requested: 'auto' | DeviceName,
  manifest: PackageManifest,
  caps: Capabilities,
): { order: DeviceName[]; skipped: Array<{ device: DeviceName; reason: string }> } {
  const candidates: DeviceName[] = requested === 'auto' ? ['webgpu', 'wasm'] : [requested];
  const order: DeviceName[] = [];
  const skipped: Array<{ device: DeviceName; reason: string }> = [];
  for (const device of candidates) {
    const problem = deviceProblem(device, manifest, caps);
    if (problem) skipped.push({ device, reason: problem });
    else order.push(device);
  }
  return { order, skipped };
}
