/**
 * A package's WASM-prepared graphs (prepare-wasm.ts): written by `convert`, or added to a package
 * converted without them by `clef-web prepare <package-dir>` (the manifest gains their entries,
 * written last through a rename, so an interrupted run leaves the old package valid).
 */
import { readFileSync, renameSync, statSync, writeFileSync } from '../host/files.js';
import { join } from '../host/paths.js';
import type { FileRole, ManifestFile, PackageManifest } from '../../core/manifest.js';
import { parseManifest } from '../../core/manifest.js';
import { StepProgress } from '../step-progress.js';
import { prepareGraphForWasm, preparedPath } from './prepare-wasm.js';
import type { ConvertRuntime } from './runtime.js';
import { sha256File } from './sha256-file.js';

export type PackageFileEntry = { path: string; role: FileRole; group?: number; replaces?: string };

/** The graphs WASM runs by default (float32 KV: kv16 graphs are for shader-f16 GPUs). */
const PREPARED_ROLES: readonly FileRole[] = ['backbone', 'head-memory', 'head-decide'];

/** Writes the twin of each graph of `files` that has none yet, and lists it in `files`. */
export async function prepareWasmGraphs(
  dir: string,
  files: PackageFileEntry[],
  log: (line: string) => void,
  runtime: Pick<ConvertRuntime, 'loadOrt' | 'ortVersion'>,
  /** What needs onnxruntime-node, and how to do without it, for the missing-dependency error. */
  why = 'Writing WASM-prepared graphs (--wasm-graphs off skips them)',
): Promise<number> {
  const ort = await runtime.loadOrt(why);
  // The optimiser's output is read by the engine's onnxruntime-web, which is this version: a
  // graph fused by another version may use ops or attributes that one does not know.
  const version = ort.env.versions?.node;
  const want = runtime.ortVersion;
  if (version !== want) {
    log(
      `no WASM-prepared graphs: onnxruntime-node ${version ?? '?'} is installed, and the engine's onnxruntime-web is ${want} (npm install onnxruntime-node@${want})`,
    );
    return 0;
  }
  const twinned = new Set(files.map((f) => f.replaces));
  const graphs = files.filter((f) => PREPARED_ROLES.includes(f.role) && !twinned.has(f.path));
  let written = 0;
  // Each graph is a run of onnxruntime's optimiser: a line per graph, with what is left.
  const steps = new StepProgress(
    { write: (text: string) => log(`WASM-prepared graphs: ${text.trimEnd()}`) },
    { unit: 'graphs', total: graphs.length, plainIntervalMs: 0 },
  );
  for (const [i, g] of graphs.entries()) {
    const source = join(dir, g.path);
    const result = await prepareGraphForWasm(ort, source, preparedPath(source));
    if (!result.prepared) {
      log(`${g.path}: no WASM-prepared graph (${result.reason}); WASM optimises it at load`);
      steps.update(i + 1);
      continue;
    }
    files.push({ path: preparedPath(g.path), role: 'wasm-graph', replaces: g.path });
    written++;
    steps.update(i + 1);
  }
  log(`WASM-prepared graphs: ${written} of ${graphs.length}`);
  return written;
}

/** Adds the missing twins to a converted package in place; returns how many it wrote. */
export async function addWasmGraphs(
  dir: string,
  log: (line: string) => void,
  runtime: Pick<ConvertRuntime, 'loadOrt' | 'ortVersion'>,
): Promise<number> {
  const manifestPath = join(dir, 'manifest.json');
  let text: string;
  try {
    text = readFileSync(manifestPath, 'utf8');
  } catch {
    throw new Error(
      `${dir}: no package there (no manifest.json; a folder made by clef-web convert)`,
    );
  }
  const manifest = parseManifest(JSON.parse(text));
  if (!manifest.variant.devices.includes('wasm')) {
    throw new Error(`${dir} runs on ${manifest.variant.devices.join(', ')} only, not on WASM`);
  }
  const entries: PackageFileEntry[] = manifest.files.map((f) => ({ ...f }));
  const before = entries.length;
  const written = await prepareWasmGraphs(
    dir,
    entries,
    log,
    runtime,
    'Writing WASM-prepared graphs',
  );
  const added: ManifestFile[] = entries.slice(before).map((f) => {
    const path = join(dir, f.path);
    return { ...f, bytes: statSync(path).size, sha256: sha256File(path) };
  });
  const next: PackageManifest = { ...manifest, files: [...manifest.files, ...added] };
  parseManifest(next);
  const temporary = `${manifestPath}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temporary, manifestPath);
  return written;
}
