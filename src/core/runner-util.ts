/** Small pure helpers of ClefRunner (runner.ts): byte counts, prefix keys, yielding a task. */
import type { TensorLike } from './runtime-types.js';

/** Bytes per element of the tensor types the graphs exchange. */
function elementBytes(type: string): number {
  return type === 'float16' ? 2 : type === 'int64' ? 8 : 4;
}

export function tensorBytes(t: TensorLike): number {
  return t.dims.reduce((n, d) => n * d, 1) * elementBytes(t.type);
}

/** Bytes of the outputs a session handed back in CPU memory (on WebGPU: read back from the GPU). */
export function cpuOutputBytes(out: Record<string, TensorLike>): number {
  let bytes = 0;
  for (const t of Object.values(out)) {
    if (t.location !== 'gpu-buffer') bytes += tensorBytes(t);
  }
  return bytes;
}

/**
 * Waits for the next task of the event loop. A WASM session's run is synchronous work behind a
 * resolved promise, so a chain of chunks never lets the worker read its messages: without this,
 * a cancel (or a request to queue) would wait until the whole run had finished.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export function sameIds(a: Int32Array, b: readonly number[], length: number): boolean {
  if (a.length !== length) return false;
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function prefixKey(ids: readonly number[], length: number): string {
  // FNV-1a over the ids; entries also keep the ids, so a collision is never a wrong hit.
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) {
    h ^= ids[i] as number;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `${length}:${h.toString(16)}`;
}
