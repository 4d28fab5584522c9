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

/** `runtime` of loadNodePackage: which one runs the graphs. */
export type NodeRuntimeRequest = 'auto' | 'onnxruntime' | 'js';
export type NodeRuntimeName = 'onnxruntime-node' | 'js';

export const NODE_RUNTIMES: readonly NodeRuntimeRequest[] = ['auto', 'onnxruntime', 'js'];

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

export async function openNodeRuntime(
  request: NodeRuntimeRequest,
  options: NodeRuntimeOptions = {},
): Promise<NodeRuntime> {
  if (request === 'js') return jsRuntime("runtime 'js' requested");
  try {
    const ort = await loadOrtNode();
    const sessionOptions = {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all' as const,
      ...(options.memoryArena === false ? { enableCpuMemArena: false } : {}),
      ...(options.threads !== undefined ? { intraOpNumThreads: options.threads } : {}),
    };
    return {
      name: 'onnxruntime-node',
      reason:
        request === 'auto'
          ? 'auto: onnxruntime-node is installed'
          : "runtime 'onnxruntime' requested",
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
  } catch (e) {
    if (request === 'auto' && e instanceof MissingDependencyError) {
      return jsRuntime('auto: onnxruntime-node is not installed, so the js device runs the graphs');
    }
    throw e;
  }
}

function jsRuntime(reason: string): NodeRuntime {
  return {
    name: 'js',
    reason,
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
