/**
 * The one guard on a graph's session (src/core/input-guard.ts), used by the page engine and
 * the Node engine alike: an input the runner feeds that the graph lacks is refused at creation,
 * a feed the graph has no input for is refused when run (onnxruntime-node would drop it), and
 * a feed the graph does have reaches the session unchanged.
 */
import { describe, expect, it } from 'vitest';
import { backboneInputs, guardSession } from '../../../src/core/input-guard.js';
import type { SessionLike, TensorLike } from '../../../src/core/runtime-types.js';
import { PackageError } from '../../../src/wire/errors.js';

function fakeSession(inputNames: string[]) {
  const runs: string[][] = [];
  let released = 0;
  const session: SessionLike = {
    inputNames,
    outputNames: ['out'],
    run: async (feeds) => {
      runs.push(Object.keys(feeds));
      return { out: feeds[inputNames[0]!]! };
    },
    release: async () => void released++,
  };
  return { session, runs, released: () => released };
}

const tensor = {} as TensorLike;

describe('guardSession', () => {
  it('refuses a session without an input the runner feeds, naming the file and the input', () => {
    const { session } = fakeSession(['hidden']);
    let error: unknown;
    try {
      guardSession(session, 'head_memory.onnx', ['hidden', 'past_memory']);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PackageError);
    expect((error as PackageError).message).toMatch(
      /^head_memory\.onnx has no input past_memory: the package was converted for another version/,
    );
  });

  it('refuses a feed the graph has no input for, and passes the others through', async () => {
    const fake = fakeSession(['hidden', 'past_memory']);
    const guarded = guardSession(fake.session, 'head_memory.onnx', ['hidden']);
    expect(guarded.inputNames).toEqual(['hidden', 'past_memory']);
    expect(() => guarded.run({ hidden: tensor, lex: tensor })).toThrow(
      /head_memory\.onnx has no input lex \(inputs: hidden, past_memory\)/,
    );
    expect(fake.runs).toEqual([]);
    const out = await guarded.run({ hidden: tensor, past_memory: tensor });
    expect(out.out).toBe(tensor);
    expect(fake.runs).toEqual([['hidden', 'past_memory']]);
    await guarded.release();
    expect(fake.released()).toBe(1);
  });

  it("names a backbone graph's stream and states as its inputs", () => {
    const states = [{ input: 'past_key_0' }, { input: 'past_conv_1' }];
    expect(backboneInputs({ input: 'residual_in', states } as never)).toEqual([
      'residual_in',
      'past_key_0',
      'past_conv_1',
    ]);
  });
});
