/**
 * What this browser can do, probed once and frozen. Devices are an explicit ordered list: each
 * probe returns null when the device is unavailable here, with the reason kept for `info()`.
 */
import type { PackageManifest } from '../core/manifest.js';
import {
  DEVICES,
  cpuDevice,
  deviceOf,
  type Capabilities,
  type DeviceDescriptor,
  type DeviceName,
  type DeviceProblem,
  type DeviceRequest,
} from '../core/devices.js';
import {
  costFacts,
  ESTIMATE_ANSWERS,
  ESTIMATE_TOKENS,
  firstAnswersMs,
} from '../core/device-cost.js';
import { runtimeProblem } from './runtime-files.js';

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
): DeviceProblem | null {
  // A manifest lists the onnxruntime devices its variant is built for; the js device checks the
  // graphs' ops itself when it loads them (a DeviceError naming what it lacks).
  const listed =
    deviceOf(device).runtime !== 'onnxruntime' || manifest.variant.devices.includes(device);
  if (!listed) {
    return {
      reason: `the ${manifest.variant.dtype} variant of ${manifest.model.name} is built for ${manifest.variant.devices.join(', ')}, not ${device}`,
      tooLarge: false,
    };
  }
  const notServed = runtimeProblem(device, caps.runtimeBuilds);
  if (notServed) return { reason: notServed, tooLarge: false };
  return deviceOf(device).problem(manifest, caps);
}

/**
 * The device a load will start on whatever its manifest says, known from the request and the
 * probe alone: an explicit device that this browser has. Null when the manifest decides: `auto`
 * weighs the package's size against each device's cost (a small model on the js device never
 * fetches onnxruntime at all), and a GPU's shader-f16 and tensor limits. The engine starts that
 * device's runtime before the manifest has arrived; a manifest that rules the device out only
 * leaves that start unused.
 */
export function deviceBeforeManifest(
  requested: DeviceRequest,
  caps: Capabilities,
): DeviceName | null {
  // 'auto' waits for the manifest: whether the js device goes first depends on the package.
  if (requested === 'auto') return null;
  const device = deviceOf(requested).gpu && !caps.webgpu ? null : requested;
  // A device whose runtime is not served is refused once the manifest is read.
  return device && !runtimeProblem(device, caps.runtimeBuilds) ? device : null;
}

export interface DevicePlan {
  /** Devices to try, best first. */
  order: DeviceName[];
  skipped: SkippedDevice[];
  /** Why order[0] is first: what `info().deviceReason` says when it loads. */
  reason: string;
}

/**
 * The devices to try, in order: the explicit one alone, or every usable one. `auto` orders the
 * onnxruntime devices as onnxruntimeOrder does, then puts the js device first when its estimated
 * time to the page's first answers on this package (src/core/device-cost.ts: the devices'
 * measured costs over the manifest's sizes) is shorter than the first of those's, and last
 * otherwise.
 */
export function deviceOrder(
  requested: DeviceRequest,
  manifest: PackageManifest,
  caps: Capabilities,
): DevicePlan {
  const plan = onnxruntimeOrder(requested, manifest, caps);
  if (requested !== 'auto') return plan;
  const js = DEVICES.find((d) => d.runtime === 'js');
  if (!js) return plan;
  const problem = deviceProblem(js.name, manifest, caps);
  if (problem) {
    plan.skipped.push({ device: js.name, ...problem });
    return plan;
  }
  const facts = costFacts(manifest);
  const estimate = (d: DeviceDescriptor<DeviceName>) =>
    Math.round(firstAnswersMs(d.cost, facts, { threads: caps.threads }));
  const first = plan.order[0];
  const mine = estimate(js);
  if (first === undefined) {
    return {
      order: [js.name],
      skipped: plan.skipped,
      reason: `auto: ${js.label}, the one device that can run this package`,
    };
  }
  const theirs = estimate(deviceOf(first));
  const versus = `${mine} ms against ${theirs} ms on ${deviceOf(first).label} for ${ESTIMATE_TOKENS}-token requests (estimated from the devices' measured costs)`;
  if (mine < theirs) {
    return {
      order: [js.name, ...plan.order],
      skipped: plan.skipped,
      reason: `auto: ${js.label}, first ${ESTIMATE_ANSWERS} answers in ${versus}`,
    };
  }
  return {
    order: [...plan.order, js.name],
    skipped: plan.skipped,
    reason: `${plan.reason}; ${js.label} would give the first ${ESTIMATE_ANSWERS} answers in ${versus.replace(' against ', ', not ')}`,
  };
}

/**
 * The onnxruntime devices to try, in order: the explicit one alone, or every usable one best
 * first. `auto` puts WASM before a software (fallback) WebGPU adapter: SwiftShader emulates the GPU on the CPU
 * and ran clef-nano's first decision ~60× slower than WASM (docs/benchmarks.md). An explicit
 * 'webgpu' uses whatever adapter there is.
 */
function onnxruntimeOrder(
  requested: DeviceRequest,
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
    const gpu = deviceOf(requested).gpu;
    const on = gpu ? ` on ${caps.adapter ?? 'an unknown adapter'}` : '';
    const soft = gpu && caps.fallbackAdapter ? ` (${software})` : '';
    return { order: [requested], skipped, reason: `device '${requested}' requested${on}${soft}` };
  }
  // Every device is checked (so each one's reason is kept), best first.
  const ok = DEVICES.filter((d) => d.runtime === 'onnxruntime' && usable(d.name));
  const gpu = ok.find((d) => d.gpu);
  const cpu = ok.find((d) => !d.gpu);
  if (gpu && caps.fallbackAdapter && cpu) {
    skipped.push({
      device: gpu.name,
      reason: `${software}, slower than ${cpu.label} on the same CPU`,
      tooLarge: false,
    });
    return {
      order: [cpu.name, gpu.name],
      skipped,
      reason: `auto: ${cpu.label}, because ${software} (emulated on the CPU, slower than ${cpu.label}); device '${gpu.name}' would still use it`,
    };
  }
  if (gpu) {
    const soft = caps.fallbackAdapter
      ? ` (${software}, but ${cpuDevice().label} cannot run this package)`
      : '';
    return {
      order: ok.map((d) => d.name),
      skipped,
      reason: `auto: ${gpu.label} on ${caps.adapter ?? 'an unknown adapter'}${soft}`,
    };
  }
  const why = skipped.find((s) => deviceOf(s.device).gpu)?.reason ?? 'WebGPU is unavailable';
  return {
    order: ok.map((d) => d.name),
    skipped,
    reason: `auto: ${cpuDevice().label}, because ${why}`,
  };
}
