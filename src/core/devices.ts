/**
 * The devices, as data: one ordered list (best first, as `auto` tries them) with a descriptor
 * each, so that what differs between devices is read from here instead of compared as string
 * literals across the engine. What a browser has is probed by src/engine/capabilities.ts, one
 * probe per device (`PROBES`); what a package needs of a device is `problem()` here, pure over
 * the probes' answers; how long a device takes to a package's first answer is its `cost`, over
 * the manifest (device-cost.ts). `auto`'s order is derived from the list there (`planDevices`).
 * A Node engine's devices are a second list (`NODE_DEVICES`), probed by src/node/node-runtime.ts.
 */
import { JS_COST, WASM_COST, WEBGPU_COST, type DeviceCost } from './device-cost.js';
import type { RuntimeBuild } from '../wire/assets.js';
import type { DeviceName, DeviceRequest } from '../wire/devices.js';

export type { DeviceName, DeviceRequest };

/** What a device check reads of a package (its manifest's model name and variant). */
export interface PackageFacts {
  model: { name: string };
  variant: {
    dtype: string;
    needsShaderF16: boolean;
    peakBytes: number;
    largestTensor?: { name: string; bytes: number };
  };
}

/** What the probe found (src/engine/capabilities.ts), frozen. */
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
  /**
   * The onnxruntime-web builds this browser can run and the server serves under /ort/
   * (src/engine/runtime-files.ts); absent where not probed: every build is assumed there.
   */
  readonly runtimeBuilds?: readonly RuntimeBuild[];
}

/** Why a device cannot run a package; `tooLarge`: it exceeds the device's memory or buffers. */
export interface DeviceProblem {
  reason: string;
  /** Too big for the device (ModelTooLargeError when no device is left), not unavailable. */
  tooLarge: boolean;
}

export interface DeviceDescriptor<Name extends string = string> {
  readonly name: Name;
  /** As a person reads it: 'WebGPU', 'WASM'. */
  readonly label: string;
  /**
   * What runs the graphs: onnxruntime-web (its wasm and JavaScript fetched from /ort/ and the
   * bundle), or 'js': the package's graphs interpreted in TypeScript (src/graph), nothing more
   * to fetch or start.
   */
  readonly runtime: 'onnxruntime' | 'js';
  /** onnxruntime-web's execution provider for it (null: not an onnxruntime device). */
  readonly executionProvider: 'webgpu' | 'wasm' | null;
  /**
   * The onnxruntime-web builds it runs on, best first (src/wire/assets.ts): the engine takes the
   * first this browser supports and the server serves; the Vite plugin and `clef-web assets`
   * ship the first. Empty for a device that fetches no onnxruntime file (js).
   */
  readonly runtimeBuilds: readonly RuntimeBuild[];
  /** A GPU: outputs may stay device buffers between runs, and the device can be lost. */
  readonly gpu: boolean;
  /**
   * The engine's warm-up (src/engine/warm-up.ts) tries again once the engine is idle: on WASM,
   * to leave compiled code for the next visit; not on a GPU, where one stage can hold a request.
   */
  readonly warmUpRetries: boolean;
  /** Runs the graphs the converter optimised for it (`*.wasm.onnx`) where the package has them. */
  readonly preparedGraphs: boolean;
  /** Why this browser (the probe's answers) cannot run the package on it, or null. */
  problem(manifest: PackageFacts, caps: Capabilities): DeviceProblem | null;
  /**
   * Why it runs emulated on the CPU here (a software WebGPU adapter), or null: `auto` puts such
   * a device after the CPU devices that can run the package.
   */
  emulated(caps: Capabilities): string | null;
  /** Its measured speeds: what `auto` estimates a package's first answer from. */
  readonly cost: DeviceCost;
}

