// The layout shows the architecture: no import circles anywhere, and the arrows between the
// product's folders point one way (README "Layout"). Read from the source text, so a new
// import that breaks either fails here with the files named.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circles, importGraph } from '../support/import-graph.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const graph = importGraph(ROOT, ['src', 'workers', 'tools', 'test', 'bin']);

/** `src/<part>` for product files, else the top folder. */
function part(file: string): string {
  const [top, second] = file.split('/');
  return top === 'src' && second && !second.includes('.') ? `src/${second}` : (top as string);
}

/** Importer part -> parts it must never import. */
const FORBIDDEN: Record<string, RegExp> = {
  'src/protocol': /^(?!src\/protocol$)/, // protocol imports nothing else of the project
  'src/clef': /^src\/(engine|client|element|playground|node|http|wire|core|build)$/,
  // The boundary's vocabulary sits under everything that crosses it, core included.
  'src/wire': /^src\/(engine|client|element|playground|node|http|build|core)$/,
  'src/http': /^src\/(engine|client|element|playground|node|build)$/,
  'src/engine': /^src\/(client|element|playground|node|http|build)$/,
  'src/client': /^src\/(engine|element|playground|node|build)$/,
  'src/element': /^src\/(engine|playground|node|build)$/,
  // The playground trains through its worker (workers/train.worker.ts), never in the page.
  'src/playground': /^src\/(engine|node|build)$/,
  'src/calibrate': /^src\/(engine|client|element|playground|node|http|core|build)$/,
  // core is shared by the worker and Node: it never reaches into either, nor above them
  'src/core': /^src\/(engine|client|element|playground|node|http|sw|graph|build)$/,
  // The graph interpreter (the js device) reads core's session types and nothing else.
  'src/graph': /^src\/(?!core$)/,
  'src/sw': /^src\/(engine|element|playground|node|build)$/,
  // The model-building tools run in Node and in the page: they read the protocol, the prompt and
  // tokenizer, calibration and core, and no runtime (a runtime is handed in: src/node does).
  'src/build': /^src\/(?!(protocol|clef|calibrate|core)$)/,
  // The train worker's files and wire: over the build tools, never the Node product.
  'src/train-web': /^src\/(engine|client|element|playground|node)$/,
};

/** A value import of a package or a `node:` module (type-only imports and `typeof import()` aside). */
const PACKAGE_IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s*['"]([^.'"][^'"]*)['"]|(?<!typeof\s+)\bimport\s*\(\s*['"]([^.'"][^'"]*)['"]\s*\)/gm;

function packageImports(text: string): string[] {
  return [...text.matchAll(PACKAGE_IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

describe('the import graph', () => {
  it('reads the source (guards against a silently empty graph)', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('src/client/clef.ts')).toContain('src/wire/wire.ts');
  });

  it('has no circles', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('points downwards: no forbidden arrow between the parts; the product never imports tools or test', () => {
    const bad: string[] = [];
    for (const [file, targets] of graph) {
      const from = part(file);
      const product = from.startsWith('src') || from === 'workers';
      for (const target of targets) {
        const to = part(target);
        // The shipped worker stays free of test instrumentation (test/support/instrumented-worker
        // injects it).
        if (product && (to === 'tools' || to === 'test')) bad.push(`${file} -> ${target}`);
        const rule = FORBIDDEN[from];
        if (rule && to !== from && rule.test(to)) bad.push(`${file} -> ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('keeps the build tools free of any runtime: src/build imports no package, not even node:', () => {
    const files = [...graph.keys()].filter((f) => f.startsWith('src/build/'));
    expect(files.length).toBeGreaterThan(40);
    const bad = files.flatMap((f) =>
      packageImports(readFileSync(resolve(ROOT, f), 'utf8')).map((spec) => `${f} -> ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('finds a circle and a forbidden arrow when there is one (the checks can fail)', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
      ['c.ts', []],
    ]);
    expect(circles(g)).toEqual([['a.ts', 'b.ts']]);
    expect(FORBIDDEN['src/protocol']!.test('src/clef')).toBe(true);
    expect(FORBIDDEN['src/client']!.test('src/engine')).toBe(true);
    expect(FORBIDDEN['src/core']!.test('src/engine')).toBe(true);
    expect(FORBIDDEN['src/core']!.test('src/node')).toBe(true);
    expect(FORBIDDEN['src/core']!.test('src/graph')).toBe(true);
    expect(FORBIDDEN['src/graph']!.test('src/engine')).toBe(true);
    expect(FORBIDDEN['src/graph']!.test('src/core')).toBe(false);
    expect(FORBIDDEN['src/build']!.test('src/node')).toBe(true);
    expect(FORBIDDEN['src/build']!.test('src/engine')).toBe(true);
    expect(FORBIDDEN['src/build']!.test('src/core')).toBe(false);
    expect(FORBIDDEN['src/core']!.test('src/build')).toBe(true);
    expect(FORBIDDEN['src/wire']!.test('src/core')).toBe(true);
    expect(FORBIDDEN['src/core']!.test('src/wire')).toBe(false);
    expect(
      packageImports(
        [
          "import { loadOrtNode } from 'onnxruntime-node';",
          "import { readFileSync } from 'node:fs';",
          "export { x } from 'comlink';",
          "const m = await import('node:crypto');",
          "import type { Y } from 'onnxruntime-node';",
          "type Fs = typeof import('node:fs');",
          "import { z } from './local.js';",
        ].join('\n'),
      ),
    ).toEqual(['onnxruntime-node', 'node:fs', 'comlink', 'node:crypto']);
  });
});
