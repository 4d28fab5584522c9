/**
 * clef-web as a user gets it, outside the checkout: `npm pack`, the tarball installed into a
 * fresh Vite app in the system's temp folder, built with the `clef-web/vite` plugin, served by
 * `vite preview`, and a decision in Chromium from `createClef()` with no options (the bundled
 * clef-nano) — every request to the page's own origin. The same app then runs
 * `npx clef-web serve` from the installed package: first without onnxruntime-node (a one-line
 * message naming the install), then with it. And the tarball: what it holds and its size.
 *
 * Needs the package built (`npm test` builds it first; alone: `npm run build`).
 */
import { expect, test } from '@playwright/test';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { spawnGroup, stopGroup } from '../support/processes.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MIB = 1024 * 1024;
/** The budget for the packed tarball. */
const PACKED_LIMIT = 8 * MIB;

interface PackFile {
  path: string;
  size: number;
}
interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: PackFile[];
}

let app = '';
let pack: PackResult;
let tarball = '';

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

// eslint-disable-next-line no-control-regex -- the escape that starts a terminal colour
const ANSI_COLOUR = /\x1b\[[0-9;]*m/g;

/**
 * Starts a long-running command in its own process group and resolves with the first stdout
 * match of `ready`. If it is not ready in time, or exits first, the whole group is stopped and
 * awaited before the promise rejects: nothing is left running on any path. Callers stop it with
 * `stopGroup(child)` (which reaches the process npx starts, not only the npx wrapper).
 */
function start(
  cmd: string,
  args: string[],
  cwd: string,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawnGroup(cmd, args, { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopGroup(child).then(
        () => reject(error),
        (e: unknown) => reject(new Error(`${error.message}\n(and stopping it: ${String(e)})`)),
      );
    };
    const timer = setTimeout(() => fail(new Error(`${cmd} not ready:\n${out}`)), 120_000);
    const onData = (chunk: Buffer) => {
      // Vite colours its banner: match on the text alone.
      out += chunk.toString().replace(ANSI_COLOUR, '');
      const match = out.match(ready);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolvePromise({ child, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (e) => fail(e));
    child.once('exit', (code) => fail(new Error(`${cmd} exited (${code}):\n${out}`)));
  });
}

const VITE_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/vite/package.json'), 'utf8')) as {
    version: string;
  }
).version;

const MAIN_JS = `
import { createClef } from 'clef-web';

const clef = await createClef({ device: 'wasm' });
const response = await clef.systemone({
  model: 'clef-nano',
  state: "There are two charges on my card from a shop I've never been to, I think someone stole my card number",
  questions: {
    route: {
      type: 'choice',
      instructions: 'Route this message to the team that handles it.',
      criteria: {
        report_fraud: 'Reports fraudulent charges.',
        card_declined: 'Asks why their card was declined.',
        transfer: 'Wants to move money between accounts.',
        none: 'The message matches none of the other options.',
      },
    },
  },
});
window.__clefResult = { response, info: await clef.info(), isolated: crossOriginIsolated };
`;

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
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `vite@${VITE_VERSION}`],
    app,
  );
});

test.afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
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
    'models/clef-nano/manifest.json',
    'models/clef-nano/README.md',
  ]) {
    expect(paths, required).toContain(required);
  }
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

test('a browser user’s install pulls neither onnxruntime-node nor sharp', () => {
  expect(existsSync(join(app, 'node_modules/clef-web/package.json'))).toBe(true);
  expect(existsSync(join(app, 'node_modules/onnxruntime-node'))).toBe(false);
  expect(existsSync(join(app, 'node_modules/sharp'))).toBe(false);
  expect(existsSync(join(app, 'node_modules/@huggingface'))).toBe(false);
});

