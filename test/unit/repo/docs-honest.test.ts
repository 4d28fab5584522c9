// Docs that tell the truth, where it is cheap to check: every repository file, CLI
// option, error code and error class that README.md or docs/*.md names in code font exists in
// the code; and the figures the docs once had wrong stay tied to the constants they describe.
// A name that is another program's (npm's options, a browser API) is listed below with why.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportLists, packageEntries } from '../../../tools/api-report.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const DOCS = ['README.md', ...readdirSync('docs').map((f) => join('docs', f))].filter((f) =>
  f.endsWith('.md'),
);

/** Files under `dir` (recursively), skipping build output and dependencies. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'test-results', '.git'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

const REPO_FILES = filesUnder('.').map((f) => f.replace(/^\.\//, ''));
const PACKAGE_JSON = readFileSync('package.json', 'utf8');
const SOURCE = ['src', 'tools', 'bin']
  .flatMap(filesUnder)
  .filter((f) => /\.(ts|mjs|js|py)$/.test(f))
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');

/** Every inline code span and every fenced code line of a doc, with its doc and line. */
function codeOf(doc: string): Array<{ text: string; where: string }> {
  const out: Array<{ text: string; where: string }> = [];
  let fenced = false;
  readFileSync(doc, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const where = `${doc}:${i + 1}`;
      if (line.trimStart().startsWith('```')) {
        fenced = !fenced;
        return;
      }
      if (fenced) out.push({ text: line, where });
      else for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ text: m[1]!, where });
    });
  return out;
}
const CODE = DOCS.flatMap(codeOf);

/** File names the docs give that are not this repository's files, and why. */
const NOT_REPO_FILES = new Map<string, string>([
  ['clef.worker.js', 'the built worker in dist/ (README: how bundlers find it)'],
  ['vite.config.js', "the consumer app's config in README's example"],
  ['main.js', "the consumer app's entry in README's esbuild example (src/main.js)"],
  ['next.config.mjs', "the consumer Next.js app's config in README's example"],
  [
    'custom-elements.json',
    'written by the build (tools/build/custom-elements.mjs; package.json customElements)',
  ],
  ['request.json', "the reader's own file in a curl example"],
  ['question.json', "the reader's question file for `clef-web train --question`"],
  ['counts.json', 'what `clef-web train --teacher` writes in its teacher folder'],
  ['soak-wasm.json', 'an output the soak writes where the reader asks'],
  ['soak-webgpu.json', 'an output the soak writes where the reader asks'],
  ['d.json', "a property access (`d.json`) in calibration.md's code, not a file"],
  // Clef's release and its reference implementation (another repository) that the recipe and the
  // contract cite; the tiny fixture writes the release's files at run time.
  ['config.json', "a Clef release's file"],
  ['model.safetensors.index.json', "a Clef release's file"],
  ['joint_head_config.json', "a Clef release's file"],
  ['joint_schema_model.py', "Clef's reference implementation"],
  ['modeling_qwen3_5.py', "Hugging Face transformers' Qwen3.5 model"],
  ['clef.py', "the reference's conversion script"],
  // A user's own project files in README's bundler recipes and docs/deploy.md's host files.
  ['webpack.config.js', "a user's webpack config (README)"],
  ['rollup.config.mjs', "a user's Rollup config (README)"],
  ['index.js', "a user's page script (README's recipes)"],
  ['index.html', "a user's page (README's recipes)"],
  ['next.config.ts', "a user's Next.js config (README, docs/deploy.md)"],
  ['decide.mjs', "a user's Node script (README)"],
  ['vercel.json', "a user's Vercel config (docs/deploy.md)"],
  ['404.html', 'a page a Cloudflare Pages site may have (docs/deploy.md)'],
]);

/** Whether a file name a doc gives is this repository's, a build output, or a dependency's. */
function fileExists(path: string): boolean {
  if (NOT_REPO_FILES.has(basename(path))) return true;
  // Build outputs: the package's entries are declared in package.json (files, exports).
  if (path.startsWith('dist/'))
    return (
      PACKAGE_JSON.includes(`./${path}`) ||
      PACKAGE_JSON.includes(`"${path.split('/').slice(0, 2).join('/')}"`)
    );
  // A package subpath (`clef-web/sw-routes.js`) must be one of package.json's exports.
  if (path.startsWith('clef-web/'))
    return PACKAGE_JSON.includes(`"./${path.slice('clef-web/'.length)}"`);
  if (path.includes('/')) return REPO_FILES.some((f) => f === path || f.endsWith(`/${path}`));
  // A bare name, or the shorthand `-asyncify.json` for a result file named just before it.
  if (REPO_FILES.some((f) => basename(f) === path || (path.startsWith('-') && f.endsWith(path))))
    return true;
  if (REPO_FILES.some((f) => f.startsWith('bench/results/') && f.endsWith(`-${path}`))) return true;
  // onnxruntime-web's own files.
  return existsSync(join('node_modules/onnxruntime-web/dist', path));
}

/** Options the docs name that belong to other programs (npm, node, curl, Chromium, vite). */
const OTHER_PROGRAMS_OPTIONS = new Set([
  '--onnxruntime-node-install', // npm install's config for onnxruntime-node's own install script
  '--no-audit',
  '--no-fund',
  '--prefer-offline',
  '--ignore-scripts',
  '--save-dev',
  '--import', // node
  '--expose-gc', // node
  '--config', // vite
  '--no-liftoff', // V8's flag, passed to Chromium in a benchmark
  '--bundle', // esbuild, in README's esbuild example
  '--format', // esbuild
  '--outdir', // esbuild
]);

