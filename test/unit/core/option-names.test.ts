// Unknown options are refused, naming the option and the nearest known one:
// createClef, loadNodePackage, and <clef-decide>'s attributes (a console warning there). A typo
// used to pass silently as the default.
import { describe, expect, it, vi } from 'vitest';
import { createClef, createClefWithBuild } from '../../../src/client/clef.js';
import { editDistance, nearestName, refuseUnknownOptions } from '../../../src/core/option-names.js';
import { warnUnknownAttributes } from '../../../src/element/clef-decide/unknown-attributes.js';
import { loadNodePackage } from '../../../src/node/engine.js';

describe('nearestName', () => {
  it('measures edits, a swap of two neighbours counting one', () => {
    expect(editDistance('shared', 'shared')).toBe(0);
    expect(editDistance('sahred', 'shared')).toBe(1);
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('finds the nearest known name, ignoring case and separators', () => {
    const known = ['model', 'model-name', 'device', 'abstain-below', 'shared'];
    expect(nearestName('sahred', known)).toBe('shared');
    expect(nearestName('modelname', known)).toBe('model-name');
    expect(nearestName('abstain_below', known)).toBe('abstain-below');
    expect(nearestName('devise', known)).toBe('device');
  });

  it('refuses unknown names with a TypeError naming each and its nearest, and passes known ones', () => {
    expect(() => refuseUnknownOptions('f', { a: 1, b: 2 }, ['a', 'b'])).not.toThrow();
    expect(() => refuseUnknownOptions('f', { aa: 1, c: 2 }, ['a', 'b'])).toThrow(
      new TypeError(
        "f: unknown options 'aa' (did you mean 'a'?), 'c' (did you mean 'a'?); the options are 'a', 'b'",
      ),
    );
  });
});

describe('createClef', () => {
  it('refuses an unknown option before starting anything, naming the nearest', async () => {
    await expect(createClef({ sahred: true } as never)).rejects.toThrow(
      /^createClef: unknown option 'sahred' \(did you mean 'shared'\?\)/,
    );
    await expect(createClef({ devise: 'wasm' } as never)).rejects.toThrow(
      /unknown option 'devise' \(did you mean 'device'\?\)/,
    );
    // The test and benchmark switches are not page options.
    await expect(createClef({ simulate: {} } as never)).rejects.toThrow(
      /unknown option 'simulate'/,
    );
    await expect(createClef({ wasmBuild: 'plain' } as never)).rejects.toThrow(
      /unknown option 'wasmBuild'/,
    );
    await expect(createClefWithBuild({ wasmBiuld: 'plain' } as never)).rejects.toThrow(
      /unknown option 'wasmBiuld' \(did you mean 'wasmBuild'\?\)/,
    );
  });

  it('refuses shared that is not a boolean, and shared with worker', async () => {
    await expect(createClef({ shared: 'yes' as never })).rejects.toThrow(
      /shared must be true or false/,
    );
    await expect(createClef({ shared: true, worker: () => ({}) as Worker })).rejects.toThrow(
      /shared and worker cannot be combined/,
    );
  });
});

describe('loadNodePackage', () => {
  it('refuses an unknown option, naming the nearest', async () => {
    await expect(loadNodePackage('models/clef-nano', { threds: 1 } as never)).rejects.toThrow(
      /^loadNodePackage: unknown option 'threds' \(did you mean 'threads'\?\)/,
    );
  });
});

describe("<clef-decide>'s attributes", () => {
  const properties = {
    model: { type: String },
    modelName: { type: String, attribute: 'model-name' },
    shared: { type: Boolean },
    questions: { attribute: false },
    _progress: { state: true },
  };
  const element = (names: string[]) =>
    ({ localName: 'clef-decide', getAttributeNames: () => names }) as unknown as Element;

  it('warns once about each unknown attribute, naming the nearest, and not about HTML or framework ones', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const el = element([
        ...['sahred', 'modelname', 'questions', 'model', 'id', 'class', 'data-x', 'aria-label'],
        ...['onclick', 'x-data', 'v-if', ':value', '_ngcontent-c1', 'style', 'slot'],
      ]);
      warnUnknownAttributes(el, properties);
      warnUnknownAttributes(el, properties); // reconnected: no second warning
      expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([
        "<clef-decide>: unknown attribute 'sahred' (did you mean 'shared'?); it is ignored. Its attributes are model, model-name, shared",
        "<clef-decide>: unknown attribute 'modelname' (did you mean 'model-name'?); it is ignored. Its attributes are model, model-name, shared",
        "<clef-decide>: unknown attribute 'questions' (did you mean 'shared'?); it is ignored. Its attributes are model, model-name, shared",
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
