// The hand-encoded one-node model that starts onnxruntime-web's runtime early (ort.ts) is a
// valid ONNX model: onnxruntime-node loads it and it returns its input.
import { describe, expect, it } from 'vitest';
import * as ort from 'onnxruntime-node';
import { IDENTITY_GRAPH } from '../../../src/engine/identity-graph.js';

describe('IDENTITY_GRAPH', () => {
  it('loads in onnxruntime and maps x to y unchanged', async () => {
    const session = await ort.InferenceSession.create(IDENTITY_GRAPH);
    expect(session.inputNames).toEqual(['x']);
    expect(session.outputNames).toEqual(['y']);
    const out = await session.run({ x: new ort.Tensor('float32', new Float32Array([2.5]), [1]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([2.5]);
    await session.release();
  });
});