const TYPED_TS = `
import { createClef, type Clef } from 'clef-web';
import clefWeb from 'clef-web/vite';
import { createSystemOneRoute } from 'clef-web/sw';
import { loadNodePackage } from 'clef-web/node';

export const plugin = clefWeb();
export const route = createSystemOneRoute;
export const node = loadNodePackage;
export async function decide(): Promise<string> {
  const clef: Clef = await createClef();
  const response = await clef.systemone({
    model: 'clef-nano',
    state: 'My card was charged twice.',
    questions: { urgent: { type: 'noul', instructions: 'Today?' } },
  });
  await clef.systemone({
    model: 'clef-nano',
    state: 'x',
    // @ts-expect-error a misspelt field is caught
    qestions: { urgent: { type: 'noul' } },
  });
  // @ts-expect-error an unknown question type is caught
  await clef.systemone({ model: 'clef-nano', state: 'x', questions: { u: { type: 'yesno' } } });
  return response.model;
}
`;

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

/** Opens the app at `origin` and returns its first decision, with every URL it requested. */
async function firstDecision(browser: import('@playwright/test').Browser, origin: string) {
  const page = await browser.newPage();
  const requested: string[] = [];
  page.context().on('request', (r) => requested.push(r.url()));
  const started = Date.now();
  await page.goto(`${origin}/`);
  const handle = await page.waitForFunction(() => (window as any).__clefResult, undefined, {
    timeout: 120_000,
  });
  const result = (await handle.jsonValue()) as any;
  const ms = Date.now() - started;
  await page.close();
  return { ...result, requested, ms };
}

function expectFraudRoute(result: any, origin: string) {
  expect(result.isolated).toBe(true);
  expect(result.response.model).toBe('clef-nano');
  expect(result.info.device).toBe('wasm');
  const route = result.response.answers.route;
  expect(route.choice).toBe('report_fraud');
  const total = Object.values(route.probabilities as Record<string, number>).reduce(
    (a, b) => a + b,
    0,
  );
  expect(Math.abs(total - 1)).toBeLessThan(5e-4);
  expect(result.requested.length).toBeGreaterThan(5);
  expect(result.requested.filter((url: string) => !url.startsWith(`${origin}/`))).toEqual([]);
}

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
  } finally {
    await stopGroup(dev.child);
  }
});

test('createClef() decides in a fresh Vite app built with clef-web/vite, same-origin only', async ({
  browser,
}) => {
  run('npx', ['vite', 'build'], app);
  expect(existsSync(join(app, 'dist/ort/ort-wasm-simd-threaded.asyncify.wasm'))).toBe(true);
  expect(existsSync(join(app, 'dist/clef-web/models/clef-nano/manifest.json'))).toBe(true);
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
  } finally {
    await stopGroup(preview.child);
  }
});

test('npx clef-web serve from the installed package: a one-line hint, then the bundled model', async () => {
  const missing = spawnSync('npx', ['clef-web', 'serve', '--port', '0'], {
    cwd: app,
    encoding: 'utf8',
    timeout: 60_000,
  });
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
    await stopGroup(served.child);
  }
});

const ELEMENT_PAGE = `<!doctype html>
<title>one script tag</title>
<script type="module" src="/clef-web/clef-decide.js"></script>
<clef-decide device="wasm" state="my card got declined at the grocery store even though I have money, why?">
  <clef-choice name="route" instructions="Route this message to the team that handles it.">
    <clef-option value="report_fraud">Reports fraudulent charges.</clef-option>
    <clef-option value="card_declined">Asks why their card was declined.</clef-option>
    <clef-option value="none">The message matches none of the other options.</clef-option>
  </clef-choice>
</clef-decide>
<script type="module">
  document.querySelector('clef-decide').addEventListener('clef-decision', (e) => {
    window.__clefResult = e.detail.response;
  });
</script>
`;

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

/** Any static server with COOP/COEP (here node:http), serving `dir`. */
function staticServer(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    const file = path.endsWith(sep) ? join(path, 'index.html') : path;
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    res.end(readFileSync(file));
  });
  return new Promise((resolveServer) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolveServer({ server, origin: `http://127.0.0.1:${port}` });
    }),
  );
}

test('one script tag: `clef-web assets --element` and any static server', async ({ browser }) => {
  const site = join(app, 'static-site');
  mkdirSync(site, { recursive: true });
  run('npx', ['clef-web', 'assets', site, '--element'], app);
  writeFileSync(join(site, 'index.html'), ELEMENT_PAGE);
  const { server, origin } = await staticServer(site);
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
  } finally {
    server.close();
  }
});
