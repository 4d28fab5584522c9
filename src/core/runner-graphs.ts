/**
 * A package's graphs opened as the runner's sessions, in the page and in Node: the two head
 * graphs first (small; the page fetches them before the backbone), then each backbone group in
 * run order. Each session is guarded (input-guard.ts: a graph converted for another engine is
 * refused, naming its file) and, if any graph fails to open, every session opened so far is
 * released before the error is thrown. How a graph becomes a session (fetch and onnxruntime-web,
 * a file path and onnxruntime-node, the js device) is the caller's `open`.
 */
import { backboneGroups, type BackboneGroupSpec } from './graph-spec.js';
import { backboneInputs, guardSession, REQUIRED_INPUTS } from './input-guard.js';
import { filesWithRole, requireFile, type KvDtype, type ManifestFile } from './manifest.js';
import type { PackageManifest } from './manifest.js';
import type { BackboneStage, RunnerGraphs } from './runner.js';
import type { SessionLike } from './runtime-types.js';

/** One graph to open as a session. */
export interface GraphToOpen {
  /** `headMemory`, `headDecide`, then `backbone` (one group) or `backbone.<index>`. */
  name: string;
  file: ManifestFile;
  /** The external data files it reads. */
  data: readonly ManifestFile[];
  /** Outputs the next run reads: a GPU device keeps them as device buffers. */
  keepOnDevice: readonly string[];
}

/** A backbone group's graph to open. */
export interface GroupToOpen extends GraphToOpen {
  group: BackboneGroupSpec;
}

export interface GraphOpener {
  /** A session over the graph; `group` is set for a backbone group's graph. */
  open(graph: GraphToOpen & { group?: BackboneGroupSpec }): Promise<SessionLike>;
  /** Called once both head graphs are open, before the first backbone group. */
  afterHeads?(): Promise<void>;
}

/** The graphs a package's runner needs, in the order they are opened. */
export function graphsToOpen(
  manifest: PackageManifest,
  kvDtype: KvDtype = 'float32',
): { heads: [GraphToOpen, GraphToOpen]; backbone: GroupToOpen[] } {
  const headData = filesWithRole(manifest, 'head-data');
  const groups = backboneGroups(manifest, kvDtype);
  return {
    heads: [
      // The memory rows stay on the GPU too (fed back as past_memory, cached, read by
      // head_decide): reading them back cost 4·width bytes per prefix token on every miss.
      {
        name: 'headMemory',
        file: requireFile(manifest, 'head-memory'),
        data: headData,
        keepOnDevice: ['memory'],
      },
      {
        name: 'headDecide',
        file: requireFile(manifest, 'head-decide'),
        data: headData,
        keepOnDevice: [],
      },
    ],
    backbone: groups.map((g) => ({
      name: groups.length === 1 ? 'backbone' : `backbone.${g.index}`,
      file: g.graph,
      data: g.data,
      // A group's stream and state outputs are read by the next group or the next run.
      keepOnDevice: [g.output, ...g.states.map((s) => s.output)],
      group: g,
    })),
  };
}

export interface OpenedGraphs {
  graphs: RunnerGraphs;
  /** Releases every session. */
  release(): Promise<void>;
}

/**
 * Opens the package's graphs through `opener` and guards each session; on failure releases
 * every session opened and rethrows.
 */
export async function openRunnerGraphs(
  manifest: PackageManifest,
  kvDtype: KvDtype | undefined,
  opener: GraphOpener,
): Promise<OpenedGraphs> {
  const plan = graphsToOpen(manifest, kvDtype);
  const opened: SessionLike[] = [];
  const release = async () => {
    await Promise.all(opened.map((s) => s.release().catch(() => undefined)));
  };
  const open = async (graph: GraphToOpen, required: readonly string[]) => {
    const session = await opener.open(graph);
    opened.push(session);
    return guardSession(session, graph.file.path, required);
  };
  try {
    const [memory, decide] = plan.heads;
    const headMemory = await open(memory, REQUIRED_INPUTS.headMemory);
    const headDecide = await open(decide, REQUIRED_INPUTS.headDecide);
    await opener.afterHeads?.();
    const backbone: BackboneStage[] = [];
    for (const graph of plan.backbone) {
      const g = graph.group;
      const session = await open(graph, backboneInputs(g));
      backbone.push({ session, states: g.states, input: g.input, output: g.output });
    }
    return { graphs: { backbone, headMemory, headDecide }, release };
  } catch (e) {
    await release();
    throw e;
  }
}
