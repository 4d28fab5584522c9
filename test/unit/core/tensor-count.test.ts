// TensorCounter: the engine's leak count (info().counters.liveTensors) counts each tensor made
// or received once, and each disposal once, whatever the order.
import { describe, expect, it } from 'vitest';
import type { RuntimeAdapter, SessionLike, TensorLike } from '../../../src/core/runner.js';
import { TensorCounter } from '../../../src/core/tensor-count.js';

function fakeTensor(): TensorLike & { disposals: number } {
  const t = {
    dims: [1],
    type: 'float32',
    disposals: 0,
    getData: async () => new Float32Array(1),
    dispose() {
      t.disposals++;
    },
  };
  return t;
}

const runtime: RuntimeAdapter = {
  float32: () => fakeTensor(),
  float16: () => fakeTensor(),
  int64: () => fakeTensor(),
};

describe('TensorCounter', () => {
  it('counts tensors made by the adapter until each is disposed, once', () => {
    const counter = new TensorCounter();
    const rt = counter.adapter(runtime);
    const a = rt.float32(new Float32Array(1), [1]);
    const b = rt.int64(new BigInt64Array(1), [1]);
    expect(counter.count).toBe(2);
    a.dispose();
    a.dispose();
    expect(counter.count).toBe(1);
    // The runtime's own dispose still runs every time (it is harmless there).
    expect((a as unknown as { disposals: number }).disposals).toBe(2);
    b.dispose();
    expect(counter.count).toBe(0);
  });

  it("counts a session's outputs, and a tensor tracked twice only once", async () => {
    const counter = new TensorCounter();
    const out = { hidden: fakeTensor(), state: fakeTensor() };
    const session: SessionLike = {
      inputNames: ['x'],
      outputNames: ['hidden', 'state'],
      run: async () => out,
      release: async () => undefined,
    };
    const wrapped = counter.session(session);
    expect(wrapped.inputNames).toEqual(['x']);
    const got = await wrapped.run({});
    expect(counter.count).toBe(2);
    counter.track(got.hidden!);
    expect(counter.count).toBe(2);
    got.hidden!.dispose();
    got.state!.dispose();
    expect(counter.count).toBe(0);
    expect(out.hidden.disposals).toBe(1);
  });
});
