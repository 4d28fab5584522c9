// Every TypeScript block in README.md and docs/ compiles against the package's types
// (`clef-web`, `clef-web/sw` mapped to the source), with the SDKs the docs use. A block leaves
// some names to the reader (`request`, `KEY`, ...): those are declared with their types, and
// an import a block takes for granted is added; nothing else is changed. Service-worker blocks
// compile with the WebWorker library, the rest with the DOM.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const OUT = join(ROOT, 'test-results/doc-blocks');

interface Block {
  file: string;
  line: number;
  code: string;
}

/** The ```ts blocks of README.md and docs/*.md, with where each starts. */
function tsBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)];
  const blocks: Block[] = [];
  for (const file of files.filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/^```ts\n([\s\S]*?)^```/gm)) {
      blocks.push({ file, line: text.slice(0, m.index).split('\n').length, code: m[1]! });
    }
  }
  return blocks;
}

/** Typed in the consumer-app test instead (it needs @types/react, which the checkout lacks). */
const ELSEWHERE = /from 'clef-web\/element\/react'/;

/** Names the docs leave to the reader, and their types. */
const GIVEN: Record<string, string> = {
  request: "import('clef-web').SystemOneRequest",
  bodyText: 'string',
  KEY: 'string',
  model: 'string',
  state: 'string',
  input: 'string',
  questions: "import('@typesafe-ai/sdk').Questions",
  decisionQuestions: "Parameters<import('openai').default['decisions']['create']>[0]['questions']",
  base: 'string',
};

/** Imports a block takes for granted. */
const IMPORTS: Record<string, string> = {
  createClef: "import { createClef } from 'clef-web';",
  OpenAI: "import OpenAI from 'openai';",
};

const defines = (code: string, name: string) =>
  new RegExp(`(?:const|let|var|function|class)\\s+${name}\\b|import[^;]*\\b${name}\\b`).test(code);
const uses = (code: string, name: string) => new RegExp(`(?<![.\\w'])${name}\\b`).test(code);

/** The block as a module: its missing imports and given names first, then its code unchanged. */
export function asModule(code: string): string {
  const head: string[] = [];
  for (const [name, line] of Object.entries(IMPORTS)) {
    if (uses(code, name) && !defines(code, name)) head.push(line);
  }
  for (const [name, type] of Object.entries(GIVEN)) {
    if (uses(code, name) && !defines(code, name)) head.push(`declare const ${name}: ${type};`);
  }
  return `${head.join('\n')}\n${code}\nexport {};\n`;
}

function tsconfig(files: string[], lib: string[]) {
  return {
    compilerOptions: {
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      lib,
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      experimentalDecorators: true,
      useDefineForClassFields: false,
      baseUrl: ROOT,
      paths: {
        'clef-web': ['src/index.ts'],
        'clef-web/protocol': ['src/protocol-entry.ts'],
        'clef-web/sw': ['src/sw/index.ts'],
        'clef-web/element': ['src/element/index.ts'],
        'clef-web/node': ['src/node/index.ts'],
      },
    },
    files,
  };
}

const blocks = tsBlocks();
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('TypeScript blocks in README.md and docs/', () => {
  it('are found, and only the React one is left to the consumer-app test', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    expect(blocks.filter((b) => ELSEWHERE.test(b.code)).map((b) => b.file)).toEqual(['README.md']);
  });

  it('given names are declared and taken-for-granted imports added, nothing else', () => {
    const out = asModule('const r = (await clef.systemone(request)) as X;\nnew OpenAI();');
    expect(out).toContain("import OpenAI from 'openai';");
    expect(out).toContain("declare const request: import('clef-web').SystemOneRequest;");
    expect(out).not.toContain('declare const clef');
    expect(asModule("import { createClef } from 'clef-web';\ncreateClef();")).not.toMatch(
      /^import \{ createClef \}.*\n.*import \{ createClef \}/s,
    );
  });

  it('compile (strict) against the package types', () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const where: Record<string, string> = {};
    const dom: string[] = [];
    const worker: string[] = [];
    blocks.forEach((block, i) => {
      if (ELSEWHERE.test(block.code)) return;
      const name = `block-${i}.ts`;
      where[name] = `${block.file}:${block.line}`;
      writeFileSync(join(OUT, name), asModule(block.code));
      (/from 'clef-web\/sw'/.test(block.code) ? worker : dom).push(name);
    });
    expect(worker.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const [files, lib, config] of [
      [dom, ['ES2023', 'DOM', 'DOM.Iterable'], 'tsconfig.dom.json'],
      [worker, ['ES2023', 'WebWorker'], 'tsconfig.worker.json'],
    ] as const) {
      writeFileSync(join(OUT, config), JSON.stringify(tsconfig([...files], [...lib])));
      const r = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(OUT, config)],
        { cwd: ROOT, encoding: 'utf8' },
      );
      if (r.status !== 0) {
        // Name the document and line of each failing block.
        failures.push(
          r.stdout.replace(/test-results\/doc-blocks\/(block-\d+\.ts)/g, (_, f: string) => {
            return `${f} (${where[f]})`;
          }),
        );
      }
    }
    expect(failures.join('\n')).toBe('');
  }, 120_000);
});
