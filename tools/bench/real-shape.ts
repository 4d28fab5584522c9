/**
 * `npx tsx tools/bench/real-shape.ts [--out bench/work] [--dtypes q4,q8] [--layers 2|32] [--force]`
 *
 * A random-weight release with Clef-flash's real layer shapes but only two layers (one Gated
 * DeltaNet, one full attention), the real vocabulary (248,320, untied lm_head) and the real
 * joint head (width 1,024), converted to q4 and q8 packages. Per-layer and per-token costs are
 * the real model's; its answers mean nothing. Written under bench/work/ (gitignored), never
 * committed: the release is ~5.4 GB of bf16, each package ~2.8 GB.
 *
 * `--layers 32` writes the full-depth model instead (`full-release`, `full-q4`, ...): all 32
 * layers in Clef-flash's pattern (three linear attention to one full attention), ~18 GB of bf16,
 * a q4 package of ~5 GB. Any other count follows the same pattern.
 *
 * Tensors stream to disk a few million values at a time (the 248,320 × 4,096 tables would be
 * 4 GB each as float32); the tokenizer is the tiny fixture's (its ids all lie below the vocab).
 */
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PackageManifest } from '../../src/core/manifest.js';
import { openRelease, type JointHeadConfig } from '../../src/build/release.js';
import { buildBackboneOnnx } from '../../src/build/convert/backbone.js';
import { peakBytesFormula, sha256File } from '../../src/build/convert/package.js';
import { convertRelease } from '../../src/node/build-runtime.js';
import { tinyReleaseConfig, type TextShape } from '../fixture/config.js';
import { buildTinyTokenizer } from '../fixture/tokenizer.js';
import { backboneTensorStream, headTensorStream, type StreamedTensor } from '../fixture/weights.js';

export const REAL_VOCAB = 248_320;

/** Clef-flash's text shapes (clef-recipe.md §1) with two layers instead of 32. */
export const REAL_SHAPE_TEXT: TextShape = {
  hidden_size: 4096,
  intermediate_size: 12288,
  num_hidden_layers: 2,
  layer_types: ['linear_attention', 'full_attention'],
  num_attention_heads: 16,
  num_key_value_heads: 4,
  head_dim: 256,
  partial_rotary_factor: 0.25,
  rope_theta: 10_000_000,
  mrope_section: [11, 11, 10],
  linear_num_key_heads: 16,
  linear_num_value_heads: 32,
  linear_key_head_dim: 128,
  linear_value_head_dim: 128,
  linear_conv_kernel_dim: 4,
  rms_norm_eps: 1e-6,
  max_position_embeddings: 262_144,
};

/** Clef-flash's text shapes at `layers` layers: the real 3 linear : 1 full pattern (2 = the slice). */
export function realShapeText(layers: number): TextShape {
  if (layers === 2) return REAL_SHAPE_TEXT;
  const layer_types = Array.from({ length: layers }, (_, i) =>
    i % 4 === 3 ? ('full_attention' as const) : ('linear_attention' as const),
  );
  if (!layer_types.includes('full_attention')) throw new Error('--layers: at least 4');
  return { ...REAL_SHAPE_TEXT, num_hidden_layers: layers, layer_types };
}

/** Directory names under the bench root: `real-*` for the two-layer slice, `full-*` for 32. */
export function realShapePrefix(layers: number): string {
  return layers === 2 ? 'real' : layers === 32 ? 'full' : `layers${layers}`;
}

/** Clef-flash's joint head (about 122M parameters). */
export const REAL_SHAPE_HEAD: JointHeadConfig = {
  hidden_size: 4096,
  width: 1024,
  routing_layers: 2,
  layers: 4,
  heads: 16,
  feedforward: 4096,
  dropout: 0,
};

/**
 * The context the packages allow: room for a 16,384-token state plus its schema, and small
 * enough that the manifest's peak-memory bound stays under the WASM back end's 4 GiB.
 */
export const REAL_SHAPE_CONTEXT = 20_480;

