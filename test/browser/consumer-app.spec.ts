/**
 * clef-web as a user gets it, outside the checkout: `npm pack`, the tarball installed (one
 * install, with Vite, webpack, esbuild and React's types from the registry) into a fresh app in
 * the system's temp folder. The app is built by each bundler the README documents (Vite dev and
 * build with `clef-web/vite`, also from a CommonJS package; webpack 5 and esbuild with
 * `npx clef-web assets`), served (`vite preview`, a plain static server) and makes a decision
 * from `createClef()` (the bundled clef-nano), every request to its own origin: in Chromium,
 * and the built apps (Vite build, webpack, esbuild, the one script tag) in Debian's Firefox ESR
 * too, started once for the file.
 * The published types are checked as users write them (request literals, React JSX, the
 * documented snippets, clef-web/node without onnxruntime-node). The same app runs
 * `npx clef-web serve` (first without onnxruntime-node: a one-line message naming the
 * install). And the tarball: what it holds, its size, no dangling source-map reference.
 *
 * Needs the package built (`npm test` builds it first; alone: `npm run build`).
 */
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFirefox, type RunningFirefox } from '../firefox/support/launch.js';
import {
  ELEMENT_PAGE,
  MAIN_JS,
  NODE_TS,
  TYPED_TS,
  TYPED_TSX,
} from './support/consumer-app-sources.js';
import {
  answerShown,
  expectRecipeAnswer,
  readmeCommands,
  readmeFiles,
  readmeSection,
  writeFiles,
} from './support/consumer-app-recipes.js';
import {
  leftoverProcesses,
  decideOnStaticSite,
  expectFraudRoute,
  firstDecision,
  firstDecisionInFirefox,
  run,
  runToExit,
  start,
  staticServer,
  typecheck,
  type PackResult,
} from './support/consumer-app.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MIB = 1024 * 1024;
/** The budget for the packed tarball. */
const PACKED_LIMIT = 8 * MIB;

let app = '';
/** Debian's Firefox ESR, for the built apps' decisions in a second browser engine. */
let firefox: RunningFirefox | null = null;
let pack: PackResult;
let tarball = '';

const versionOf = (name: string) =>
  (
    JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

const VITE_VERSION = versionOf('vite');
/** The bundlers the other apps are built with, installed from the registry. */
const WEBPACK = 'webpack@5.113.0';
const WEBPACK_CLI = 'webpack-cli@7.3.1';
const ESBUILD = `esbuild@${versionOf('esbuild')}`;
/** React's types, for the JSX typings of the elements. */
const REACT_TYPES = '@types/react@19.3.3';
/** Rollup (plain, and with the import-meta-assets plugin) and Parcel 2. */
const ROLLUP = ['rollup@4.68.9', '@rollup/plugin-node-resolve@16.0.3'];
const ROLLUP_ASSETS = '@web/rollup-plugin-import-meta-assets@2.3.3';
const PARCEL = 'parcel@2.16.4';

test.describe.configure({ mode: 'serial', timeout: 600_000 });

test.beforeAll(async () => {
  test.setTimeout(600_000);
  if (!existsSync(join(ROOT, 'dist/lib/index.js')) || !existsSync(join(ROOT, 'dist/node'))) {
    throw new Error('the package is not built: run `npm run build` first (npm test does)');
  }
  app = mkdtempSync(join(tmpdir(), 'clef-web-consumer-'));
  const packed = run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', app],
    ROOT,
  );
  pack = (JSON.parse(packed) as PackResult[])[0] as PackResult;
  tarball = join(app, pack.filename);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2),
  );
  writeFileSync(
    join(app, 'vite.config.js'),
    "import clefWeb from 'clef-web/vite';\nexport default { plugins: [clefWeb()] };\n",
  );
  writeFileSync(
    join(app, 'index.html'),
    '<!doctype html><title>consumer</title><script type="module" src="/main.js"></script>\n',
  );
  writeFileSync(join(app, 'main.js'), MAIN_JS);
  // One install for every app below: the tarball, Vite, webpack and esbuild.
  const installStart = Date.now();
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarball,
      `vite@${VITE_VERSION}`,
      WEBPACK,
      WEBPACK_CLI,
      ESBUILD,
      REACT_TYPES,
    ],
    app,
  );
  console.log(
    `[consumer] npm install (tarball, vite, webpack, esbuild, @types/react): ${Date.now() - installStart} ms`,
  );
  // Measured apart: what the Rollup and Parcel apps add to the suite's install.
  const moreStart = Date.now();
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', ...ROLLUP, ROLLUP_ASSETS, PARCEL],
    app,
  );
  console.log(`[consumer] npm install (rollup, its plugins, parcel): ${Date.now() - moreStart} ms`);
  firefox = await startFirefox('default');
});

