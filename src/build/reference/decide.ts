/**
 * The whole reference decision for one request: the project's prompt encoding
 * (src/clef/prompt.ts) with the release's tokenizer, the float64 backbone, the float64 head.
 * What a converted package must reproduce. Loaded releases are cached per directory.
 */
import { readFileSync } from '../host/files.js';
import { join, resolve } from '../host/paths.js';
import { encodeRequest, type EncodedRequest } from '../../clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../../clef/tokenizer.js';
import type { ValidRequest } from '../../protocol/types.js';
import { loadHeadWeights, referenceHeadLogits, type HeadWeights } from './head.js';
import { ReferenceBackbone } from './qwen35.js';

export interface ReferenceModel {
  tokenizer: ClefTokenizer;
  backbone: ReferenceBackbone;
  head: HeadWeights;
}

export interface ReferenceDecision {
  encoded: EncodedRequest;
  /** One array per question (request order), one logit per option (prompt order). */
  logits: Float64Array[];
  /** float32 softmax of each question's logits (the reference softmaxes in float32). */
  probabilities: Float64Array[];
}

const cache = new Map<string, Promise<ReferenceModel>>();

/** Loads (once per directory) the tokenizer, backbone and head of a release. */
export function loadReferenceModel(dir: string): Promise<ReferenceModel> {
  const key = resolve(dir);
  let model = cache.get(key);
  if (model === undefined) {
    model = (async (): Promise<ReferenceModel> => {
      const readJson = (name: string): object =>
        JSON.parse(readFileSync(join(key, name), 'utf8')) as object;
      const tokenizer = loadTokenizerSync(
        readJson('tokenizer.json'),
        readJson('tokenizer_config.json'),
      );
      return { tokenizer, backbone: await ReferenceBackbone.load(key), head: loadHeadWeights(key) };
    })();
    cache.set(key, model);
  }
  return model;
}

/**
 * Encodes `request` and runs backbone + head. `maxTokens` defaults to the release's
 * max_position_embeddings (the tiny fixture's context).
 */
export async function referenceDecide(
  dir: string,
  request: ValidRequest,
  options: { maxTokens?: number } = {},
): Promise<ReferenceDecision> {
  const model = await loadReferenceModel(dir);
  const maxTokens = options.maxTokens ?? model.backbone.config.max_position_embeddings;
  const encoded = encodeRequest(model.tokenizer, request, { maxTokens });
  const hidden = model.backbone.forward(encoded.inputIds);
  const logits = referenceHeadLogits(
    model.head,
    hidden,
    encoded.inputIds,
    encoded.questions,
    (id) => model.backbone.lmHeadRow(id),
  );
  return { encoded, logits, probabilities: logits.map(float32Softmax) };
}

/** softmax in float32 arithmetic, like `logits.float().softmax(-1)` (close, not bit-identical). */
function float32Softmax(logits: Float64Array): Float64Array {
  const x = Float32Array.from(logits);
  let max = -Infinity;
  for (const v of x) max = Math.max(max, v);
  const e = x.map((v) => Math.fround(Math.exp(v - max)));
  let sum = 0;
  for (const v of e) sum = Math.fround(sum + v);
  return Float64Array.from(e, (v) => Math.fround(v / sum));
}