const SEED = 7;
const CHUNK = 1 << 22;

function bytesOf(t: StreamedTensor): number {
  return t.shape.reduce((a, b) => a * b, 1) * (t.dtype === 'F32' ? 4 : 2);
}

/** float32 → bf16, round to nearest even (no NaNs in random weights). */
function toBf16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i] as number;
    out[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return new Uint8Array(out.buffer);
}

/** A safetensors file written tensor by tensor, each in pieces (header first: sizes are known). */
function writeStreamed(path: string, tensors: StreamedTensor[]): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = {
      dtype: t.dtype,
      shape: t.shape,
      data_offsets: [offset, offset + bytesOf(t)],
    };
    offset += bytesOf(t);
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, length);
    writeSync(fd, Buffer.from(json, 'utf8'));
    for (const t of tensors) {
      for (const piece of t.chunks(CHUNK)) {
        const bytes =
          t.dtype === 'F32'
            ? new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength)
            : toBf16(piece);
        for (let done = 0; done < bytes.length;) {
          done += writeSync(fd, bytes, done, bytes.length - done);
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2) + '\n');
}

/** Writes the two-layer real-shape release into `dir` (shards of at most ~2.1 GB). */
export function writeRealShapeRelease(
  dir: string,
  log: (s: string) => void = () => {},
  text: TextShape = REAL_SHAPE_TEXT,
): void {
  mkdirSync(dir, { recursive: true });
  const { tokenizerJson, tokenizerConfig } = buildTinyTokenizer();
  writeJson(join(dir, 'config.json'), tinyReleaseConfig(REAL_VOCAB, {}, 'bfloat16', text));
  const tensors = backboneTensorStream(REAL_VOCAB, SEED, 'bf16', text);
  const shards: StreamedTensor[][] = [[]];
  let shardBytes = 0;
  for (const t of tensors) {
    if (shardBytes > 0 && shardBytes + bytesOf(t) > 2.1e9) {
      shards.push([]);
      shardBytes = 0;
    }
    shards[shards.length - 1]!.push(t);
    shardBytes += bytesOf(t);
  }
  const weightMap: Record<string, string> = {};
  shards.forEach((shard, i) => {
    const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
    log(`  ${file}: ${shard.length} tensors`);
    writeStreamed(join(dir, file), shard);
    for (const t of shard) weightMap[t.name] = file;
  });
  writeJson(join(dir, 'model.safetensors.index.json'), {
    metadata: { total_size: tensors.reduce((n, t) => n + bytesOf(t), 0) },
    weight_map: weightMap,
  });
  log('  joint_head.safetensors');
  writeStreamed(join(dir, 'joint_head.safetensors'), headTensorStream(REAL_SHAPE_HEAD, SEED));
  writeJson(join(dir, 'joint_head_config.json'), REAL_SHAPE_HEAD);
  writeJson(join(dir, 'tokenizer.json'), tokenizerJson);
  writeJson(join(dir, 'tokenizer_config.json'), tokenizerConfig);
  writeFileSync(join(dir, 'DONE'), 'complete\n');
}

/** Package directory of a real-shape variant under `root`. */
export function realShapePackageDir(root: string, dtype: 'q4' | 'q8', layers = 2): string {
  return join(root, `${realShapePrefix(layers)}-${dtype}`);
}