/** The suite's Firefox (started once, in beforeAll). */
const inFirefox = (): RunningFirefox => {
  if (!firefox) throw new Error('Firefox did not start (see beforeAll)');
  return firefox;
};

test.afterAll(async () => {
  await firefox?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
  // Every server a test started is gone, with what it started in turn (npx's node, Vite's
  // esbuild service): nothing of the suite outlives it.
  expect(leftoverProcesses()).toEqual([]);
});

test('the tarball holds the product and nothing of the checkout, under 8 MiB', () => {
  const paths = pack.files.map((f) => f.path);
  for (const required of [
    'LICENSE',
    'NOTICE',
    'README.md',
    'bin/clef-web.mjs',
    'dist/lib/index.js',
    'dist/lib/element.js',
    'dist/lib/sw.js',
    'dist/lib/clef.worker.js',
    'dist/element/clef-decide.js',
    'dist/sw/sw-routes.js',
    'dist/node/node/cli.js',
    'dist/node/vite/index.js',
    'cjs/esm-only.cjs',
    'types/react.d.ts',
    'dist/custom-elements.json',
    'models/clef-nano/manifest.json',
    'models/clef-nano/README.md',
  ]) {
    expect(paths, required).toContain(required);
  }
  // Editors, Vue and Svelte tooling find the elements through package.json's customElements.
  const manifest = JSON.parse(
    readFileSync(join(app, 'node_modules/clef-web/package.json'), 'utf8'),
  ) as { customElements?: string };
  expect(paths).toContain(manifest.customElements?.replace(/^\.\//, ''));
  const stray = paths.filter((p) =>
    /^(tools|test|src|public|bench|data|dist\/app)\/|__pycache__|\.map$|\.py$/.test(p),
  );
  expect(stray).toEqual([]);
  expect(pack.size).toBeLessThanOrEqual(PACKED_LIMIT);
  console.log(
    `[package] ${pack.filename}: ${(pack.size / MIB).toFixed(2)} MiB packed, ` +
      `${(pack.unpackedSize / MIB).toFixed(2)} MiB unpacked, ${pack.entryCount} files`,
  );
});

test('no shipped file names a source map the package leaves out', () => {
  const paths = new Set(pack.files.map((f) => f.path));
  const dangling: string[] = [];
  for (const path of paths) {
    if (!/\.(m?js|cjs|d\.ts)$/.test(path)) continue;
    const text = readFileSync(join(app, 'node_modules/clef-web', path), 'utf8');
    for (const match of text.matchAll(/[#@] sourceMappingURL=(\S+)/g)) {
      const target = join(path, '..', match[1] as string);
      if (!(match[1] as string).startsWith('data:') && !paths.has(target)) {
        dangling.push(`${path} -> ${target}`);
      }
    }
  }
  expect(dangling).toEqual([]);
});

test('a browser user’s install pulls neither onnxruntime-node nor sharp', () => {
  expect(existsSync(join(app, 'node_modules/clef-web/package.json'))).toBe(true);
  expect(existsSync(join(app, 'node_modules/onnxruntime-node'))).toBe(false);
  expect(existsSync(join(app, 'node_modules/sharp'))).toBe(false);
  expect(existsSync(join(app, 'node_modules/@huggingface'))).toBe(false);
});

test('the published types check a user’s request literal', () => {
  writeFileSync(join(app, 'typed.ts'), TYPED_TS);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2023', 'DOM', 'DOM.Iterable'],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      files: ['typed.ts'],
    }),
  );
  // The checkout's TypeScript, run in the app: every @ts-expect-error must be an error there.
  run('node', [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app);
});

test('clef-web/protocol loads in Node from the installed package and refuses a bad body', () => {
  const out = run(
    'node',
    [
      '--input-type=module',
      '-e',
      "import('clef-web/protocol').then((p) => { try { p.validateRequest({ model: 'm' }); } catch (e) { console.log(`refused: ${e instanceof p.SystemOneError} ${e.status}`); } })",
    ],
    app,
  );
  expect(out).toContain('refused: true 422');
});

test('React JSX, every element in HTMLElementTagNameMap, the documented snippets: typed', () => {
  typecheck(app, 'typed.tsx', TYPED_TSX, {
    module: 'ESNext',
    moduleResolution: 'Bundler',
    jsx: 'react-jsx',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    skipLibCheck: true,
  });
});

test('clef-web/node’s declarations compile without onnxruntime-node (skipLibCheck off)', () => {
  expect(existsSync(join(app, 'node_modules/onnxruntime-node'))).toBe(false);
  typecheck(app, 'node-typed.ts', NODE_TS, {
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    // The checkout's @types/node: what a Node user of clef-web/node has.
    typeRoots: [join(ROOT, 'node_modules/@types')],
    types: ['node'],
    skipLibCheck: false,
  });
});

test('createClef() decides in the app under `vite` (dev), same-origin only', async ({
  browser,
}) => {
  const dev = await start(
    'npx',
    ['vite', '--port', '0', '--host', '127.0.0.1'],
    app,
    /http:\/\/127\.0\.0\.1:(\d+)\//,
  );
  try {
    const origin = `http://127.0.0.1:${dev.match[1]}`;
    const result = await firstDecision(browser, origin);
    console.log(`[consumer] vite dev: page load to first answer ${result.ms} ms`);
    expectFraudRoute(result, origin);
    // The shipped code names no source map it leaves out (Vite printed one trace per file).
    expect(dev.output()).not.toMatch(/source ?map/i);
  } finally {
    await dev.stop();
  }
});

test('createClef() decides in a fresh Vite app built with clef-web/vite, same-origin only', async ({
  browser,
}) => {
  const built = run('npx', ['vite', 'build'], app);
  // onnxruntime's self-URL no longer reads as a missing asset.
  expect(built).not.toMatch(/doesn't exist at build time|warn/i);
  // Both devices' runtimes by default: WebGPU's is the JSPI build, not the 26.8 MB asyncify one.
  expect(existsSync(join(app, 'dist/ort/ort-wasm-simd-threaded.jspi.wasm'))).toBe(true);
  expect(existsSync(join(app, 'dist/ort/ort-wasm-simd-threaded.asyncify.wasm'))).toBe(false);
  expect(built).toMatch(/clef-web: copied \d+ files, [\d.]+ MB:/);
  expect(existsSync(join(app, 'dist/clef-web/models/clef-nano/manifest.json'))).toBe(true);
  // The classic service-worker script, for importScripts (docs/interop.md).
  expect(readFileSync(join(app, 'dist/clef-web/sw-routes.js'), 'utf8')).toContain('clefSystemOne');
  const preview = await start(
    'npx',
    ['vite', 'preview', '--port', '0', '--host', '127.0.0.1'],
    app,
    /http:\/\/127\.0\.0\.1:(\d+)\//,
  );
  try {
    const origin = `http://127.0.0.1:${preview.match[1]}`;
    const result = await firstDecision(browser, origin);
    console.log(`[consumer] vite build + preview: page load to first answer ${result.ms} ms`);
    expectFraudRoute(result, origin);
    const firefoxResult = await firstDecisionInFirefox(inFirefox(), origin);
    console.log(`[consumer] vite build + preview in Firefox: ${firefoxResult.ms} ms`);
    expectFraudRoute(firefoxResult, origin);
  } finally {
    await preview.stop();
  }
});

test('webpack 5 with its defaults builds the app; clef-web assets; any static server', async ({
  browser,
}) => {
  // A plain webpack config: nothing in it is about clef-web.
  writeFileSync(
    join(app, 'webpack.config.js'),
    "export default { mode: 'production', entry: './main.js', " +
      "output: { path: new URL('./webpack-dist', import.meta.url).pathname } };\n",
  );
  const started = Date.now();
  const built = run('npx', ['webpack'], app);
  console.log(`[consumer] webpack build: ${Date.now() - started} ms`);
  expect(built).toContain('compiled successfully');
  expect(built).not.toMatch(/WARNING|ERROR/);
  // webpack emits the engine's worker itself: the page needs /ort/ and the model only.
  run('npx', ['clef-web', 'assets', 'webpack-dist', '--no-worker'], app);
  await decideOnStaticSite(
    browser,
    join(app, 'webpack-dist'),
    '<script src="/main.js"></script>',
    'webpack 5',
    inFirefox(),
  );
});

test('esbuild --bundle builds the app; clef-web assets copies the worker too', async ({
  browser,
}) => {
  const site = join(app, 'esbuild-dist');
  run('npx', ['esbuild', 'main.js', '--bundle', '--format=esm', `--outdir=${site}`], app);
  // esbuild leaves `new Worker(new URL('./clef.worker.js', import.meta.url))` to the page.
  expect(existsSync(join(site, 'clef.worker.js'))).toBe(false);
  run('npx', ['clef-web', 'assets', 'esbuild-dist'], app);
  expect(existsSync(join(site, 'clef.worker.js'))).toBe(true);
  await decideOnStaticSite(
    browser,
    site,
    '<script type="module" src="/main.js"></script>',
    'esbuild',
    inFirefox(),
  );
});

test('a CommonJS package (npm init -y) loads clef-web/vite; require(clef-web) says why not', () => {
  // What `npm init -y` writes on npm 11: no "type", so vite.config.js is CommonJS.
  const cjs = join(app, 'cjs-app');
  mkdirSync(cjs, { recursive: true });
  writeFileSync(
    join(cjs, 'package.json'),
    JSON.stringify({ name: 'cjs-app', version: '1.0.0', main: 'index.js' }, null, 2),
  );
  writeFileSync(
    join(cjs, 'vite.config.js'),
    "import clefWeb from 'clef-web/vite';\nexport default { plugins: [clefWeb()] };\n",
  );
  writeFileSync(
    join(cjs, 'index.html'),
    '<!doctype html><script type="module" src="/main.js"></script>\n',
  );
  writeFileSync(join(cjs, 'main.js'), MAIN_JS);
  run('npx', ['vite', 'build'], cjs);
  expect(existsSync(join(cjs, 'dist/ort/ort-wasm-simd-threaded.wasm'))).toBe(true);
  expect(existsSync(join(cjs, 'dist/clef-web/models/clef-nano/manifest.json'))).toBe(true);
  // A .cjs config with require() gets the same plugin.
  writeFileSync(
    join(cjs, 'vite.config.cjs'),
    "const { clefWeb } = require('clef-web/vite');\nmodule.exports = { plugins: [clefWeb()] };\n",
  );
  rmSync(join(cjs, 'vite.config.js'));
  rmSync(join(cjs, 'dist'), { recursive: true });
  run('npx', ['vite', 'build'], cjs);
  expect(existsSync(join(cjs, 'dist/ort/ort-wasm-simd-threaded.wasm'))).toBe(true);

  const required = spawnSync('node', ['-e', "require('clef-web')"], { cwd: cjs, encoding: 'utf8' });
  expect(required.status).toBe(1);
  expect(required.stderr).toContain('ERR_CLEF_WEB_ESM_ONLY');
  expect(required.stderr).toContain("import { createClef } from 'clef-web'");
  expect(required.stderr).not.toContain('No "exports" main defined');
});

/** A System One request the bundled clef-nano routes to 'transfer'. */
const TRANSFER_REQUEST = {
  model: 'clef-nano',
  state: 'can you move 200 dollars from checking into my savings account',
  questions: {
    route: {
      type: 'choice',
      criteria: { transfer: 'Wants to move money between accounts.', pay_bill: null },
    },
  },
};

test('without onnxruntime-node decide runs on the js device; each command needing it says so in one line; require(clef-web/node) says ESM-only', async () => {
  expect(existsSync(join(app, 'node_modules/onnxruntime-node'))).toBe(false);
  // `npx clef-web decide` needs no native dependency (auto takes the js device).
  writeFileSync(join(app, 'in.jsonl'), JSON.stringify(TRANSFER_REQUEST) + '\n');
  const decided = await runToExit(
    'npx',
    ['clef-web', 'decide', '--in', 'in.jsonl', '--out', 'decided.jsonl', '--quiet'],
    app,
    60_000,
  );
  expect(decided.status, decided.stderr).toBe(0);
  expect(decided.stderr).not.toMatch(/onnxruntime/i);
  const answer = JSON.parse(readFileSync(join(app, 'decided.jsonl'), 'utf8').trim());
  expect(answer.answers.route.choice).toBe('transfer');
  // What needs onnxruntime-node (asked for by name, or training) says so, with the install line.
  const commands = [
    ['serve', '--runtime', 'onnxruntime', '--port', '0'],
    ['serve', '--workers', '2', '--runtime', 'onnxruntime', '--port', '0'],
    ['decide', '--runtime', 'onnxruntime', '--in', 'in.jsonl', '--out', 'out.jsonl'],
    ['train', '--texts', 'main.js', '--out', 'trained'],
  ];
  for (const argv of commands) {
    // In a process group, so that a server npx started is ended too should it not exit.
    const r = await runToExit('npx', ['clef-web', ...argv], app, 60_000);
    const lines = r.stderr.trim().split('\n');
    expect(r.status, `${argv.join(' ')}: ${r.stderr}`).toBe(1);
    expect(lines, argv.join(' ')).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^clef-web ${argv[0]}: `));
    expect(lines[0]).toContain('ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0');
    // The class name never leads the message (it crossed a worker thread as one, once).
    expect(lines[0]).not.toMatch(/[A-Z]\w+Error:/);
  }
  // require('clef-web/node') says it is an ES module, not Node's generic ERR_PACKAGE_PATH_NOT_EXPORTED.
  const required = spawnSync('node', ['-e', "require('clef-web/node')"], {
    cwd: app,
    encoding: 'utf8',
  });
  expect(required.status).toBe(1);
  expect(required.stderr).toContain('ERR_CLEF_WEB_ESM_ONLY');
  expect(required.stderr).toContain("import('clef-web/node')");
  expect(required.stderr).not.toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  // prepare names its own command, not an option of convert's.
  const prepared = spawnSync(
    'npx',
    ['clef-web', 'prepare', 'node_modules/clef-web/models/clef-nano'],
    { cwd: app, encoding: 'utf8', timeout: 60_000 },
  );
  expect(prepared.status).toBe(1);
  expect(prepared.stderr).toMatch(
    /^clef-web prepare: Writing WASM-prepared graphs needs onnxruntime-node, which is not installed/,
  );
  expect(prepared.stderr).not.toContain('--wasm-graphs');
});

/** Serves the bundled model from the installed package; its model card and one decision. */
async function serveBundled(): Promise<{ description: string; choice: string }> {
  const served = await start(
    'npx',
    ['clef-web', 'serve', '--port', '0', '--threads', '1', '--quiet'],
    app,
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  try {
    const listed = (await (await fetch(`${served.match[1]}/v1/models`)).json()) as any;
    const res = await fetch(`${served.match[1]}/v1/systemone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TRANSFER_REQUEST),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.model).toBe('clef-nano');
    expect(served.output()).not.toMatch(/onnxruntime-node@/);
    return { description: listed.models[0].description, choice: body.answers.route.choice };
  } finally {
    await served.stop();
  }
}

test('npx clef-web serve from the installed package: the bundled model on the js device, then on onnxruntime-node once installed', async () => {
  expect(existsSync(join(app, 'node_modules/onnxruntime-node'))).toBe(false);
  const js = await serveBundled();
  expect(js.description).toContain('served by clef-web on the js device');
  expect(js.choice).toBe('transfer');

  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', 'onnxruntime-node@1.30.0'],
    app,
    // README's install: the variable skips its CUDA download (npm 11 warns about the flag).
    { ONNXRUNTIME_NODE_INSTALL: 'skip' },
  );
  const ort = await serveBundled();
  expect(ort.description).toContain('served by clef-web on onnxruntime-node');
  expect(ort.choice).toBe('transfer');
});

test('one script tag: `clef-web assets --element` and any static server', async ({ browser }) => {
  const site = join(app, 'static-site');
  mkdirSync(site, { recursive: true });
  run('npx', ['clef-web', 'assets', site, '--element', '--no-worker'], app);
  writeFileSync(join(site, 'index.html'), ELEMENT_PAGE);
  const { origin, close } = await staticServer(site);
  try {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.context().on('request', (r) => requested.push(r.url()));
    await page.goto(`${origin}/`);
    const handle = await page.waitForFunction(() => (window as any).__clefResult, undefined, {
      timeout: 120_000,
    });
    const response = (await handle.jsonValue()) as any;
    expect(response.model).toBe('clef-nano');
    expect(response.answers.route.choice).toBe('card_declined');
    expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    await page.close();
    const firefoxResponse = await firstDecisionInFirefox(inFirefox(), origin);
    expect(firefoxResponse.model).toBe('clef-nano');
    expect(firefoxResponse.answers.route.choice).toBe('card_declined');
    expect(firefoxResponse.requested.length).toBeGreaterThan(5);
    expect(
      firefoxResponse.requested.filter((url: string) => !url.startsWith(`${origin}/`)),
    ).toEqual([]);
  } finally {
    await close();
  }
});

test('a WASM-only Vite build ships 20 MB or less, and no file over 25 MiB', () => {
  const wasmOnly = join(app, 'wasm-only');
  mkdirSync(wasmOnly, { recursive: true });
  writeFileSync(
    join(wasmOnly, 'vite.config.js'),
    "import clefWeb from 'clef-web/vite';\nexport default { plugins: [clefWeb({ devices: ['wasm'] })] };\n",
  );
  writeFileSync(join(wasmOnly, 'index.html'), readFileSync(join(app, 'index.html')));
  writeFileSync(join(wasmOnly, 'main.js'), MAIN_JS);
  const built = run('npx', ['vite', 'build'], wasmOnly);
  expect(built).toMatch(/clef-web: copied \d+ files, [\d.]+ MB:/);
  const sizes = (dir: string) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => statSync(join(e.parentPath, e.name)).size);
  const total = sizes(join(wasmOnly, 'dist')).reduce((a, b) => a + b, 0);
  console.log(`[consumer] WASM-only Vite build: ${(total / 1e6).toFixed(2)} MB`);
  expect(total).toBeLessThanOrEqual(20e6);
  expect(existsSync(join(wasmOnly, 'dist/ort/ort-wasm-simd-threaded.jspi.wasm'))).toBe(false);
  // The default build (both devices), made above: nothing over a static host's 25 MiB.
  const largest = Math.max(...sizes(join(app, 'dist')));
  console.log(`[consumer] default Vite build: largest file ${(largest / 2 ** 20).toFixed(1)} MiB`);
  expect(largest).toBeLessThanOrEqual(25 * 2 ** 20);
});