/** snake_case names in code font that are another program's. */
const OTHER_NAMES = new Set([
  'torch_recurrent_gated_delta_rule', // the reference's PyTorch kernel (onnx-ops.md)
  'add_header', // nginx's directive (deploy.md)
  'file_server', // Caddy's directive (deploy.md)
]);

/** Error class names that are the platform's or an SDK's, not clef-web's. */
const OTHER_ERRORS = new Set([
  'TypeError',
  'RangeError',
  'AbortError',
  'SyntaxError',
  'BadRequestError', // the TypeSafe and OpenAI SDKs' class for a 400
  'QuotaExceededError', // a DOMException name (Cache Storage full)
  'SecurityError', // a DOMException name
]);

describe('what the docs name exists', () => {
  it('every repository file a doc names in code font', () => {
    const missing: string[] = [];
    for (const { text, where } of CODE) {
      for (const m of text.matchAll(
        /(?<![\w/.:@-])((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|js|json|md|py|html|svg))\b/g,
      )) {
        if (!fileExists(m[1]!)) missing.push(`${where}: ${m[1]}`);
      }
    }
    expect(missing.join('\n')).toBe('');
  });

  it('every command-line option a doc names (clef-web, or a tool of this repository)', () => {
    const missing: string[] = [];
    for (const { text, where } of CODE) {
      for (const m of text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
        const option = `--${m[1]}`;
        if (OTHER_PROGRAMS_OPTIONS.has(option)) continue;
        // Declared to parseArgs as 'name': { ... }, or spelled out (help text, argv checks).
        const declared = new RegExp(`['"]${m[1]}['"]\\s*:|${option}\\b`).test(SOURCE);
        if (!declared) missing.push(`${where}: ${option}`);
      }
    }
    expect(missing.join('\n')).toBe('');
  });

  it('every error code and snake_case name a doc puts in code font', () => {
    const missing: string[] = [];
    for (const { text, where } of CODE) {
      const token = text.trim();
      if (!/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(token) || OTHER_NAMES.has(token)) continue;
      if (!new RegExp(`\\b${token}\\b`).test(SOURCE)) missing.push(`${where}: ${token}`);
    }
    expect(missing.join('\n')).toBe('');
  });

  it('every error class a doc names is exported by an entry a user can import', () => {
    // package.json's entries, their exports as the TypeScript checker resolves them (re-export
    // chains included): a class a doc names must be a value one of them exports, so that a user
    // can write `import { X } from 'clef-web…'` and test `instanceof X`.
    const entries = packageEntries(ROOT);
    const lists = exportLists(ROOT, entries);
    const exportedBy = new Map<string, string[]>();
    for (const [entry, names] of Object.entries(lists)) {
      for (const name of names) {
        if (!name.startsWith('type '))
          exportedBy.set(name, [...(exportedBy.get(name) ?? []), entry]);
      }
    }
    // The lists were read (a check over empty lists would pass whatever the docs say).
    expect(exportedBy.get('IntegrityError')).toContain('src/index.ts');
    const missing: string[] = [];
    for (const { text, where } of CODE) {
      for (const m of text.matchAll(/\b([A-Z]\w*Error)\b/g)) {
        const name = m[1]!;
        if (OTHER_ERRORS.has(name) || exportedBy.has(name)) continue;
        missing.push(`${where}: ${name} is exported by none of ${entries.join(', ')}`);
      }
    }
    expect(missing.join('\n')).toBe('');
  });
});

describe('figures the docs give, tied to the code they describe', () => {
  const reliability = readFileSync('docs/reliability.md', 'utf8');

  it("the browser soak's pass bound is the tolerance browser-soak.ts applies", () => {
    const tolerance = Number(
      /const TOLERANCE = ([\d.]+);/.exec(readFileSync('tools/soak/browser-soak.ts', 'utf8'))![1],
    );
    const said = /Pass: total memory at the end within (\d+)% of its level/.exec(reliability);
    expect(said, 'docs/reliability.md states the soak bound').not.toBeNull();
    expect(Number(said![1]) / 100).toBe(tolerance);
  });

  it('the cache-on leak check runs as many decisions as the doc says', () => {
    const spec = readFileSync('test/browser/leaks.spec.ts', 'utf8');
    const ran = Number(/requests\.slice\(0, (\d+)\)/.exec(spec)![1]);
    const said = /with it on, the first (\d+) of them/.exec(reliability.replace(/\s+/g, ' '));
    expect(said, 'docs/reliability.md states the cache-on count').not.toBeNull();
    expect(Number(said![1])).toBe(ran);
  });

  it("element.md lists every onnxruntime build's files the engine loads from /ort/", async () => {
    const { RUNTIME_BUILDS } = await import('../../../src/engine/ort.js');
    const element = readFileSync('docs/element.md', 'utf8');
    for (const build of Object.values(RUNTIME_BUILDS)) {
      const pair = build.wasm.replace(/\.wasm$/, '.{mjs,wasm}');
      expect(element, `/ort/${pair}`).toContain(`\`/ort/${pair}\``);
    }
  });
});
