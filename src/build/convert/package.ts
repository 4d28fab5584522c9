/**
 * Clef release directory → browser package: the backbone and the joint head as ONNX, the
 * lm_head rows, the tokenizer files and a manifest listing every file with its bytes and
 * SHA-256, the variant's devices and memory needs, and its measured fidelity.
 * Everything streams tensor by tensor: converting the 9B release never holds the whole model.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  tmpdir,
  writeFileSync,
} from '../host/files.js';
import { basename, join, relative } from '../host/paths.js';
import { StepProgress } from '../step-progress.js';
import {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  MANIFEST_VERSION_GROUPED,
  type BackboneGroupEntry,
  type FileRole,
  type ManifestFile,
  type PackageDtype,
  type PackageManifest,
} from '../../core/manifest.js';
import { DEVICE_NAMES, WASM_MEMORY_LIMIT, type DeviceName } from '../../core/devices.js';
import type { TensorSize, WrittenModel } from '../onnx/graph.js';
import { openRelease, type Qwen35TextConfig } from '../release.js';
import { backboneIo, linearConvDim } from './backbone.js';
import {
  buildBackboneGroups,
  estimateBackboneBytes,
  planBackboneGroups,
  type BackboneGrouping,
} from './backbone-groups.js';
import { buildHeadOnnx } from './head.js';
import { buildLexicon, LEXICON_FILE } from './lexicon.js';
import { sha256File } from './sha256-file.js';
import { prepareWasmGraphs, type PackageFileEntry } from './wasm-graphs.js';
import { noRuntime, type ConvertRuntime } from './runtime.js';

export { sha256File };

export interface ConvertOptions {
  dtype: PackageDtype;
  name?: string;
  aliases?: string[];
  description?: string;
  releaseDate?: string;
  revision?: string | null;
  /** The context the runtime allows (default min(max_position_embeddings, 65,536)). */
  contextTokens?: number;
  /** mixed: layers below this run at 8 bits (default min(16, layers/2)). */
  q8Layers?: number;
  /**
   * q8/q4/mixed: 'auto' (default) quantizes the embedding table to 8 bits only above
   * SMALL_EMBEDDING_BYTES as fp32; 'q8' always (a smaller package; the tests' way to run it).
   */
  embedding?: 'auto' | 'q8';
  /** Random requests to measure fidelity on (0: skip). */
  fidelityRequests?: number;
  /** onnxruntime intra-op threads for the fidelity measurement (default: onnxruntime's choice). */
  fidelityThreads?: number;
  /** Backbone tokens per run (written into the manifest for the engine). */
  chunkTokens?: number;
  /**
   * Split the backbone into graphs run in order, so the engine holds one group's bytes at a time
   * (backbone-groups.ts): 'auto' (default: only above 1 GiB of backbone weights, in groups of at
   * most 512 MiB), the most weight bytes per layer group (0: one graph), or layers per group.
   */
  backboneGroups?: BackboneGrouping;
  /**
   * Also write each backbone graph with a float16 KV cache (`*.kv16.onnx`, sharing the data
   * files: a few hundred KB more), which the engine uses where shader-f16 exists (default true).
   */
  kvFloat16?: boolean;
  /**
   * Also write each graph WASM runs optimised once for it (`*.wasm.onnx`, over the same data
   * files; prepare-wasm.ts), so a page skips onnxruntime's optimiser (default true; needs
   * onnxruntime-node). Only packages that run on WASM get them.
   */
  wasmGraphs?: boolean;
  log?: (line: string) => void;
}

const CLEF_CONTEXT_TOKENS = 65_536;

/** Quantized variants keep embedding tables up to this size (as fp32) unquantized. */
const SMALL_EMBEDDING_BYTES = 256 * 1024 * 1024;

/**
 * fp32/fp16 keep their precision. Quantized variants keep a small table in fp32 (it costs
 * little) and gather a large one (Clef-flash: 248,320 × 4,096) from an 8-bit table
 * (`GatherBlockQuantized`), or any table with `requested` 'q8'. Both back ends run either.
 */
