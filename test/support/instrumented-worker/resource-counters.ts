/**
 * What the platform holds for the engine's worker, for leak checks: GPUBuffers created and not
 * destroyed (with their bytes), and the size of the WebAssembly memories instantiated here
 * (onnxruntime's heap). Neither is readable from outside, so `installResourceCounters` wraps
 * `GPUDevice.prototype.createBuffer`, `GPUBuffer.prototype.destroy` and `WebAssembly.instantiate*`
 * in this worker only, before the runtime loads; each wrapper adds one counter update.
 */
import type { ResourceCounts } from './instrumented-wire.js';

interface BufferLike {
  readonly size: number;
  destroy(): void;
}
type BufferClass = { prototype: BufferLike };
type DeviceClass = { prototype: { createBuffer(descriptor: unknown): BufferLike } };

let gpu: { buffers: number; bytes: number } | null = null;
const memories = new Set<WebAssembly.Memory>();

function noteMemories(exportsOrImports: unknown): void {
  if (!exportsOrImports || typeof exportsOrImports !== 'object') return;
  for (const value of Object.values(exportsOrImports)) {
    if (value instanceof WebAssembly.Memory) memories.add(value);
  }
}

function noteInstance(result: unknown, imports: unknown): void {
  const instance =
    result instanceof WebAssembly.Instance
      ? result
      : (result as { instance?: WebAssembly.Instance } | undefined)?.instance;
  if (instance) noteMemories(instance.exports);
  // A threaded build imports its memory: { env: { memory } }.
  if (imports && typeof imports === 'object') {
    for (const ns of Object.values(imports as Record<string, unknown>)) noteMemories(ns);
  }
}

function wrapGpu(scope: Record<string, unknown>): void {
  const Device = scope.GPUDevice as DeviceClass | undefined;
  const Buffer = scope.GPUBuffer as BufferClass | undefined;
  if (!Device || !Buffer || gpu) return;
  const counts = { buffers: 0, bytes: 0 };
  gpu = counts;
  const live = new WeakSet<BufferLike>();
  const createBuffer = Device.prototype.createBuffer;
  const destroy = Buffer.prototype.destroy;
  Device.prototype.createBuffer = function (this: unknown, descriptor: unknown) {
    const buffer = createBuffer.call(this, descriptor);
    live.add(buffer);
    counts.buffers++;
    counts.bytes += buffer.size;
    return buffer;
  };
  Buffer.prototype.destroy = function (this: BufferLike) {
    if (live.delete(this)) {
      counts.buffers--;
      counts.bytes -= this.size;
    }
    destroy.call(this);
  };
}

function wrapWasm(): void {
  const wasm = WebAssembly as unknown as Record<string, unknown>;
  for (const name of ['instantiate', 'instantiateStreaming']) {
    const original = wasm[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!original) continue;
    wasm[name] = function (this: unknown, source: unknown, imports?: unknown) {
      return original.call(this, source, imports).then((result) => {
        noteInstance(result, imports);
        return result;
      });
    };
  }
}

let installed = false;

/** Starts counting in this global scope (the engine's worker); later calls do nothing. */
export function installResourceCounters(scope: object = globalThis): void {
  if (installed) return;
  installed = true;
  wrapGpu(scope as Record<string, unknown>);
  wrapWasm();
}

export function resourceCounts(): ResourceCounts {
  let wasmBytes = 0;
  for (const m of memories) wasmBytes += m.buffer.byteLength;
  return {
    gpuBuffers: gpu?.buffers ?? null,
    gpuBufferBytes: gpu?.bytes ?? null,
    wasmMemoryBytes: memories.size ? wasmBytes : null,
  };
}