export async function buildRealShape(
  root: string,
  dtypes: Array<'q4' | 'q8'>,
  force = false,
  log: (s: string) => void = console.log,
  layers = 2,
): Promise<void> {
  const prefix = realShapePrefix(layers);
  const release = join(root, `${prefix}-release`);
  if (force || !existsSync(join(release, 'DONE'))) {
    rmSync(release, { recursive: true, force: true });
    const t0 = performance.now();
    log(`writing the ${layers}-layer real-shape release to ${release} ...`);
    writeRealShapeRelease(release, log, realShapeText(layers));
    log(`  done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  for (const dtype of dtypes) {
    const out = realShapePackageDir(root, dtype, layers);
    if (!force && existsSync(join(out, 'manifest.json'))) continue;
    rmSync(out, { recursive: true, force: true });
    const t0 = performance.now();
    log(`converting ${dtype} to ${out} ...`);
    await convertRelease(release, out, {
      dtype,
      name: layers === 2 ? 'clef-real-shape' : `clef-real-shape-${layers}`,
      description: `${layers} random-weight layers at Clef-flash shapes: timings only, no meaning`,
      contextTokens: REAL_SHAPE_CONTEXT,
      fidelityRequests: 0,
      log: (s) => log(`  ${s}`),
    });
    log(`  done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
}

/**
 * The q4 package with an fp16 embedding table (plain Gather + Cast) instead of the default q8
 * GatherBlockQuantized: onnxruntime-web's WebGPU build (the engine's import) has no CPU kernel
 * for GatherBlockQuantized, so the WASM back end cannot load the q4/q8 packages as converted.
 * Context 4,096 keeps the manifest's peak-memory bound under the WASM limit. WASM only (fp16
 * gathers need shader-f16 on WebGPU). Shares the head, lexicon and tokenizer files by hard link.
 */
export function buildWasmVariant(root: string, log: (s: string) => void = console.log): string {
  const base = realShapePackageDir(root, 'q4');
  const out = join(root, 'real-q4-f16emb');
  if (existsSync(join(out, 'manifest.json'))) return out;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')) as PackageManifest;
  log(`building ${out} (q4 layers, fp16 embedding) ...`);
  const release = openRelease(join(root, 'real-release'));
  const files: PackageManifest['files'] = [];
  try {
    const built = buildBackboneOnnx(release, join(out, 'backbone.onnx'), {
      dtype: 'q4',
      embedding: 'fp16',
    });
    files.push({ path: 'backbone.onnx', role: 'backbone', bytes: 0, sha256: '' });
    for (const p of built.dataPaths) {
      files.push({
        path: p.split('/').pop() as string,
        role: 'backbone-data',
        bytes: 0,
        sha256: '',
      });
    }
    for (const f of manifest.files) {
      if (f.role === 'backbone' || f.role === 'backbone-data') continue;
      linkSync(join(base, f.path), join(out, f.path));
      files.push({ ...f });
    }
    for (const f of files) {
      f.bytes = statSync(join(out, f.path)).size;
      f.sha256 = f.sha256 || sha256File(join(out, f.path));
    }
    const weightBytes = files
      .filter((f) => !['tokenizer', 'tokenizer-config', 'config'].includes(f.role))
      .reduce((n, f) => n + f.bytes, 0);
    const context = 4096;
    const variant: PackageManifest = {
      ...manifest,
      contextTokens: context,
      variant: {
        ...manifest.variant,
        devices: ['wasm'],
        weightBytes,
        peakBytes: peakBytesFormula(release.text, REAL_SHAPE_HEAD.width, weightBytes, context, 256),
      },
      files,
    };
    writeJson(join(out, 'manifest.json'), variant);
  } finally {
    release.close();
  }
  return out;
}

async function main(argv: string[]): Promise<void> {
  let root = 'bench/work';
  let dtypes: Array<'q4' | 'q8'> = ['q4', 'q8'];
  let force = false;
  let layers = 2;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') root = argv[++i] ?? root;
    else if (a === '--layers') layers = Number(argv[++i]);
    else if (a === '--dtypes')
      dtypes = (argv[++i] ?? '').split(',').filter(Boolean) as Array<'q4' | 'q8'>;
    else if (a === '--force') force = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(layers) || layers < 2) throw new Error('--layers: an integer ≥ 2');
  await buildRealShape(resolve(root), dtypes, force, console.log, layers);
  // The fp16-embedding WASM variant exists for the two-layer slice only (the full depth is
  // over the WASM back end's 4 GiB).
  if (layers === 2 && dtypes.includes('q4')) buildWasmVariant(resolve(root));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