function embeddingEncoding(
  text: Qwen35TextConfig,
  dtype: PackageDtype,
  requested: 'auto' | 'q8' = 'auto',
): 'fp32' | 'fp16' | 'q8' {
  if (dtype === 'fp32' || dtype === 'fp16') return dtype;
  if (requested === 'q8') return 'q8';
  return text.vocab_size * text.hidden_size * 4 <= SMALL_EMBEDDING_BYTES ? 'fp32' : 'q8';
}

/** Names the well-known releases by shape; anything else by its directory. */
function defaultName(text: Qwen35TextConfig, releaseDir: string): string {
  if (text.hidden_size === 4096 && text.num_hidden_layers === 32) return 'clef-flash';
  if (text.hidden_size === 5120 && text.num_hidden_layers === 64) return 'clef';
  return (
    basename(releaseDir)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-') || 'clef-model'
  );
}

/**
 * A bound on the runtime's memory at full context: weights, the running state (KV of the full
 * layers, conv + recurrent state of the linear ones), the head's memory rows, and one chunk's
 * attention scores and activations.
 */
export function peakBytesFormula(
  text: Qwen35TextConfig,
  headWidth: number,
  weightBytes: number,
  contextTokens: number,
  chunkTokens: number,
): number {
  const full = text.layer_types.filter((t) => t === 'full_attention').length;
  const linear = text.num_hidden_layers - full;
  const kv = 2 * full * text.num_key_value_heads * text.head_dim * contextTokens * 4;
  const recurrent =
    linear *
    (linearConvDim(text) * (text.linear_conv_kernel_dim - 1) +
      text.linear_num_value_heads * text.linear_key_head_dim * text.linear_value_head_dim) *
    4;
  const memoryRows = headWidth * contextTokens * 4;
  const scores = text.num_attention_heads * chunkTokens * contextTokens * 4;
  const activations = chunkTokens * Math.max(text.intermediate_size, linearConvDim(text)) * 4 * 8;
  return Math.ceil(weightBytes * 1.1 + kv + recurrent + memoryRows + scores + activations);
}

/** The files the runtime uploads to the device: graphs and their external data. */
const GPU_ROLES: ReadonlySet<FileRole> = new Set([
  'backbone',
  'backbone-data',
  'head-memory',
  'head-decide',
  'head-data',
]);

/** The biggest initializer over several graphs (what one device buffer must hold). */
function largestOf(models: WrittenModel[]): TensorSize | null {
  let best: TensorSize | null = null;
  for (const m of models) {
    if (m.largestTensor && (best === null || m.largestTensor.bytes > best.bytes)) {
      best = m.largestTensor;
    }
  }
  return best;
}

/**
 * Converts a release. `runtime` is needed for the WASM-prepared graphs and the fidelity pass
 * (runtime.ts); without it both must be off, which is checked before any work.
 */
