/**
 * The model's read-out (model.ts a_k and logit_o): a question's anchor, the head's normalised
 * vector averaged over its instruction tokens plus the last token's, and each option's logit, the
 * prior's scale times the anchor's cosine with the option span's lexical vector (the mean of its
 * tokens' lm_head rows). modelLogits runs the whole function for one example: the bag and the
 * head's positions (model.ts), then the read-out.
 */

import {
  ARENA,
  forwardBag,
  forwardPosition,
  hiddenLayout,
  pairContext,
  priorScale,
  type ModelExample,
  type ModelParams,
  type ModelQuestion,
  type Position,
} from './model.js';
import type { Arena } from './arena.js';
import { scopedBag } from './scope.js';

/** Σ of the rows of an option span's tokens (constant dim + content) over its length. */
function optionVector(
  params: ModelParams,
  tokens: Int32Array,
): { lex: Float64Array; norm: number } {
  const stride = 1 + params.shape.heads * params.shape.headDim;
  const lex = new Float64Array(stride);
  for (const t of tokens) {
    const r = params.rowOf.get(t);
    if (r === undefined) continue;
    for (let j = 0; j < stride; j++)
      lex[j] = (lex[j] as number) + (params.rows[r * stride + j] as number);
  }
  for (let j = 0; j < stride; j++) lex[j] = (lex[j] as number) / tokens.length;
  let sq = 0;
  for (const v of lex) sq += v * v;
  return { lex, norm: Math.sqrt(sq) };
}

export interface Anchor {
  a0: number;
  ac: Float64Array;
  az: number;
  norm: number;
  positions: Position[];
  /** Weight of each position in the anchor (1/|instructions|, and 1 for the last token). */
  shares: number[];
}

export function anchorOf(
  params: ModelParams,
  q: ModelQuestion,
  last: Position,
  bag: Float64Array,
  arena: Arena,
) {
  const width = bag.length;
  const D = hiddenLayout(params.shape).hidden;
  const positions: Position[] = [];
  const shares: number[] = [];
  for (const t of q.instructions) {
    positions.push(forwardPosition(params, t, bag, arena));
    shares.push(1 / q.instructions.length);
  }
  positions.push(last);
  shares.push(1);
  let a0 = 0;
  let az = 0;
  const ac = arena.take(width);
  positions.forEach((p, i) => {
    const s = shares[i] as number;
    a0 += s * p.n0;
    az += s * p.nz;
    for (let j = 0; j < width; j++) ac[j] = (ac[j] as number) + s * (p.nc[j] as number);
  });
  let sq = a0 * a0 + (D - width - 1) * az * az;
  for (const v of ac) sq += v * v;
  return { a0, ac, az, norm: Math.sqrt(sq), positions, shares };
}

/**
 * The option spans' lexical vectors under one setting of the rows: each distinct span once, in a
 * slot, so that a question asked of thousands of examples looks its spans up once.
 */
interface OptionTable {
  slotOf: Map<Int32Array, number>;
  lex: Float64Array[];
  norm: number[];
  /** 1 + the last nonzero content dim of each slot's vector: the loops stop there (the norm dims
   * and the class dims of other questions hold exact zeros). */
  end: number[];
  /** A question's option list → its spans' slots, in option order. */
  slotsOf: WeakMap<readonly Int32Array[], Int32Array>;
}

export function optionTable(): OptionTable {
  return { slotOf: new Map(), lex: [], norm: [], end: [], slotsOf: new WeakMap() };
}

export function optionSlots(
  params: ModelParams,
  table: OptionTable,
  options: readonly Int32Array[],
) {
  let slots = table.slotsOf.get(options);
  if (slots !== undefined) return slots;
  slots = new Int32Array(options.length);
  options.forEach((tokens, i) => {
    let slot = table.slotOf.get(tokens);
    if (slot === undefined) {
      const { lex, norm } = optionVector(params, tokens);
      slot = table.lex.length;
      table.slotOf.set(tokens, slot);
      table.lex.push(lex);
      table.norm.push(norm);
      let end = lex.length;
      while (end > 1 && lex[end - 1] === 0) end--;
      table.end.push(end);
    }
    (slots as Int32Array)[i] = slot;
  });
  table.slotsOf.set(options, slots);
  return slots;
}

/** Each option's cosine with the anchor (0 where either is zero), written into `cosines`. */
export function scoreInto(
  table: OptionTable,
  slots: Int32Array,
  anchor: Anchor,
  cosines: Float64Array,
) {
  const { a0, ac } = anchor;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i] as number;
    const norm = table.norm[slot] as number;
    if (norm === 0 || anchor.norm === 0) {
      cosines[i] = 0;
      continue;
    }
    const lex = table.lex[slot] as Float64Array;
    const end = table.end[slot] as number;
    let dot = (lex[0] as number) * a0;
    for (let j = 1; j < end; j++) dot += (lex[j] as number) * (ac[j - 1] as number);
    cosines[i] = dot / (norm * anchor.norm);
  }
}

/** Each question's logits for one example, in option order. */
export function modelLogits(params: ModelParams, example: ModelExample): Float64Array[] {
  const arena = ARENA;
  arena.reset();
  const bag = params.scope === undefined ? example.bag : scopedBag(params.scope, example.bag);
  const f = forwardBag(params, bag, example.before, pairContext(params), arena);
  const last = forwardPosition(params, example.last, f.bag, arena);
  const scale = priorScale(params);
  const table = optionTable();
  return example.questions.map((q) => {
    const anchor = anchorOf(params, q, last, f.bag, arena);
    const logits = new Float64Array(q.options.length);
    scoreInto(table, optionSlots(params, table, q.options), anchor, logits);
    for (let i = 0; i < logits.length; i++) logits[i] = scale * (logits[i] as number);
    return logits;
  });
}
