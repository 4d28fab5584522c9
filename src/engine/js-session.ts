/**
 * The js device's decision session: the package's own graphs interpreted in TypeScript
 * (src/graph), driven by the same ClefRunner as onnxruntime's sessions. No runtime is fetched or
 * started: the head graphs, then each backbone group, are fetched, verified, built (weights
 * copied into the interpreter's arrays) and let go, one at a time. A graph with an op, attribute
 * or type the interpreter lacks is refused here, by name, as a DeviceError: `auto` then moves
 * on to the next device, an explicit 'js' fails the load before any request.
 */
import { backboneGroups } from '../core/graph-spec.js';
import { filesWithRole, requireFile, type ManifestFile } from '../core/manifest.js';
import type { DeviceName } from '../core/devices.js';
import { ClefRunner, type BackboneStage, type SessionLike } from '../core/runner.js';
import { packageChunkTokens } from '../core/defaults.js';
import { backboneInputs, guardSession, REQUIRED_INPUTS } from '../core/input-guard.js';
import { GraphSession } from '../graph/session.js';
import { GRAPH_RUNTIME } from '../graph/tensor.js';
import { UnsupportedOpError } from '../graph/program.js';
import { ClefError, DeviceError, PackageError } from '../wire/errors.js';
import type { GroupLoad, RuntimePhases } from '../wire/telemetry.js';
import { LEXICON_IN_MEMORY_BELOW_BYTES, openLexicon } from './lexicon-open.js';
import type { FileLoan, PackageSource } from './package-fetch.js';
import type { DecisionSession, SessionOptions } from './session.js';

/** What info().loadMs.runtime says of the js device: nothing was fetched or started. */
export const JS_RUNTIME: RuntimePhases = Object.freeze({
  build: 'clef-web js',
  importMs: 0,
  initMs: 0,
  instantiateMs: null,
  wasmFetchMs: null,
  wasmTransferBytes: null,
  wasmSource: 'none',
  threads: 1,
  threadsReason: "the js device computes on the engine worker's own thread",
});

/** The manifest file an external data location names, beside its graph. */
function dataFile(files: readonly ManifestFile[], graph: ManifestFile, location: string) {
  const dir = graph.path.includes('/') ? graph.path.slice(0, graph.path.lastIndexOf('/') + 1) : '';
  const file = files.find((f) => f.path === dir + location);
  if (!file) {
    throw new PackageError(`${graph.path}: its external data ${location} is not in the manifest`, {
      file: graph.path,
    });
  }
  return file;
}

async function build(loan: FileLoan, graph: ManifestFile, files: readonly ManifestFile[]) {
  try {
    return await GraphSession.create(
      loan.read(graph),
      (location) => loan.read(dataFile(files, graph, location)),
      graph.path,
    );
  } catch (e) {
    if (e instanceof UnsupportedOpError) {
      throw new DeviceError(e.message, { device: 'js', reason: e.message, ops: [...e.ops] });
    }
    if (e instanceof ClefError) throw e;
    throw new PackageError(`${graph.path}: the js device cannot read it: ${(e as Error).message}`, {
      file: graph.path,
    });
  }
}

export async function createJsDecisionSession(
  pkg: PackageSource,
  device: DeviceName,
  options: SessionOptions,
): Promise<DecisionSession> {
  const m = pkg.manifest;
  const sessionMs: Record<string, number> = {};
  const groupLoads: GroupLoad[] = [];
  const fetchMsBefore = pkg.stats.downloadMs + pkg.stats.verifyMs;
  const sessions: SessionLike[] = [];
  const loans: Array<{ release(): void }> = [];
  try {
    const headData = filesWithRole(m, 'head-data');
    const memoryFile = requireFile(m, 'head-memory');
    const decideFile = requireFile(m, 'head-decide');
    const headLoan = await pkg.fetchFiles([memoryFile, decideFile, ...headData]);
    loans.push(headLoan);
    const timed = async (name: string, loan: FileLoan, graph: ManifestFile) => {
      const t0 = performance.now();
      const session = await build(loan, graph, m.files);
      sessions.push(session);
      sessionMs[name] = performance.now() - t0;
      return session;
    };
    const headMemory = guardSession(
      await timed('headMemory', headLoan, memoryFile),
      memoryFile.path,
      REQUIRED_INPUTS.headMemory,
    );
    const headDecide = guardSession(
      await timed('headDecide', headLoan, decideFile),
      decideFile.path,
      REQUIRED_INPUTS.headDecide,
    );
    headLoan.release();
    const { lexicon, lexiconLoan, lexiconSource } = await openLexicon(
      pkg,
      requireFile(m, 'lexicon'),
      options.lexiconInMemoryBelowBytes ?? LEXICON_IN_MEMORY_BELOW_BYTES,
    );
    if (lexiconLoan) loans.push(lexiconLoan);
    const backbone: BackboneStage[] = [];
    const groups = backboneGroups(m, options.kvDtype ?? 'float32');
    for (const g of groups) {
      const name = groups.length === 1 ? 'backbone' : `backbone.${g.index}`;
      const t0 = performance.now();
      const loan = await pkg.fetchFiles([g.graph, ...g.data]);
      loans.push(loan);
      const t1 = performance.now();
      const session = guardSession(
        await timed(name, loan, g.graph),
        g.graph.path,
        backboneInputs(g),
      );
      loan.release();
      backbone.push({ session, states: g.states, input: g.input, output: g.output });
      const createMs = performance.now() - t1;
      groupLoads.push({
        group: g.index,
        layers: g.layers,
        bytes: loan.bytes,
        fetchMs: t1 - t0,
        createMs,
      });
    }
    const runner = new ClefRunner(
      GRAPH_RUNTIME,
      { backbone, headMemory, headDecide },
      lexicon,
      { chunkTokens: packageChunkTokens(m), cacheBudgetBytes: options.cacheBudgetBytes },
      m.architecture.headWidth,
    );
    return {
      device,
      runtime: JS_RUNTIME,
      sessionMs,
      groupLoads,
      preparedGraphs: 0,
      lexicon: lexiconSource,
      fetchMs: pkg.stats.downloadMs + pkg.stats.verifyMs - fetchMsBefore,
      run: (encoded, ctx, runOptions) => runner.run(encoded, ctx, runOptions),
      lost: () => false,
      cacheStats: () => runner.cacheStats(),
      counters: () => runner.counters(),
      dispose: async () => {
        await runner.dispose();
        lexiconLoan?.release();
      },
    };
  } catch (e) {
    for (const loan of loans) loan.release();
    await Promise.all(sessions.map((s) => s.release()));
    throw e;
  }
}
