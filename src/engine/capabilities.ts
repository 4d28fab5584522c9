/**
 * What this browser can do, probed once and frozen. Devices are an explicit ordered list: each
 * probe returns null when the device is unavailable here, with the reason kept for `info()`.
 */
import type { DeviceName, PackageManifest } from '../core/manifest.js';

export interface Capabilities {
  readonly webgpu: boolean;
  readonly shaderF16: boolean;
  readonly adapter: string | null;
  /**
   * The adapter is a software fallback (SwiftShader, WARP...): `adapter.info.isFallbackAdapter`,
   * or, where a browser lacks that flag, a SwiftShader adapter by name. False without WebGPU.
   */
  readonly fallbackAdapter: boolean;
  /** Why WebGPU is unavailable, when it is. */
  readonly webgpuReason: string | null;
  readonly crossOriginIsolated: boolean;
  readonly threads: number;
  readonly maxStorageBufferBindingSize: number | null;
  /** The adapter's maxBufferSize (onnxruntime requests the adapter's maximum for its device). */
  readonly maxBufferSize: number | null;
}

/** The WASM back end is 32-bit: weights, activations and state share 4 GiB. */
export const WASM_MEMORY_LIMIT = 4 * 1024 ** 3;

export interface GpuAdapterLike {
  features: { has(name: string): boolean };
  limits: { maxStorageBufferBindingSize: number; maxBufferSize?: number };
  info?: {
    vendor?: string;
    architecture?: string;
    description?: string;
    device?: string;
    isFallbackAdapter?: boolean;
  };
  /** The older place of the flag (Chrome before 136). */
  isFallbackAdapter?: boolean;
}
export interface GpuLike {
  requestAdapter(options?: unknown): Promise<GpuAdapterLike | null>;
}

/** A software adapter: the flag when the browser gives it, else SwiftShader by name. */
export function isFallbackAdapter(adapter: GpuAdapterLike): boolean {
  const flag = adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter;
  if (typeof flag === 'boolean') return flag;
  const i = adapter.info;
  const name = [i?.vendor, i?.architecture, i?.device, i?.description].join(' ');
  return /swiftshader/i.test(name);
}

let probed: Promise<Readonly<Capabilities>> | null = null;