export async function convertRelease(
  releaseDir: string,
  outDir: string,
  options: ConvertOptions,
  runtime?: ConvertRuntime,
): Promise<PackageManifest> {
  if (!runtime && (options.wasmGraphs ?? true)) {
    throw noRuntime('Writing WASM-prepared graphs', 'wasmGraphs: false');
  }
  if (!runtime && (options.fidelityRequests ?? 0) > 0) {
    throw noRuntime('Measuring fidelity', 'fidelityRequests: 0');
  }
  const log = options.log ?? (() => undefined);
  const release = openRelease(releaseDir);
  const text = release.text;
  const head = release.headConfig;
  if (!head) throw new Error(`${releaseDir} has no joint_head_config.json: not a Clef release`);
  mkdirSync(outDir, { recursive: true });
  const files: PackageFileEntry[] = [];
  const add = (absolute: string, role: FileRole, group?: number) =>
    files.push({
      path: relative(outDir, absolute).split('\\').join('/'),
      role,
      ...(group !== undefined ? { group } : {}),
    });
  const chunkTokens = options.chunkTokens ?? 256;
  try {
    log(`backbone (${options.dtype}) ...`);
    const embedding = embeddingEncoding(text, options.dtype, options.embedding);
    const backboneOptions = {
      dtype: options.dtype,
      embedding,
      kvFloat16: options.kvFloat16 ?? true,
      ...(options.q8Layers !== undefined ? { q8Layers: options.q8Layers } : {}),
    };
    const plan = planBackboneGroups(
      text,
      estimateBackboneBytes(release, backboneOptions),
      options.backboneGroups,
    );
    const grouped = plan.length > 1;
    if (grouped) log(`backbone in ${plan.length} groups (the embedding, then layer groups)`);
    const backbone = buildBackboneGroups(release, outDir, backboneOptions, plan);
    backbone.groups.forEach((g, k) => {
      add(g.onnxPath, 'backbone', grouped ? k : undefined);
      for (const v of g.variants) add(v.onnxPath, 'backbone-kv16', grouped ? k : undefined);
      for (const p of g.dataPaths) add(p, 'backbone-data', grouped ? k : undefined);
    });
    const backboneGroups: BackboneGroupEntry[] = backbone.groups.map((g) => ({
      embed: g.part.embed,
      layers: [g.part.layers[0], g.part.layers[1]],
      finalNorm: g.part.finalNorm,
      inputs: g.io.inputs,
      outputs: g.io.outputs,
    }));

    log('joint head ...');
    const heads = buildHeadOnnx(releaseDir, outDir, {
      dtype: options.dtype === 'fp32' ? 'fp32' : 'fp16',
    });
    add(heads.memory.onnxPath, 'head-memory');
    add(heads.decide.onnxPath, 'head-decide');
    for (const p of [...heads.memory.dataPaths, ...heads.decide.dataPaths]) {
      add(join(outDir, basename(p)), 'head-data');
    }

    log('lm_head rows ...');
    // The fp32 variant is the exactness baseline: its rows stay fp32; the rest ship int8 rows.
    const lexicon = buildLexicon(releaseDir, join(outDir, LEXICON_FILE), {
      dtype: options.dtype === 'fp32' ? 'fp32' : 'int8',
    });
    add(lexicon.path, 'lexicon');

    for (const [name, role] of [
      ['tokenizer.json', 'tokenizer'],
      ['tokenizer_config.json', 'tokenizer-config'],
    ] as const) {
      copyFileSync(join(releaseDir, name), join(outDir, name));
      add(join(outDir, name), role);
    }
    const config = { config: release.config, joint_head_config: head };
    writeFileSync(join(outDir, 'clef_config.json'), JSON.stringify(config, null, 2));
    add(join(outDir, 'clef_config.json'), 'config');

    // Every variant runs on both (the engine's WASM build, onnxruntime-web/wasm, has the 8-bit
    // embedding's GatherBlockQuantized kernel); one too big for WASM's 4 GiB is refused there by
    // its peakBytes, before any download.
    const devices: DeviceName[] = [...DEVICE_NAMES];
    const contextTokens =
      options.contextTokens ?? Math.min(text.max_position_embeddings, CLEF_CONTEXT_TOKENS);
    // A kv16 or WASM-prepared graph replaces another when used: counted once, as that one.
    const notWeights = ['tokenizer', 'tokenizer-config', 'config', 'backbone-kv16', 'wasm-graph'];
    const weightsOf = (list: Array<{ role: FileRole; bytes: number }>) =>
      list.filter((f) => !notWeights.includes(f.role)).reduce((n, f) => n + f.bytes, 0);
    const sized = files.map((f) => ({ ...f, bytes: statSync(join(outDir, f.path)).size }));
    const peakBytes = peakBytesFormula(
      text,
      head.width,
      weightsOf(sized),
      contextTokens,
      chunkTokens,
    );
    if (options.wasmGraphs ?? true) {
      if (peakBytes > WASM_MEMORY_LIMIT) {
        log('no WASM-prepared graphs: the package needs more memory than WASM addresses');
      } else {
        // The runtime is there: checked at the start.
        await prepareWasmGraphs(outDir, files, log, runtime as ConvertRuntime);
      }
    }

    log('hashing ...');
    const listed: ManifestFile[] = files.map((f) => {
      const absolute = join(outDir, f.path);
      return { ...f, bytes: statSync(absolute).size, sha256: sha256File(absolute) };
    });
    const weightBytes = weightsOf(listed);
    const gpuBytes = listed.filter((f) => GPU_ROLES.has(f.role)).reduce((n, f) => n + f.bytes, 0);
    const largestTensor = largestOf([...backbone.groups, heads.memory, heads.decide]);
    // fp16 graphs compute in half precision: on WebGPU that needs shader-f16 (CPU runs them).
    const needsShaderF16 = options.dtype === 'fp16';
    const name = options.name ?? defaultName(text, releaseDir);
    const manifest: PackageManifest = {
      format: MANIFEST_FORMAT,
      formatVersion: grouped ? MANIFEST_VERSION_GROUPED : MANIFEST_VERSION,
      model: {
        name,
        aliases: options.aliases ?? [],
        description: options.description ?? `${name} (Clef release layout), converted by clef-web`,
        releaseDate: options.releaseDate ?? '2026-10-01',
        sourceRevision: options.revision ?? null,
      },
      architecture: {
        modelType: String(release.config.model_type ?? 'qwen3_5'),
        vocabSize: text.vocab_size,
        hiddenSize: text.hidden_size,
        numLayers: text.num_hidden_layers,
        layerTypes: text.layer_types,
        headWidth: head.width,
      },
      contextTokens,
      variant: {
        dtype: options.dtype,
        devices,
        needsShaderF16,
        weightBytes,
        peakBytes,
        ...(largestTensor ? { largestTensor } : {}),
        gpuBytes,
      },
      graphs: {
        // The whole backbone's I/O (a split backbone: the union over its groups).
        backbone: backboneIo(text),
        ...(grouped ? { backboneGroups } : {}),
        layerEncodings: backbone.layerEncodings,
        chunkTokens,
        lexicon: { dtype: lexicon.dtype },
      },
      files: listed,
      fidelity: null,
    };
    writeManifest(outDir, manifest);

    const requests = options.fidelityRequests ?? 0;
    if (requests > 0) {
      const { measureFidelity } = await import('../verify/fidelity.js');
      const open = (runtime as ConvertRuntime).openPackage;
      const threads = options.fidelityThreads;
      // A line every few seconds with the count and an estimate: the step can take minutes.
      const progress = () => {
        const steps = new StepProgress(
          { write: (text: string) => log(`fidelity: ${text.trimEnd()}`) },
          { unit: 'requests', total: requests },
        );
        return (done: number) => steps.update(done);
      };
      const fidelityOptions = () => ({
        requests,
        onProgress: progress(),
        ...(threads !== undefined ? { threads } : {}),
      });
      if (options.dtype === 'fp32') {
        log(`fidelity: ${requests} requests against the float64 reference ...`);
        manifest.fidelity = summarize(
          'reference',
          await measureFidelity(outDir, { release: releaseDir }, fidelityOptions(), open),
        );
      } else {
        const baseline = mkdtempSync(join(tmpdir(), 'clef-fp32-'));
        try {
          log('fidelity: converting the fp32 baseline ...');
          await convertRelease(releaseDir, baseline, {
            ...options,
            dtype: 'fp32',
            fidelityRequests: 0,
            wasmGraphs: false,
            log: () => undefined,
          });
          log(`fidelity: ${requests} requests against fp32 ...`);
          manifest.fidelity = summarize(
            'fp32',
            await measureFidelity(outDir, { package: baseline }, fidelityOptions(), open),
          );
        } finally {
          rmSync(baseline, { recursive: true, force: true });
        }
      }
      writeManifest(outDir, manifest);
    }
    return manifest;
  } finally {
    release.close();
  }
}

function summarize(
  against: 'reference' | 'fp32',
  f: { requests: number; meanAbsDp: number; maxAbsDp: number; sameAnswers: number },
): NonNullable<PackageManifest['fidelity']> {
  return {
    against,
    requests: f.requests,
    meanAbsDp: f.meanAbsDp,
    maxAbsDp: f.maxAbsDp,
    sameAnswers: f.sameAnswers,
  };
}

function writeManifest(outDir: string, manifest: PackageManifest): void {
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}
