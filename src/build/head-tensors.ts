/**
 * The joint head's tensors, in `JointSchemaHead.state_dict()` order and naming, with what each
 * one is. One list for every writer of a head: the trainer (construct.ts, which sets each kind to
 * a fixed value) and the test fixture (tools/fixture/weights.ts, which draws each kind at random).
 */
import type { JointHeadConfig } from './release.js';

export type HeadTensorKind =
  /** A LayerNorm's weight (torch's default 1). */
  | 'norm-weight'
  /** A LayerNorm's bias. */
  | 'norm-bias'
  /** A Linear's weight, [out, in]. */
  | 'linear'
  /** A Linear's or an attention's bias. */
  | 'bias'
  /** The type embedding, [3, width]. */
  | 'type-embedding'
  /** prior_logit_scale, joint_logit_scale, residual_gate: one number each. */
  | 'scalar';

export interface HeadTensor {
  name: string;
  shape: number[];
  kind: HeadTensorKind;
}

/** The three scalars, in state_dict order. */
const HEAD_SCALARS = ['prior_logit_scale', 'joint_logit_scale', 'residual_gate'] as const;

export function jointHeadTensors(c: JointHeadConfig): HeadTensor[] {
  const { hidden_size: D, width: W, feedforward: F } = c;
  const out: HeadTensor[] = [];
  const add = (name: string, shape: number[], kind: HeadTensorKind): void => {
    out.push({ name, shape, kind });
  };
  const layerNorm = (prefix: string, n: number): void => {
    add(`${prefix}.weight`, [n], 'norm-weight');
    add(`${prefix}.bias`, [n], 'norm-bias');
  };
  const attention = (prefix: string): void => {
    add(`${prefix}.in_proj_weight`, [3 * W, W], 'linear');
    add(`${prefix}.in_proj_bias`, [3 * W], 'bias');
    add(`${prefix}.out_proj.weight`, [W, W], 'linear');
    add(`${prefix}.out_proj.bias`, [W], 'bias');
  };
  const linear = (prefix: string, outputs: number, inputs: number): void => {
    add(`${prefix}.weight`, [outputs, inputs], 'linear');
    add(`${prefix}.bias`, [outputs], 'bias');
  };

  layerNorm('hidden_norm', D);
  for (const p of ['memory', 'question', 'option_question', 'global', 'option_context'])
    add(`${p}_projection.weight`, [W, D], 'linear');
  add('option_lexical_projection.weight', [W, D], 'linear');
  add('type_embedding.weight', [3, W], 'type-embedding');
  for (let i = 0; i < c.routing_layers; i++) {
    const p = `evidence_layers.${i}`;
    layerNorm(`${p}.query_norm`, W);
    layerNorm(`${p}.memory_norm`, W);
    attention(`${p}.attention`);
    layerNorm(`${p}.feedforward_norm`, W);
    linear(`${p}.feedforward.0`, F, W);
    linear(`${p}.feedforward.3`, W, F);
  }
  layerNorm('option_summary_norm', W);
  for (let i = 0; i < c.layers; i++) {
    const p = `layers.${i}`;
    attention(`${p}.self_attn`);
    attention(`${p}.multihead_attn`);
    linear(`${p}.linear1`, F, W);
    linear(`${p}.linear2`, W, F);
    layerNorm(`${p}.norm1`, W);
    layerNorm(`${p}.norm2`, W);
    layerNorm(`${p}.norm3`, W);
  }
  layerNorm('field_norm', W);
  layerNorm('option_norm', W);
  linear('residual_scorer.0', W, 4 * W);
  linear('residual_scorer.3', 1, W);
  for (const name of HEAD_SCALARS) add(name, [], 'scalar');
  return out;
}