export function probeCapabilities(): Promise<Readonly<Capabilities>> {
  probed ??= probeWith(
    (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu,
    globalThis.crossOriginIsolated === true,
    globalThis.navigator?.hardwareConcurrency ?? 1,
  );
  return probed;
}

/** The probe itself, on a given `navigator.gpu` (tests pass a fake one). */
export async function probeWith(
  gpu: GpuLike | undefined,
  isolated: boolean,
  cores: number,
): Promise<Readonly<Capabilities>> {
  const base = {
    crossOriginIsolated: isolated,
    // Threads need SharedArrayBuffer, i.e. a cross-origin-isolated page; leave one core free.
    threads: isolated ? Math.max(1, Math.min(4, cores - 1)) : 1,
  };
  if (!gpu) {
    return Object.freeze({
      ...base,
      webgpu: false,
      shaderF16: false,
      adapter: null,
      fallbackAdapter: false,
      webgpuReason: 'navigator.gpu is missing (no WebGPU in this browser or context)',
      maxStorageBufferBindingSize: null,
      maxBufferSize: null,
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
      ? [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') || 'unknown'
      : null,
    fallbackAdapter: adapter ? isFallbackAdapter(adapter) : false,
    webgpuReason: reason,
    maxStorageBufferBindingSize: adapter?.limits.maxStorageBufferBindingSize ?? null,
    maxBufferSize: adapter?.limits.maxBufferSize ?? null,
  });
}

/** 1.50 GiB, 512 MiB or 4,096 bytes: a size as a person reads it. */
function sizeText(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(0)} MiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

/**
 * Why the adapter's buffers cannot hold the package's biggest tensor, or null. onnxruntime asks
 * for the adapter's maximum limits when it creates its device, so the adapter's limits are what
 * the session gets; a tensor above them fails only after the whole download, or loads wrongly.
 */
export function tensorLimitProblem(manifest: PackageManifest, caps: Capabilities): string | null {
  const t = manifest.variant.largestTensor;
  if (!t) return null;
  const limits = [
    ['maxStorageBufferBindingSize', caps.maxStorageBufferBindingSize],
    ['maxBufferSize', caps.maxBufferSize],
  ] as const;
  for (const [name, value] of limits) {
    if (value !== null && t.bytes > value) {
      return `its largest tensor (${t.name}, ${sizeText(t.bytes)}) exceeds this adapter's ${name} of ${sizeText(value)}; it needs a WebGPU adapter whose ${name} reaches ${sizeText(t.bytes)}, or a package converted with smaller tensors (a q4 or q8 variant)`;
    }
  }
  return null;
}

/** Why a device is passed over; `tooLarge`: the package exceeds its memory or buffer limits. */
export interface SkippedDevice {
  device: DeviceName;
  reason: string;
  /** Too big for the device (ModelTooLargeError when no device is left), not unavailable. */
  tooLarge: boolean;
}

/** Why `device` cannot run this package here, or null when it can. */
function deviceProblem(
  device: DeviceName,
  manifest: PackageManifest,
  caps: Capabilities,
): Omit<SkippedDevice, 'device'> | null {
  const other = (reason: string) => ({ reason, tooLarge: false });
  if (!manifest.variant.devices.includes(device)) {
    return other(
      `the ${manifest.variant.dtype} variant of ${manifest.model.name} is built for ${manifest.variant.devices.join(', ')}, not ${device}`,
    );
  }
  if (device === 'webgpu') {
    if (!caps.webgpu) return other(caps.webgpuReason ?? 'WebGPU is unavailable');
    if (manifest.variant.needsShaderF16 && !caps.shaderF16) {
      return other(
        `the ${manifest.variant.dtype} variant needs the WebGPU feature shader-f16, which this adapter lacks; load a q4, q8 or fp32 variant`,
      );
    }
    const limit = tensorLimitProblem(manifest, caps);
    return limit === null ? null : { reason: limit, tooLarge: true };
  }
  if (manifest.variant.peakBytes > WASM_MEMORY_LIMIT) {
    const gib = (manifest.variant.peakBytes / 1024 ** 3).toFixed(1);
    return {
      reason: `${manifest.model.name} (${manifest.variant.dtype}) needs about ${gib} GiB; the WASM back end addresses at most 4 GiB, so this model needs WebGPU`,
      tooLarge: true,
    };
  }
  return null;
}

/**
 * The device a load will start on whatever its manifest says, known from the request and the
 * probe alone: an explicit device that this browser has, or WASM when `auto` has no hardware
 * adapter to prefer. Null when the manifest decides (auto with a real GPU: shader-f16, tensor
 * limits). The engine starts that device's runtime before the manifest has arrived; a manifest
 * that rules the device out only leaves that start unused.
 */
export function deviceBeforeManifest(
  requested: 'auto' | DeviceName,
  caps: Capabilities,
): DeviceName | null {
  if (requested === 'wasm') return 'wasm';
  if (requested === 'webgpu') return caps.webgpu ? 'webgpu' : null;
  return caps.webgpu && !caps.fallbackAdapter ? null : 'wasm';
}

export interface DevicePlan {
  /** Devices to try, best first. */
  order: DeviceName[];
  skipped: SkippedDevice[];
  /** Why order[0] is first: what `info().deviceReason` says when it loads. */
  reason: string;
}

/**
 * The devices to try, in order: the explicit one alone, or every usable one best first. `auto`
 * puts WASM before a software (fallback) WebGPU adapter: SwiftShader emulates the GPU on the CPU
 * and ran clef-nano's first decision ~60× slower than WASM (docs/benchmarks.md). An explicit
 * 'webgpu' uses whatever adapter there is.
 */
export function deviceOrder(
  requested: 'auto' | DeviceName,
  manifest: PackageManifest,
  caps: Capabilities,
): DevicePlan {
  const skipped: SkippedDevice[] = [];
  const usable = (device: DeviceName): boolean => {
    const problem = deviceProblem(device, manifest, caps);
    if (problem) skipped.push({ device, ...problem });
    return problem === null;
  };
  const software = `the WebGPU adapter (${caps.adapter ?? 'unknown'}) is a software fallback`;
  if (requested !== 'auto') {
    if (!usable(requested)) return { order: [], skipped, reason: '' };
    const on = requested === 'webgpu' ? ` on ${caps.adapter ?? 'an unknown adapter'}` : '';
    const soft = requested === 'webgpu' && caps.fallbackAdapter ? ` (${software})` : '';
    return { order: [requested], skipped, reason: `device '${requested}' requested${on}${soft}` };
  }
  const gpu = usable('webgpu');
  const wasm = usable('wasm');
  if (gpu && caps.fallbackAdapter && wasm) {
    skipped.push({
      device: 'webgpu',
      reason: `${software}, slower than WASM on the same CPU`,
      tooLarge: false,
    });
    return {
      order: ['wasm', 'webgpu'],
      skipped,
      reason: `auto: WASM, because ${software} (emulated on the CPU, slower than WASM); device 'webgpu' would still use it`,
    };
  }
  if (gpu) {
    const soft = caps.fallbackAdapter ? ` (${software}, but WASM cannot run this package)` : '';
    return {
      order: wasm ? ['webgpu', 'wasm'] : ['webgpu'],
      skipped,
      reason: `auto: WebGPU on ${caps.adapter ?? 'an unknown adapter'}${soft}`,
    };
  }
  const why = skipped.find((s) => s.device === 'webgpu')?.reason ?? 'WebGPU is unavailable';
  return { order: wasm ? ['wasm'] : [], skipped, reason: `auto: WASM, because ${why}` };
}
