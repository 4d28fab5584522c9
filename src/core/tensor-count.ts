/**
 * Counts the onnxruntime tensors a runner holds: every tensor its adapter makes and every output
 * a session hands it, minus those disposed. Idle, the count must equal what the prefix cache
 * keeps; anything above is a leak (a GPU buffer or wasm heap block nobody will free).
 */
import type { RuntimeAdapter, SessionLike, TensorLike } from './runtime-types.js';

export class TensorCounter {
  private readonly live = new WeakSet<TensorLike>();
  /** Tensors made or received and not disposed yet. */
  count = 0;

  track<T extends TensorLike>(tensor: T): T {
    if (this.live.has(tensor)) return tensor;
    this.live.add(tensor);
    this.count++;
    const dispose = tensor.dispose.bind(tensor);
    // Disposing twice is harmless to the runtime, and must not count twice here.
    tensor.dispose = () => {
      if (this.live.delete(tensor)) this.count--;
      dispose();
    };
    return tensor;
  }

  adapter(rt: RuntimeAdapter): RuntimeAdapter {
    return {
      float32: (data, dims) => this.track(rt.float32(data, dims)),
      float16: (data, dims) => this.track(rt.float16(data, dims)),
      int64: (data, dims) => this.track(rt.int64(data, dims)),
    };
  }

  session(session: SessionLike): SessionLike {
    return {
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      run: async (feeds) => {
        const out = await session.run(feeds);
        for (const t of Object.values(out)) this.track(t);
        return out;
      },
      release: () => session.release(),
    };
  }
}