/**
 * A fresh project as `npm init -y` writes it (npm 11: `"type": "commonjs"`), with clef-web in its
 * dependencies as `npm install clef-web` writes it (Parcel reads that); the packages themselves
 * are the suite's install, one folder up.
 */
function freshProject(name: string): string {
  const dir = join(app, name);
  mkdirSync(dir, { recursive: true });
  run('npm', ['init', '-y'], dir);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  manifest.dependencies = { 'clef-web': `^${pack.filename.replace(/^clef-web-|\.tgz$/g, '')}` };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

test('README’s webpack 5 recipe, as written, in a fresh `npm init -y` (CommonJS) project', async ({
  browser,
}) => {
  const dir = freshProject('webpack-recipe');
  expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type).toBe('commonjs');
  const files = readmeFiles('webpack 5');
  expect([...files.keys()].sort()).toEqual([
    'dist/index.html',
    'src/index.js',
    'webpack.config.js',
  ]);
  writeFiles(dir, files);
  // README: `npx webpack && npx clef-web assets dist --no-worker && npx clef-web static dist`
  // (the install before it is the suite's, one folder up).
  expect(readmeCommands('webpack 5')).toContain(
    'npx webpack && npx clef-web assets dist --no-worker && npx clef-web static dist',
  );
  const built = run('npx', ['webpack'], dir);
  expect(built).toContain('compiled successfully');
  expect(built).not.toMatch(/WARNING|ERROR/);
  const copied = run('npx', ['clef-web', 'assets', 'dist', '--no-worker'], dir);
  expect(copied).toMatch(/ort-wasm-simd-threaded\.wasm +14\.\d\d MB/);
  const served = await start(
    'npx',
    ['clef-web', 'static', 'dist', '--port', '0'],
    dir,
    /serving dist on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  try {
    const result = await answerShown(browser, served.match[1]!);
    console.log(`[consumer] webpack recipe (CommonJS): first answer ${result.ms} ms`);
    expectRecipeAnswer(result, served.match[1]!);
  } finally {
    await served.stop();
  }
});

/** README's Rollup project: its config, webpack's page script, and the page. */
function rollupProject(
  name: string,
  config: string,
  page = readmeFiles('webpack 5').get('src/index.js')!,
): string {
  const dir = freshProject(name);
  writeFiles(
    dir,
    new Map([
      ['rollup.config.mjs', config],
      ['src/index.js', page],
    ]),
  );
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(
    join(dir, 'dist/index.html'),
    '<!doctype html>\n<p id="answer">deciding...</p>\n<script type="module" src="/index.js"></script>\n',
  );
  run('npx', ['rollup', '-c'], dir);
  return dir;
}

test('Rollup with @rollup/plugin-node-resolve: README’s recipe decides', async ({ browser }) => {
  const config = readmeFiles('Rollup').get('rollup.config.mjs')!;
  const started = Date.now();
  const dir = rollupProject('rollup-recipe', config);
  expect(readmeCommands('Rollup')).toContain('npx rollup -c && npx clef-web assets dist');
  run('npx', ['clef-web', 'assets', 'dist'], dir);
  const server = await staticServer(join(dir, 'dist'));
  try {
    const result = await answerShown(browser, server.origin);
    console.log(`[consumer] Rollup: build + first answer ${Date.now() - started} ms`);
    expectRecipeAnswer(result, server.origin);
  } finally {
    await server.close();
  }
});

test('Rollup with @web/rollup-plugin-import-meta-assets: the error names the chunk and --worker-dir; with it, it decides', async ({
  browser,
}) => {
  const config = readmeFiles('Rollup')
    .get('rollup.config.mjs')!
    .replace(
      "import { nodeResolve } from '@rollup/plugin-node-resolve';",
      "import { nodeResolve } from '@rollup/plugin-node-resolve';\nimport { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';",
    )
    .replace(
      'plugins: [nodeResolve({ browser: true })]',
      'plugins: [nodeResolve({ browser: true }), importMetaAssets()]',
    );
  expect(config).toContain('importMetaAssets()');
  // Without the flag: the worker (copied into assets/ by the plugin) misses its chunks. The
  // missing chunk is onnxruntime's, which the js device (auto's choice for clef-nano) never
  // loads, so the page asks for WASM: without the flag it fails, with it it decides.
  const readmePage = readmeFiles('webpack 5').get('src/index.js')!;
  const wasmPage = readmePage.replace('createClef()', "createClef({ device: 'wasm' })");
  expect(wasmPage).not.toBe(readmePage);
  const dir = rollupProject('rollup-assets-recipe', config, wasmPage);
  run('npx', ['clef-web', 'assets', 'dist'], dir);
  let server = await staticServer(join(dir, 'dist'));
  try {
    const failed = await answerShown(browser, server.origin, 60_000);
    expect(failed.answer).toBeNull();
    expect(failed.errors.join('\n')).toMatch(/could not load its chunk ort\.\w+\.min-[\w-]+\.js/);
    expect(failed.errors.join('\n')).toContain('`npx clef-web assets <dir> --worker-dir assets`');
  } finally {
    await server.close();
  }
  expect(readmeCommands('Rollup')).toContain(
    'npx rollup -c && npx clef-web assets dist --worker-dir assets',
  );
  run('npx', ['clef-web', 'assets', 'dist', '--worker-dir', 'assets'], dir);
  server = await staticServer(join(dir, 'dist'));
  try {
    expectRecipeAnswer(await answerShown(browser, server.origin), server.origin);
  } finally {
    await server.close();
  }
});

/** README's Parcel project: the page and webpack's page script under src/, its .proxyrc.cjs. */
function parcelProject(): string {
  const dir = freshProject('parcel-recipe');
  // README: delete the "main" npm init -y writes (Parcel takes it for a library target).
  expect(readmeSection('Parcel')).toContain('Delete the `"main": "index.js"` line');
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  delete manifest.main;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  // The lockfile a user's `npm install` leaves here: Parcel takes the folder with one for the
  // project's root, where it reads .proxyrc.cjs (the suite's lockfile is one folder up).
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify({ name: manifest.name, lockfileVersion: 3, requires: true, packages: {} }),
  );
  const files = readmeFiles('Parcel');
  expect([...files.keys()]).toEqual(['.proxyrc.cjs']);
  files.set('src/index.js', readmeFiles('webpack 5').get('src/index.js')!);
  files.set(
    'src/index.html',
    '<!doctype html>\n<p id="answer">deciding...</p>\n<script type="module" src="./index.js"></script>\n',
  );
  writeFiles(dir, files);
  return dir;
}

