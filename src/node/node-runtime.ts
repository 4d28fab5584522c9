/**
 * What a Node engine runs a package's graphs on: onnxruntime-node (native, an optional peer
 * dependency) or the js device (src/graph: the graphs interpreted in TypeScript, nothing to
 * install). `auto` takes onnxruntime-node when it is installed and the js device when it is not,
 * so `npx clef-web decide` works with no native dependency; onnxruntime-node's install line is
 * printed only where a command needs it (asked for by name, or a graph the js device refuses).
 */
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import type { ManifestFile } from '../core/manifest.js';
import { runtimeAdapter, type RuntimeAdapter, type SessionLike } from '../core/runtime-types.js';
import { GraphSession } from '../graph/session.js';
import { GRAPH_RUNTIME } from '../graph/tensor.js';
import { UnsupportedOpError } from '../graph/program.js';
import { PackageError } from '../wire/errors.js';
import { loadOrtNode, MissingDependencyError } from './ort-node.js';
import { ORT_NODE_INSTALL } from './missing-dependency.js';
import {
  NODE_CPU,
  NODE_DEVICES,
  type NodeDeviceDescriptor,
  type NodeDeviceName,
  type NodeEngineRuntime,
} from '../core/devices.js';

/** `runtime` of loadNodePackage: which one runs the graphs (a device's, or 'auto'). */
export type NodeRuntimeRequest = 'auto' | NodeDevice['runtime'];
export type NodeRuntimeName = NodeEngineRuntime;

type NodeDevice = (typeof NODE_DEVICES)[number];

export const NODE_RUNTIMES: readonly NodeRuntimeRequest[] = Object.freeze([
  'auto',
  ...NODE_DEVICES.map((d) => d.runtime),
]);

/** The `--runtime` line of the usage of the commands that decide (decide, serve, replay). */
export const RUNTIME_USAGE =
  '[--runtime auto|onnxruntime|js]  what runs the graphs (default auto: onnxruntime-node when installed, else the js device)';

/** `--runtime`'s value, checked (undefined: auto). */
export function runtimeOption(text: string | undefined): NodeRuntimeRequest {
  if (text === undefined) return 'auto';
  if (!(NODE_RUNTIMES as readonly string[]).includes(text)) {
    throw new Error(
      `--runtime must be one of ${NODE_RUNTIMES.join(', ')}, not ${JSON.stringify(text)}`,
    );
  }
  return text as NodeRuntimeRequest;
}

export interface NodeRuntimeOptions {
  threads?: number;
  memoryArena?: boolean;
}

export interface NodeRuntime {
  readonly name: NodeRuntimeName;
  /** Why it runs on this one (what `auto` found). */
  readonly reason: string;
  readonly adapter: RuntimeAdapter;
  /**
   * A session over `graph`; `pathOf` gives the verified path of a manifest file (its external
   * data must be files the manifest lists).
   */
  createSession(
    graph: ManifestFile,
    files: readonly ManifestFile[],
    pathOf: (file: ManifestFile) => string,
  ): Promise<SessionLike>;
}

/** A device's runtime, opened, or why it is not here (`missing`: auto then tries the next). */
export type NodeProbeResult = Omit<NodeRuntime, 'name' | 'reason'> | { missing: Error };

/** A Node device's probe: open its runtime, or say it is not installed. */
export type NodeProbe = (options: NodeRuntimeOptions) => Promise<NodeProbeResult>;

/** onnxruntime-node on the CPU: there when the optional dependency is installed. */
async function probeOrtNode(options: NodeRuntimeOptions): Promise<NodeProbeResult> {
  let ort: Awaited<ReturnType<typeof loadOrtNode>>;
  try {
    ort = await loadOrtNode();
  } catch (e) {
    if (e instanceof MissingDependencyError) return { missing: e };
    throw e;
  }
  const sessionOptions = {
    executionProviders: [NODE_CPU.executionProvider],
    graphOptimizationLevel: 'all' as const,
    ...(options.memoryArena === false ? { enableCpuMemArena: false } : {}),
    ...(options.threads !== undefined ? { intraOpNumThreads: options.threads } : {}),
  };
  return {
    adapter: runtimeAdapter(ort.Tensor),
    async createSession(graph, _files, pathOf) {
      try {
        return await ort.InferenceSession.create(pathOf(graph), sessionOptions);
      } catch (e) {
        throw new PackageError(
          `${graph.path}: onnxruntime cannot load it: ${(e as Error).message}`,
        );
      }
    },
  };
}

/** Each Node device's probe, by name (src/core/devices.ts lists them): none missing, none extra. */
const NODE_PROBES = Object.freeze({
  cpu: probeOrtNode,
  // The graph interpreter ships with clef-web: always there.
  js: async () => jsRuntime(),
} satisfies Record<NodeDeviceName, NodeProbe>);

export async function openNodeRuntime(
  request: NodeRuntimeRequest,
  options: NodeRuntimeOptions = {},
): Promise<NodeRuntime> {
  return pickNodeDevice(NODE_DEVICES, request, (d) => NODE_PROBES[d.name](options));
}

/**
 * The runtime of the device `request` names, or under 'auto' of the first of `devices` (best
 * first) whose probe finds it, with the devices passed over in its reason. A device asked for
 * by name that is missing throws its probe's error (MissingDependencyError: the install line).
 */
export async function pickNodeDevice<D extends NodeDeviceDescriptor>(
  devices: readonly D[],
  request: 'auto' | D['runtime'],
  probe: (device: D) => Promise<NodeProbeResult>,
): Promise<NodeRuntime> {
  const candidates = devices.filter((d) => request === 'auto' || d.runtime === request);
  const passedOver: string[] = [];
  let lastMissing: Error | null = null;
  for (const device of candidates) {
    const found = await probe(device);
    if ('missing' in found) {
      if (request !== 'auto') throw found.missing;
      passedOver.push(device.missing);
      lastMissing = found.missing;
      continue;
    }
    const reason =
      request !== 'auto'
        ? `runtime '${request}' requested`
        : passedOver.length === 0
          ? `auto: ${device.found}`
          : `auto: ${passedOver.join('; ')}, so ${device.label} runs the graphs`;
    return { ...found, name: device.engineRuntime, reason };
  }
  throw lastMissing ?? new Error(`no Node device runs the graphs for runtime '${request}'`);
}

function jsRuntime(): Omit<NodeRuntime, 'name' | 'reason'> {
  return {
    adapter: GRAPH_RUNTIME,
    async createSession(graph, files, pathOf) {
      const dir = posix.dirname(graph.path);
      const model = new Uint8Array(await readFile(pathOf(graph)));
      // External data must be files the manifest lists (verified at load), read once each.
      const external = async (location: string): Promise<Uint8Array> => {
        const path = posix.normalize(posix.join(dir, location));
        const file = files.find((f) => f.path === path);
        if (!file) {
          throw new PackageError(
            `${graph.path}: its external data ${location} is not a file the manifest lists`,
            { file: graph.path },
          );
        }
        return new Uint8Array(await readFile(pathOf(file)));
      };
      try {
        return await GraphSession.create(model, external, graph.path);
      } catch (e) {
        if (e instanceof UnsupportedOpError) {
          throw new UnsupportedOpError(
            e.graph,
            e.ops,
            e.problems,
            `onnxruntime-node runs it: ${ORT_NODE_INSTALL}`,
          );
        }
        if (e instanceof PackageError) throw e;
        throw new PackageError(
          `${graph.path}: the js device cannot load it: ${(e as Error).message}`,
          {
            file: graph.path,
          },
        );
      }
    },
  };
}
