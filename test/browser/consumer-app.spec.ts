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
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFirefox, type RunningFirefox } from '../firefox/support/launch.js';
import { ELEMENT_PAGE, MAIN_JS, NODE_TS, TYPED_TS, TYPED_TSX } from './consumer-fixtures.js';
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
} from './consumer-helpers.js';

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
/** The bundlers the other apps are built with (issue 25), installed from the registry. */
const WEBPACK = 'webpack@5.113.0';
const WEBPACK_CLI = 'webpack-cli@7.3.1';
const ESBUILD = `esbuild@${versionOf('esbuild')}`;
/** React's types, for the JSX typings of the elements. */
const REACT_TYPES = '@types/react@19.3.3';

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
  expect(existsSync(join(app, 'dist/ort/ort-wasm-simd-threaded.asyncify.wasm'))).toBe(true);
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

test('npx clef-web serve from the installed package: a one-line hint, then the bundled model', async () => {
  // In a process group, so that a server npx started is ended too should it not exit.
  const missing = await runToExit('npx', ['clef-web', 'serve', '--port', '0'], app, 60_000);
  expect(missing.status).toBe(1);
  const lines = missing.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('npm install onnxruntime-node@1.30.0');

  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      'onnxruntime-node@1.30.0',
      '--onnxruntime-node-install=skip',
    ],
    app,
  );
  const served = await start(
    'npx',
    ['clef-web', 'serve', '--port', '0', '--threads', '1', '--quiet'],
    app,
    /listening on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  try {
    const res = await fetch(`${served.match[1]}/v1/systemone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'clef-nano',
        state: 'can you move 200 dollars from checking into my savings account',
        questions: {
          route: {
            type: 'choice',
            criteria: { transfer: 'Wants to move money between accounts.', pay_bill: null },
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.model).toBe('clef-nano');
    expect(body.answers.route.choice).toBe('transfer');
  } finally {
    await served.stop();
  }
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
