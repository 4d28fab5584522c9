/**
 * The slice of onnxruntime the runner and its counters use, typed structurally so that neither
 * imports the runtime (onnxruntime-web and onnxruntime-node both fit).
 */
/** The slice of an onnxruntime Tensor the runner uses (web and node agree on it). */
export interface TensorLike {
  readonly dims: readonly number[];
  readonly type: string;
  /** 'cpu', 'gpu-buffer', ... (onnxruntime's Tensor.location). */
  readonly location?: string;
  getData(): Promise<unknown>;
  dispose(): void;
}

export interface SessionLike {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, TensorLike>): Promise<Record<string, TensorLike>>;
  release(): Promise<void>;
}

export interface RuntimeAdapter {
  float32(data: Float32Array, dims: number[]): TensorLike;
  /** IEEE binary16 bits (the float16-KV graphs' state). */
  float16(data: Uint16Array, dims: number[]): TensorLike;
  int64(data: BigInt64Array, dims: number[]): TensorLike;
}

/**
 * The runtime's Tensor class, as onnxruntime-web and onnxruntime-node both declare it (the
 * overloads the adapter calls).
 */
export interface TensorClass {
  new (type: 'float32', data: Float32Array, dims: readonly number[]): TensorLike;
  new (type: 'float16', data: Uint16Array, dims: readonly number[]): TensorLike;
  new (type: 'int64', data: BigInt64Array, dims: readonly number[]): TensorLike;
}

/** The adapter over a runtime's Tensor class: the one place web and Node make tensors. */
export function runtimeAdapter(Tensor: TensorClass): RuntimeAdapter {
  return {
    float32: (data, dims) => new Tensor('float32', data, dims),
    float16: (data, dims) => new Tensor('float16', data, dims),
    int64: (data, dims) => new Tensor('int64', data, dims),
  };
}
