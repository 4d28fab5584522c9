/**
 * What this browser can do, probed once and frozen: one probe per device of the ordered list
 * (src/core/devices.ts), each reading its own facts (`PROBES`); each device's descriptor then
 * says from those facts why it cannot run a package, with the reason kept for `info()`. The
 * order a load tries the devices in is derived from the list (`planDevices`).
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

/** What the probes read of the browser (tests pass a fake `navigator.gpu`). */
export interface ProbeEnv {
  gpu: GpuLike | undefined;
  crossOriginIsolated: boolean;
  cores: number;
}

/** A device's probe: the facts of this browser its descriptor's `problem()` reads. */
export type DeviceProbe = (env: ProbeEnv) => Promise<Partial<Capabilities>>;

/** What is known of a browser before any probe: no GPU, one thread. */
const UNPROBED: Capabilities = {
  crossOriginIsolated: false,
  threads: 1,
  webgpu: false,
  shaderF16: false,
  adapter: null,
  fallbackAdapter: false,
  webgpuReason: 'WebGPU was not probed',
  maxStorageBufferBindingSize: null,
  maxBufferSize: null,
};

/** WebGPU: an adapter, its features and limits, and whether it is a software one. */
async function probeWebGpu({ gpu }: ProbeEnv): Promise<Partial<Capabilities>> {
  if (!gpu) {
    return {
      webgpu: false,
      webgpuReason: 'navigator.gpu is missing (no WebGPU in this browser or context)',
    };
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
  return {
    webgpu: adapter !== null,
    shaderF16: adapter?.features.has('shader-f16') ?? false,
    adapter: adapter
      ? [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') || 'unknown'
      : null,
    fallbackAdapter: adapter ? isFallbackAdapter(adapter) : false,
    webgpuReason: reason,
    maxStorageBufferBindingSize: adapter?.limits.maxStorageBufferBindingSize ?? null,
    maxBufferSize: adapter?.limits.maxBufferSize ?? null,
  };
}

/**
 * Each device's probe, by name (src/core/devices.ts lists the devices): none missing, none
 * extra. Every device in the list is probed, and its descriptor judges a package by the facts.
 */
export const PROBES: Readonly<Record<DeviceName, DeviceProbe>> = Object.freeze({
  webgpu: probeWebGpu,
  // Threads need SharedArrayBuffer, i.e. a cross-origin-isolated page; leave one core free.
  wasm: async ({ crossOriginIsolated: isolated, cores }) => ({
    crossOriginIsolated: isolated,
    threads: isolated ? Math.max(1, Math.min(4, cores - 1)) : 1,
  }),
  // One thread of JavaScript: nothing of the browser's to ask.
  js: async () => ({}),
});

/** The probe itself, on a given `navigator.gpu` (tests pass a fake one): each device's, merged. */
export async function probeWith(
  gpu: GpuLike | undefined,
  isolated: boolean,
  cores: number,
): Promise<Readonly<Capabilities>> {
  const env: ProbeEnv = { gpu, crossOriginIsolated: isolated, cores };
  const facts = await Promise.all(DEVICES.map((d) => PROBES[d.name](env)));
  return Object.freeze(facts.reduce<Capabilities>((caps, f) => ({ ...caps, ...f }), UNPROBED));
}

/** Why a device is passed over; `tooLarge`: the package exceeds its memory or buffer limits. */
export interface SkippedDevice<Name extends string = DeviceName> {
  device: Name;
  reason: string;
  /** Too big for the device (ModelTooLargeError when no device is left), not unavailable. */
  tooLarge: boolean;
}

/** Why `device` cannot run this package here, or null when it can. */
function deviceProblem(
  device: DeviceDescriptor,
  manifest: PackageManifest,
  caps: Capabilities,
): DeviceProblem | null {
  // A manifest lists the onnxruntime devices its variant is built for; the js device checks the
  // graphs' ops itself when it loads them (a DeviceError naming what it lacks).
  const built: readonly string[] = manifest.variant.devices;
  if (device.runtime === 'onnxruntime' && !built.includes(device.name)) {
    return {
      reason: `the ${manifest.variant.dtype} variant of ${manifest.model.name} is built for ${manifest.variant.devices.join(', ')}, not ${device.name}`,
      tooLarge: false,
    };
  }
  const notServed = runtimeProblem(device, caps.runtimeBuilds);
  if (notServed) return { reason: notServed, tooLarge: false };
  return device.problem(manifest, caps);
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
  return device && !runtimeProblem(deviceOf(device), caps.runtimeBuilds) ? device : null;
}

export interface DevicePlan<Name extends string = DeviceName> {
  /** Devices to try, best first. */
  order: Name[];
  skipped: Array<SkippedDevice<Name>>;
  /** Why order[0] is first: what `info().deviceReason` says when it loads. */
  reason: string;
}

/** The devices to try for this package on this browser, in order (see planDevices). */
export function deviceOrder(
  requested: DeviceRequest,
  manifest: PackageManifest,
  caps: Capabilities,
): DevicePlan {
  return planDevices(DEVICES, requested, manifest, caps);
}

/**
 * The devices of `devices` (best first) to try, in order: the explicit one alone, or every
 * usable one. `auto` keeps the list's order of the onnxruntime devices that can run the
 * package, except that a GPU emulated on the CPU (a software WebGPU adapter: SwiftShader ran
 * clef-nano's first decision ~60× slower than WASM, docs/benchmarks.md) goes after the CPU
 * devices when one can run the package; an explicit GPU device uses whatever adapter there is.
 * Each js device (no onnxruntime) then goes first when its estimated time to the page's first
 * answers on this package (src/core/device-cost.ts: the devices' measured costs over the
 * manifest's sizes) is shorter than the first device's, and last otherwise.
 */
export function planDevices<Name extends string>(
  devices: readonly DeviceDescriptor<Name>[],
  requested: 'auto' | Name,
  manifest: PackageManifest,
  caps: Capabilities,
): DevicePlan<Name> {
  const plan = onnxruntimeOrder(devices, requested, manifest, caps);
  if (requested !== 'auto') return plan;
  const facts = costFacts(manifest);
  const estimate = (d: DeviceDescriptor) =>
    Math.round(firstAnswersMs(d.cost, facts, { threads: caps.threads }));
  const named = (name: Name) => devices.find((d) => d.name === name)!;
  for (const js of devices.filter((d) => d.runtime === 'js')) {
    const problem = deviceProblem(js, manifest, caps);
    if (problem) {
      plan.skipped.push({ device: js.name, ...problem });
      continue;
    }
    const first = plan.order[0];
    if (first === undefined) {
      plan.order = [js.name];
      plan.reason = `auto: ${js.label}, the one device that can run this package`;
      continue;
    }
    const mine = estimate(js);
    const theirs = estimate(named(first));
    const versus = `${mine} ms against ${theirs} ms on ${named(first).label} for ${ESTIMATE_TOKENS}-token requests (estimated from the devices' measured costs)`;
    if (mine < theirs) {
      plan.order = [js.name, ...plan.order];
      plan.reason = `auto: ${js.label}, first ${ESTIMATE_ANSWERS} answers in ${versus}`;
    } else {
      plan.order = [...plan.order, js.name];
      plan.reason = `${plan.reason}; ${js.label} would give the first ${ESTIMATE_ANSWERS} answers in ${versus.replace(' against ', ', not ')}`;
    }
  }
  return plan;
}

/** The onnxruntime devices to try, in order, as planDevices says; an explicit device alone. */
function onnxruntimeOrder<Name extends string>(
  devices: readonly DeviceDescriptor<Name>[],
  requested: 'auto' | Name,
  manifest: PackageManifest,
  caps: Capabilities,
): DevicePlan<Name> {
  const skipped: Array<SkippedDevice<Name>> = [];
  const usable = (device: DeviceDescriptor<Name>): boolean => {
    const problem = deviceProblem(device, manifest, caps);
    if (problem) skipped.push({ device: device.name, ...problem });
    return problem === null;
  };
  const adapter = caps.adapter ?? 'an unknown adapter';
  if (requested !== 'auto') {
    const device = devices.find((d) => d.name === requested);
    if (!device) throw new Error(`no device '${requested}' in the list`);
    if (!usable(device)) return { order: [], skipped, reason: '' };
    const emulated = device.gpu ? device.emulated(caps) : null;
    const on = device.gpu ? ` on ${adapter}` : '';
    const soft = emulated ? ` (${emulated})` : '';
    return {
      order: [device.name],
      skipped,
      reason: `device '${device.name}' requested${on}${soft}`,
    };
  }
  // Every device is checked (so each one's reason is kept), best first.
  const ok = devices.filter((d) => d.runtime === 'onnxruntime' && usable(d));
  const cpu = ok.find((d) => !d.gpu);
  const emulated = (d: DeviceDescriptor<Name>) => (d.gpu ? d.emulated(caps) : null);
  const demoted = cpu ? ok.filter((d) => emulated(d) !== null) : [];
  for (const gpu of demoted) {
    skipped.push({
      device: gpu.name,
      reason: `${emulated(gpu)}, slower than ${cpu!.label} on the same CPU`,
      tooLarge: false,
    });
  }
  const order = [...ok.filter((d) => !demoted.includes(d)), ...demoted];
  const first = order[0];
  const names = order.map((d) => d.name);
  if (first?.gpu) {
    const soft = emulated(first);
    const why = soft ? ` (${soft}, but ${cpuDevice(devices)?.label} cannot run this package)` : '';
    return { order: names, skipped, reason: `auto: ${first.label} on ${adapter}${why}` };
  }
  const label = (first ?? cpuDevice(devices))?.label;
  if (demoted[0]) {
    const gpu = demoted[0];
    return {
      order: names,
      skipped,
      reason: `auto: ${label}, because ${emulated(gpu)} (emulated on the CPU, slower than ${label}); device '${gpu.name}' would still use it`,
    };
  }
  const gpuSkipped = skipped.find((s) => devices.find((d) => d.name === s.device)?.gpu);
  const gpuFirst = order.some((d) => d.gpu) ? 'it comes before the GPU devices in the list' : null;
  const why = gpuSkipped?.reason ?? gpuFirst ?? 'no GPU device can run this package';
  return { order: names, skipped, reason: `auto: ${label}, because ${why}` };
}
