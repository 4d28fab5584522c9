/**
 * Numpy-style broadcasting as ONNX defines it, planned once per call: the inputs' dims aligned to
 * the output's, then adjacent axes merged wherever every input either runs along them or stays
 * put, so most calls become one or two loops (same shape: one loop; a row vector added to a
 * matrix: an outer loop of rows over an inner one).
 */

export interface BroadcastPlan {
  dims: number[];
  size: number;
  /** Merged axes, outermost first (at least one). */
  shape: number[];
  /** Per input, its stride along each merged axis (0 where it is broadcast). */
  strides: number[][];
}

export function broadcastDims(all: ReadonlyArray<readonly number[]>): number[] {
  const rank = Math.max(...all.map((d) => d.length));
  const out = new Array<number>(rank).fill(1);
  for (const dims of all) {
    const shift = rank - dims.length;
    dims.forEach((d, i) => {
      const o = out[i + shift]!;
      if (d === o || d === 1) return;
      if (o !== 1) {
        throw new Error(`cannot broadcast dims [${all.map((x) => x.join(', ')).join('] and [')}]`);
      }
      out[i + shift] = d;
    });
  }
  return out;
}

export function planBroadcast(all: ReadonlyArray<readonly number[]>): BroadcastPlan {
  const dims = broadcastDims(all);
  const rank = dims.length;
  const size = dims.reduce((a, b) => a * b, 1);
  // Each input's stride along each output axis (0: broadcast).
  const raw = all.map((d) => {
    const shift = rank - d.length;
    const s = new Array<number>(rank).fill(0);
    let acc = 1;
    for (let i = d.length - 1; i >= 0; i--) {
      s[i + shift] = d[i] === 1 ? 0 : acc;
      acc *= d[i]!;
    }
    return s;
  });
  const shape: number[] = [];
  const strides: number[][] = all.map(() => []);
  for (let axis = 0; axis < rank; axis++) {
    const n = dims[axis]!;
    if (n === 1) continue;
    const last = shape.length - 1;
    // Merge with the previous kept axis when every input is contiguous across the two.
    const mergeable =
      last >= 0 &&
      raw.every((s, k) => {
        const prev = strides[k]![last]!;
        const cur = s[axis]!;
        return prev === cur * n && (cur !== 0 || prev === 0);
      });
    if (mergeable) {
      shape[last] = shape[last]! * n;
      raw.forEach((s, k) => (strides[k]![last] = s[axis]!));
    } else {
      shape.push(n);
      raw.forEach((s, k) => strides[k]!.push(s[axis]!));
    }
  }
  if (shape.length === 0) {
    shape.push(1);
    strides.forEach((s) => s.push(0));
  }
  return { dims, size, shape, strides };
}

/**
 * Calls `inner(outOffset, offsets, n)` for each run of the innermost merged axis, with each
 * input's offset at the run's start; the inputs' strides along the run are plan.strides[k].at(-1).
 */
export function forEachRun(
  plan: BroadcastPlan,
  inner: (outOffset: number, offsets: number[], n: number) => void,
): void {
  const { shape, strides } = plan;
  const depth = shape.length - 1;
  const n = shape[depth]!;
  const inputs = strides.length;
  const offsets = new Array<number>(inputs).fill(0);
  if (depth === 0) {
    inner(0, offsets, n);
    return;
  }
  const counter = new Array<number>(depth).fill(0);
  const outer = plan.size / n;
  for (let run = 0; run < outer; run++) {
    inner(run * n, offsets, n);
    // Odometer over the outer axes.
    for (let axis = depth - 1; axis >= 0; axis--) {
      counter[axis]!++;
      for (let k = 0; k < inputs; k++) offsets[k]! += strides[k]![axis]!;
      if (counter[axis]! < shape[axis]!) break;
      for (let k = 0; k < inputs; k++) offsets[k]! -= strides[k]![axis]! * shape[axis]!;
      counter[axis] = 0;
    }
  }
}
