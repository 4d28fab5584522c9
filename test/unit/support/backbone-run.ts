/**
 * Runs a backbone graph (src/build/convert/backbone.ts) in chunks with its state carried, and
 * compares hidden states: shared by the converter's tests against the float64 reference.
 */
import * as ort from 'onnxruntime-node';
import type { BackboneIo } from '../../../src/build/convert/backbone.js';

/** Deterministic token ids (xorshift), independent of the code under test. */
export function randomIds(count: number, seed: number, vocab: number): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: count }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % vocab;
  });
}

function zeroState(io: BackboneIo, make: typeof ort.Tensor): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const t of io.inputs) {
    if (t.name === 'input_ids') continue;
    const shape = t.shape.map((d) => (typeof d === 'string' ? 0 : d));
    feeds[t.name] = new make('float32', new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
  }
  return feeds;
}

export interface Runner {
  run(
    feeds: Record<string, unknown>,
  ): Promise<Record<string, { data: unknown; dims: readonly number[] }>>;
}

/** Feeds `chunks` one after another, carrying present_* into past_*; concatenated hidden. */
export async function runChunks(
  session: Runner,
  io: BackboneIo,
  chunks: number[][],
  make = ort.Tensor,
) {
  let state: Record<string, unknown> = zeroState(io, make);
  const rows: number[][] = [];
  const hidden = io.outputs[0]?.shape[2] as number;
  for (const ids of chunks) {
    const inputIds = new make('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
    const out = await session.run({ ...state, input_ids: inputIds });
    const h = out.hidden?.data as Float32Array;
    for (let t = 0; t < ids.length; t++)
      rows.push(Array.from(h.subarray(t * hidden, (t + 1) * hidden)));
    const next: Record<string, unknown> = {};
    for (const t of io.inputs) {
      if (t.name !== 'input_ids') next[t.name] = out[`present_${t.name.replace(/^past_/, '')}`];
    }
    state = next;
  }
  return rows;
}

/** max |a − b| and max |want| over all positions. */
export function compare(got: number[][], want: ArrayLike<number>[]) {
  let maxAbs = 0;
  let scale = 0;
  want.forEach((row, t) => {
    for (let j = 0; j < row.length; j++) {
      maxAbs = Math.max(maxAbs, Math.abs((got[t]?.[j] ?? NaN) - (row[j] as number)));
      scale = Math.max(scale, Math.abs(row[j] as number));
    }
  });
  if (Number.isNaN(maxAbs)) maxAbs = Infinity;
  return { maxAbs, scale, relative: maxAbs / Math.max(1, scale) };
}
