/**
 * Clef release directories (docs/clef-recipe.md §1), read lazily through host/'s files (Node's,
 * or the train worker's in memory): a release holds `config.json`, the backbone as
 * `model.safetensors` or as shards listed by `model.safetensors.index.json`, and the joint head
 * (`joint_head.safetensors`, `joint_head_config.json`). `openRelease` opens all of it, a tensor
 * at a time.
 */
import { existsSync, readFileSync } from './host/files.js';
import { join } from './host/paths.js';
import { SafetensorsFile, type TensorInfo } from './safetensors.js';

/**
 * Qwen3.5's text_config, with the real field names. Resolved: `layer_types` is always present,
 * `rope_theta` and `partial_rotary_factor` are read from `rope_parameters` (current configs) or
 * from the top level (older ones). `raw` is the text_config object as written.
 */
export interface Qwen35TextConfig {
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  layer_types: Array<'linear_attention' | 'full_attention'>;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  partial_rotary_factor: number;
  rope_theta: number;
  /** `mrope_section`: for text-only positions (all three equal) M-RoPE is plain 1-D RoPE. */
  mrope_section: number[];
  rms_norm_eps: number;
  hidden_act: string;
  linear_num_key_heads: number;
  linear_num_value_heads: number;
  linear_key_head_dim: number;
  linear_value_head_dim: number;
  linear_conv_kernel_dim: number;
  max_position_embeddings: number;
  tie_word_embeddings: boolean;
  attention_bias: boolean;
  raw: Record<string, unknown>;
}

/** The joint head's `joint_head_config.json`: exactly these keys. */
export interface JointHeadConfig {
  hidden_size: number;
  width: number;
  routing_layers: number;
  layers: number;
  heads: number;
  feedforward: number;
  dropout: number;
}

/** Parses config.json (a `qwen3_5` config with `text_config`, or a bare text config). */
function parseQwen35TextConfig(config: Record<string, unknown>): Qwen35TextConfig {
  const text = (config.text_config ?? config) as Record<string, unknown>;
  const rope = (text.rope_parameters ?? text.rope_scaling ?? {}) as Record<string, unknown>;
  const ropeType = rope.rope_type ?? rope.type ?? 'default';
  if (ropeType !== 'default') {
    throw new Error(`rope_type ${String(ropeType)} is not supported (only "default")`);
  }
  const num = (key: string, fallback?: number): number => {
    const v = text[key] ?? fallback;
    if (typeof v !== 'number') throw new Error(`config: text_config.${key} missing`);
    return v;
  };
  const layers = num('num_hidden_layers');
  const interval = num('full_attention_interval', 4);
  const layerTypes =
    (text.layer_types as Qwen35TextConfig['layer_types'] | undefined) ??
    Array.from({ length: layers }, (_, i) =>
      (i + 1) % interval === 0 ? 'full_attention' : 'linear_attention',
    );
  if (layerTypes.length !== layers) throw new Error('config: layer_types length != layers');
  const heads = num('num_attention_heads');
  const hidden = num('hidden_size');
  const tie = text.tie_word_embeddings ?? config.tie_word_embeddings ?? false;
  return {
    vocab_size: num('vocab_size'),
    hidden_size: hidden,
    intermediate_size: num('intermediate_size'),
    num_hidden_layers: layers,
    layer_types: layerTypes,
    num_attention_heads: heads,
    num_key_value_heads: num('num_key_value_heads'),
    head_dim: num('head_dim', hidden / heads),
    partial_rotary_factor: Number(rope.partial_rotary_factor ?? text.partial_rotary_factor ?? 0.25),
    rope_theta: Number(rope.rope_theta ?? text.rope_theta ?? 10_000_000),
    mrope_section: (rope.mrope_section as number[] | undefined) ?? [11, 11, 10],
    rms_norm_eps: num('rms_norm_eps', 1e-6),
    hidden_act: String(text.hidden_act ?? 'silu'),
    linear_num_key_heads: num('linear_num_key_heads'),
    linear_num_value_heads: num('linear_num_value_heads'),
    linear_key_head_dim: num('linear_key_head_dim'),
    linear_value_head_dim: num('linear_value_head_dim'),
    linear_conv_kernel_dim: num('linear_conv_kernel_dim', 4),
    max_position_embeddings: num('max_position_embeddings'),
    tie_word_embeddings: Boolean(tie),
    attention_bias: Boolean(text.attention_bias ?? false),
    raw: text,
  };
}

/** Prefix of the text model's tensors in a `Qwen3_5ForConditionalGeneration` checkpoint. */
export const TEXT_PREFIX = 'model.language_model.';
/** `model.language_model.layers.{i}.{suffix}` */
export function layerTensorName(layer: number, suffix: string): string {
  return `${TEXT_PREFIX}layers.${layer}.${suffix}`;
}

/** An opened release directory: backbone shards, config and (when present) the joint head. */
export interface Release {
  dir: string;
  /** config.json as written. */
  config: Record<string, unknown>;
  text: Qwen35TextConfig;
  /** joint_head_config.json, or null when the directory has none. */
  headConfig: JointHeadConfig | null;
  /** joint_head.safetensors, or null. Its tensors are not part of names()/read(). */
  head: SafetensorsFile | null;
  /** Backbone tensor names (all shards; vision tower included when the release has one). */
  names(): string[];
  has(name: string): boolean;
  info(name: string): TensorInfo;
  readRaw(name: string): Uint8Array;
  read(name: string): Float32Array;
  read64(name: string): Float64Array;
  readRows(name: string, start: number, count: number): Float32Array;
  /** Closes every file handle. */
  close(): void;
}

/** Opens a release directory (sharded via model.safetensors.index.json, or model.safetensors). */
export function openRelease(dir: string): Release {
  const config = readJson(join(dir, 'config.json'));
  const indexPath = join(dir, 'model.safetensors.index.json');
  let weightMap: Record<string, string>;
  if (existsSync(indexPath)) {
    weightMap = (readJson(indexPath).weight_map ?? {}) as Record<string, string>;
  } else {
    weightMap = {};
    const single = SafetensorsFile.open(join(dir, 'model.safetensors'));
    for (const name of single.names()) weightMap[name] = 'model.safetensors';
    single.close();
  }
  const shards = new Map<string, SafetensorsFile>();
  const fileOf = (name: string): SafetensorsFile => {
    const shard = weightMap[name];
    if (shard === undefined) throw new Error(`${dir}: no tensor ${name}`);
    let file = shards.get(shard);
    if (file === undefined) {
      file = SafetensorsFile.open(join(dir, shard));
      shards.set(shard, file);
    }
    return file;
  };
  const headConfigPath = join(dir, 'joint_head_config.json');
  const headPath = join(dir, 'joint_head.safetensors');
  const head = existsSync(headPath) ? SafetensorsFile.open(headPath) : null;
  return {
    dir,
    config,
    text: parseQwen35TextConfig(config),
    headConfig: existsSync(headConfigPath)
      ? (readJson(headConfigPath) as unknown as JointHeadConfig)
      : null,
    head,
    names: () => Object.keys(weightMap),
    has: (name) => name in weightMap,
    info: (name) => fileOf(name).info(name),
    readRaw: (name) => fileOf(name).readRaw(name),
    read: (name) => fileOf(name).read(name),
    read64: (name) => fileOf(name).read64(name),
    readRows: (name, start, count) => fileOf(name).readRows(name, start, count),
    close: () => {
      for (const file of shards.values()) file.close();
      shards.clear();
      head?.close();
    },
  };
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}
