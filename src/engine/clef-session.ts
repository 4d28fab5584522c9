/**
 * The onnxruntime-web decision session: the package's graphs on one device, driven by ClefRunner.
 * Files are fetched as the sessions need them: the head graphs first (small: their sessions are
 * created as soon as they arrive), then each backbone group in turn, fetched, verified, handed
 * to InferenceSession.create and let go before the next is fetched (on WebGPU once the upload
 * queue has drained), so the page holds one group's bytes at a time beside the runtime's copy.
 * On WebGPU the backbone's residual stream, hidden states and running state stay GPU buffers
 * between runs and sessions; only memory rows and logits are read back.
 */
import { ClefError, EngineError } from '../wire/errors.js';
import { graphFor } from './graph-choice.js';
import { filesWithRole, requireFile, type ManifestFile } from '../core/manifest.js';
import { deviceOf, type DeviceName } from '../core/devices.js';
import { createSession, drainGpuQueue, startRuntime, type RuntimeBuild } from './ort.js';
import { buildFor, defaultWasmBase, missingRuntimeFile, servedBuilds } from './runtime-files.js';
import type { FileLoan, PackageSource } from './package-fetch.js';
import { LEXICON_IN_MEMORY_BELOW_BYTES, openLexicon } from './lexicon-open.js';
import { ClefRunner } from '../core/runner.js';
import type { DecisionSession, SessionOptions } from './session.js';
import type { GroupLoad } from '../wire/telemetry.js';
import { packageChunkTokens } from '../core/defaults.js';
import { runtimeAdapter } from '../core/runtime-types.js';
import { openRunnerGraphs, type OpenedGraphs } from '../core/runner-graphs.js';

function runtimeOptions(threads: number, wasmBuild?: RuntimeBuild) {
  return { wasmBase: defaultWasmBase(), threads, wasmBuild };
}

/** Starts the device's runtime (import, wasm, back end) ahead of the package's download. */
export async function startOrtRuntime(device: DeviceName, threads: number, build?: RuntimeBuild) {
  return (await startRuntime(device, runtimeOptions(threads, build))).start;
}

export async function createOrtDecisionSession(
  pkg: PackageSource,
  device: DeviceName,
  options: SessionOptions,
): Promise<DecisionSession> {
  const m = pkg.manifest;
  const sessionMs: Record<string, number> = {};
  const groupLoads: GroupLoad[] = [];
  const fetchMsBefore = pkg.stats.downloadMs + pkg.stats.verifyMs;
  const gpu = deviceOf(device).gpu;
  const loans: Array<{ release(): void }> = [];
  let graphs: OpenedGraphs | null = null;
  let prepared = 0;
  try {
    const { ort, start } = await startRuntime(
      device,
      runtimeOptions(options.threads, options.wasmBuild),
    );
    const choose = (graph: ManifestFile) =>
      graphFor(m, graph, device, options.preparedGraphs ?? true);
    // The head graphs share their data files: fetched once with both graphs, and let go once
    // both sessions exist.
    let headLoan: FileLoan | null = null;
    const fetchHeads = async () => {
      const files = [requireFile(m, 'head-memory'), requireFile(m, 'head-decide')];
      headLoan = await pkg.fetchFiles([
        ...files.map((f) => choose(f).file),
        ...filesWithRole(m, 'head-data'),
      ]);
      loans.push(headLoan);
      return headLoan;
    };
    // Opened between the heads and the backbone, as the graphs' files are fetched.
    const opened: { lexicon?: Awaited<ReturnType<typeof openLexicon>> } = {};
    graphs = await openRunnerGraphs(m, options.kvDtype, {
      open: async ({ name, file, data, keepOnDevice, group }) => {
        const t0 = performance.now();
        const graph = choose(file);
        const shared = group ? null : (headLoan ?? (await fetchHeads()));
        const loan = shared ?? (await pkg.fetchFiles([graph.file, ...data]));
        if (!shared) loans.push(loan);
        const t1 = performance.now();
        const session = await createSession(
          ort,
          loan.read(graph.file),
          data.map((f) => ({ path: f.path, data: loan.read(f) })),
          device,
          gpu ? keepOnDevice : [],
          graph.optimization,
        );
        if (graph.prepared) prepared++;
        // The runtime has its own copy now (wasm heap, or GPU buffers once the queue drains).
        if (!shared) loan.release();
        if (gpu) await drainGpuQueue(ort);
        const t2 = performance.now();
        sessionMs[name] = t2 - t1;
        if (group) {
          const { index, layers } = group;
          groupLoads.push({
            group: index,
            layers,
            bytes: loan.bytes,
            fetchMs: t1 - t0,
            createMs: t2 - t1,
          });
        }
        return session;
      },
      afterHeads: async () => {
        headLoan?.release();
        opened.lexicon = await openLexicon(
          pkg,
          requireFile(m, 'lexicon'),
          options.lexiconInMemoryBelowBytes ?? LEXICON_IN_MEMORY_BELOW_BYTES,
        );
        if (opened.lexicon.lexiconLoan) loans.push(opened.lexicon.lexiconLoan);
      },
    });
    const { lexicon, lexiconLoan, lexiconSource } = opened.lexicon!;
    const chunkTokens = packageChunkTokens(m);
    const runner = new ClefRunner(
      runtimeAdapter(ort.Tensor),
      graphs.graphs,
      lexicon,
      { chunkTokens, cacheBudgetBytes: options.cacheBudgetBytes },
      m.architecture.headWidth,
    );
    let lost = false;
    if (gpu) {
      const gpuDevice = (await ort.env.webgpu.device) as { lost?: Promise<unknown> } | undefined;
      void gpuDevice?.lost?.then(() => {
        lost = true;
      });
    }
    return {
      device,
      runtime: start,
      sessionMs,
      groupLoads,
      preparedGraphs: prepared,
      lexicon: lexiconSource,
      fetchMs: pkg.stats.downloadMs + pkg.stats.verifyMs - fetchMsBefore,
      run: (encoded, ctx, options) => runner.run(encoded, ctx, options),
      lost: () => lost,
      cacheStats: () => runner.cacheStats(),
      counters: () => runner.counters(),
      dispose: async () => {
        await runner.dispose();
        lexiconLoan?.release();
      },
    };
  } catch (e) {
    for (const loan of loans) loan.release();
    await graphs?.release();
    // A file that failed to arrive or verify is the package's problem, not the device's.
    if (e instanceof ClefError) throw e;
    // So is a runtime nobody serves: say so (and which device needed it) rather than try others.
    const { wasmBase } = runtimeOptions(options.threads, options.wasmBuild);
    const build = buildFor(deviceOf(device), await servedBuilds(wasmBase), options.wasmBuild);
    const missing = build ? await missingRuntimeFile(wasmBase, build, device) : null;
    if (missing) throw missing;
    throw new EngineError(`Could not create the ${device} session: ${(e as Error).message}`, {
      device,
    });
  }
}