test('Parcel 2: README’s build recipe decides, then its dev server (no top-level await)', async ({
  browser,
}) => {
  const dir = parcelProject();
  const [buildLine, devLine] = readmeCommands('Parcel');
  expect(buildLine).toBe('npx parcel build src/index.html && npx clef-web assets dist --no-worker');
  expect(devLine).toBe('npx clef-web assets dist --no-worker && npx parcel src/index.html');
  let started = Date.now();
  run('npx', ['parcel', 'build', 'src/index.html'], dir);
  run('npx', ['clef-web', 'assets', 'dist', '--no-worker'], dir);
  const server = await staticServer(join(dir, 'dist'));
  try {
    const result = await answerShown(browser, server.origin);
    console.log(`[consumer] Parcel build: build + first answer ${Date.now() - started} ms`);
    expectRecipeAnswer(result, server.origin);
  } finally {
    await server.close();
  }
  // The dev server, on a port of this suite's range (README's command takes Parcel's default).
  started = Date.now();
  const port = String(Number(process.env.CLEF_TEST_PORT || 5179) + 21);
  const dev = await start(
    'npx',
    ['parcel', 'src/index.html', '--port', port],
    dir,
    /Server running at (http:\/\/[\w.]+:\d+)/,
  );
  try {
    const origin = dev.match[1]!;
    const result = await answerShown(browser, origin);
    console.log(`[consumer] Parcel dev server: start + first answer ${Date.now() - started} ms`);
    // .proxyrc.cjs sends COOP/COEP: the dev page is cross-origin isolated.
    expectRecipeAnswer(result, origin);
  } finally {
    await dev.stop();
  }
});