/** The WASM back end is 32-bit: weights, activations and state share 4 GiB. */
export const WASM_MEMORY_LIMIT = 4 * 1024 ** 3;

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
export function tensorLimitProblem(manifest: PackageFacts, caps: Capabilities): string | null {
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

const WEBGPU = {
  name: 'webgpu',
  label: 'WebGPU',
  runtime: 'onnxruntime',
  executionProvider: 'webgpu',
  // JSPI where the browser has it (16.8 MB of wasm, docs/benchmarks.md), else asyncify (26.8 MB).
  runtimeBuilds: ['jspi', 'asyncify'],
  gpu: true,
  warmUpRetries: false,
  preparedGraphs: false,
  problem(manifest, caps) {
    if (!caps.webgpu)
      return { reason: caps.webgpuReason ?? 'WebGPU is unavailable', tooLarge: false };
    if (manifest.variant.needsShaderF16 && !caps.shaderF16) {
      return {
        reason: `the ${manifest.variant.dtype} variant needs the WebGPU feature shader-f16, which this adapter lacks; load a q4, q8 or fp32 variant`,
        tooLarge: false,
      };
    }
    const limit = tensorLimitProblem(manifest, caps);
    return limit === null ? null : { reason: limit, tooLarge: true };
  },
  emulated: (caps) =>
    caps.fallbackAdapter
      ? `the WebGPU adapter (${caps.adapter ?? 'unknown'}) is a software fallback`
      : null,
  cost: WEBGPU_COST,
} as const satisfies DeviceDescriptor<'webgpu'>;

const WASM = {
  name: 'wasm',
  label: 'WASM',
  runtime: 'onnxruntime',
  executionProvider: 'wasm',
  // The plain build (14.2 MB) is measured faster to load; a WebGPU build runs WASM too, so an
  // app that ships WebGPU's build alone still runs where WebGPU is missing.
  runtimeBuilds: ['plain', 'jspi', 'asyncify'],
  gpu: false,
  warmUpRetries: true,
  preparedGraphs: true,
  problem(manifest) {
    if (manifest.variant.peakBytes <= WASM_MEMORY_LIMIT) return null;
    const gib = (manifest.variant.peakBytes / 1024 ** 3).toFixed(1);
    return {
      reason: `${manifest.model.name} (${manifest.variant.dtype}) needs about ${gib} GiB; the WASM back end addresses at most 4 GiB, so this model needs WebGPU`,
      tooLarge: true,
    };
  },
  emulated: () => null,
  cost: WASM_COST,
} as const satisfies DeviceDescriptor<'wasm'>;

/**
 * The js device holds every weight in JavaScript typed arrays (float16 linear weights widened
 * to float32 once) and computes on one thread: meant for the small models a page trains for
 * itself, where onnxruntime's start is most of the first answer. Bigger ones are refused here.
 */
export const JS_MEMORY_LIMIT = 1024 ** 3;

const JS = {
  name: 'js',
  label: 'js',
  runtime: 'js',
  executionProvider: null,
  runtimeBuilds: [],
  gpu: false,
  warmUpRetries: false,
  preparedGraphs: false,
  problem(manifest) {
    if (manifest.variant.peakBytes <= JS_MEMORY_LIMIT) return null;
    const gib = (manifest.variant.peakBytes / 1024 ** 3).toFixed(1);
    return {
      reason: `${manifest.model.name} (${manifest.variant.dtype}) needs about ${gib} GiB; the js device holds at most 1 GiB (it is for small models)`,
      tooLarge: true,
    };
  },
  emulated: () => null,
  cost: JS_COST,
} as const satisfies DeviceDescriptor<'js'>;

/**
 * Every device, best first: the order an explicit list is tried in. `auto` orders the CPU
 * devices by their estimated first answer for the package (src/engine/capabilities.ts).
 */
export const DEVICES = Object.freeze([WEBGPU, WASM, JS] as const);

/** Each device the wire names (src/wire/devices.ts), by name: none missing, none extra. */
const BY_NAME = { webgpu: WEBGPU, wasm: WASM, js: JS } as const satisfies Record<
  DeviceName,
  DeviceDescriptor<DeviceName>
>;

/** The device names, best first. */
export const DEVICE_NAMES: readonly DeviceName[] = Object.freeze(DEVICES.map((d) => d.name));

export function deviceOf(name: DeviceName): DeviceDescriptor<DeviceName> {
  return BY_NAME[name];
}

/**
 * The device a lost GPU falls back to, and the one `auto` names when no GPU can run a package:
 * the list's first onnxruntime device that is not a GPU (WASM: it runs every package the GPU did).
 */
export function cpuDevice(): DeviceDescriptor<DeviceName>;
export function cpuDevice<Name extends string>(
  devices: readonly DeviceDescriptor<Name>[],
): DeviceDescriptor<Name> | undefined;
export function cpuDevice(
  devices: readonly DeviceDescriptor[] = DEVICES,
): DeviceDescriptor | undefined {
  return devices.find((d) => !d.gpu && d.runtime === 'onnxruntime');
}

/** The devices that run the graphs on onnxruntime-web (those a manifest's `devices` lists). */
export function onnxruntimeDevices(): Array<DeviceDescriptor<DeviceName>> {
  return DEVICES.filter((d) => d.runtime === 'onnxruntime');
}

/**
 * A device a Node engine runs a package on (src/node/node-runtime.ts): onnxruntime-node on the
 * CPU, or the js device, which runs in Node as it does in the page. Node has no GPU device.
 */
export interface NodeDeviceDescriptor<Name extends string = string> {
  /** As records name the device that answered (`engine.device`). */
  readonly name: Name;
  /** As a person reads it, in `auto`'s reason and the model card. */
  readonly label: string;
  /** What runs the graphs: `--runtime`'s value (and loadNodePackage's `runtime`) for it. */
  readonly runtime: 'onnxruntime' | 'js';
  /** The engine's `runtime`. */
  readonly engineRuntime: 'onnxruntime-node' | 'js';
  /** As records name the runtime (`engine.runtime`). */
  readonly recordRuntime: string;
  /** onnxruntime-node's execution provider for it (null: not an onnxruntime device). */
  readonly executionProvider: 'cpu' | null;
  /** What `auto` says when it takes this device (its probe found it), and when it cannot. */
  readonly found: string;
  readonly missing: string;
  readonly gpu: false;
}

/** onnxruntime-node's CPU execution provider: native code, an optional peer dependency. */
export const NODE_CPU = {
  name: 'cpu',
  label: 'onnxruntime-node',
  runtime: 'onnxruntime',
  engineRuntime: 'onnxruntime-node',
  recordRuntime: 'onnxruntime-node',
  executionProvider: 'cpu',
  found: 'onnxruntime-node is installed',
  missing: 'onnxruntime-node is not installed',
  gpu: false,
} as const satisfies NodeDeviceDescriptor<'cpu'>;

const NODE_JS = {
  name: JS.name,
  label: `the ${JS.label} device`,
  runtime: JS.runtime,
  engineRuntime: 'js',
  recordRuntime: 'clef-web js',
  executionProvider: JS.executionProvider,
  found: 'the js device needs nothing installed',
  missing: 'the js device is unavailable',
  gpu: JS.gpu,
} as const satisfies NodeDeviceDescriptor<'js'>;

/**
 * The devices a Node engine runs on, best first: `auto` takes the first whose probe finds it
 * (src/node/node-runtime.ts), so a Node without onnxruntime-node runs the js device.
 */
export const NODE_DEVICES = Object.freeze([NODE_CPU, NODE_JS] as const);

export type NodeDeviceName = (typeof NODE_DEVICES)[number]['name'];
export type NodeEngineRuntime = (typeof NODE_DEVICES)[number]['engineRuntime'];

/** The Node device an engine's `runtime` runs on. */
export function nodeDeviceOf(
  engineRuntime: NodeEngineRuntime,
): NodeDeviceDescriptor<NodeDeviceName> {
  return NODE_DEVICES.find((d) => d.engineRuntime === engineRuntime)!;
}
