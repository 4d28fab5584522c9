#!/usr/bin/env node
// `node tools/check-nextjs.mjs [--webpack]`: clef-web in a Next.js app, as a user gets it. Not in
// `npm test` (Next.js adds ~300 MB to the install and a minute to the run); run it by hand after
// changing the package's shape. Needs the package built (`npm run build`).
//
// It packs the tarball, installs it with Next.js and React from the registry into a fresh app in
// the system's temp folder, writes an app-router page whose client component calls createClef(),
// sets COOP/COEP with docs/deploy.md's next.config.ts (read from the doc), copies /ort/ and the bundled model into public/ with
// `npx clef-web assets public --no-worker` (Next.js bundles the worker itself), runs
// `next build` (Turbopack; --webpack for webpack) and `next start`, and waits for a decision in
// Chromium with every request to the page's own origin. Exit 0 when it decides, 1 otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const NEXT = 'next@16.4.6';
const REACT = ['react@19.3.1', 'react-dom@19.3.1'];
const bundler = process.argv.includes('--webpack') ? '--webpack' : '--turbopack';

/** The `next.config.ts` block of docs/deploy.md's Next.js section, verbatim. */
function deployDocNextConfig() {
  const doc = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Next.js'));
  const block = /^```\w*\n(\/\/ next\.config\.ts\n[\s\S]*?)^```/m.exec(section);
  if (!block) throw new Error('docs/deploy.md has no next.config.ts block under "### Next.js"');
  return block[1];
}

const FILES = {
  'package.json': JSON.stringify({ name: 'next-consumer', private: true }, null, 2),
  // docs/deploy.md's next.config.ts, as written there (the file create-next-app writes).
  'next.config.ts': deployDocNextConfig(),
  'app/layout.js': `export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
`,
  'app/page.js': `import Decide from './decide';

export default function Page() {
  return <Decide />;
}
`,
  'app/decide.js': `'use client';
import { useEffect, useState } from 'react';
import { createClef } from 'clef-web';

export default function Decide() {
  const [route, setRoute] = useState('deciding');
  useEffect(() => {
    let clef;
    (async () => {
      clef = await createClef({ device: 'wasm' });
      const response = await clef.systemone({
        model: 'clef-nano',
        state: "There are two charges on my card from a shop I've never been to",
        questions: {
          route: {
            type: 'choice',
            criteria: {
              report_fraud: 'Reports fraudulent charges.',
              card_declined: 'Asks why their card was declined.',
              none: null,
            },
          },
        },
      });
      window.__clefResult = { response, info: await clef.info(), isolated: crossOriginIsolated };
      setRoute(response.answers.route.choice);
    })().catch((e) => setRoute('error: ' + e.message));
    return () => void clef?.dispose();
  }, []);
  return <p id="route">{route}</p>;
}
`,
};

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}\n${r.stderr}`;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Stops a detached child's whole process group and waits for the child to exit. */
function stopGroup(child) {
  const signal = (s) => {
    try {
      process.kill(-child.pid, s);
    } catch {
      // gone already
    }
  };
  if (child.exitCode !== null || child.signalCode !== null) {
    signal('SIGKILL');
    return Promise.resolve();
  }
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => signal('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      signal('SIGKILL');
      resolveStop();
    });
    signal('SIGTERM');
  });
}

const app = mkdtempSync(join(tmpdir(), 'clef-web-next-'));
let server = null;
let browser = null;
let ok = false;
try {
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', app], ROOT),
  );
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(join(app, path, '..'), { recursive: true });
    writeFileSync(join(app, path), text);
  }
  let t = Date.now();
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      join(app, packed[0].filename),
      NEXT,
      ...REACT,
    ],
    app,
  );
  console.log(`[next] npm install: ${Date.now() - t} ms`);
  run('npx', ['clef-web', 'assets', 'public', '--no-worker'], app);
  t = Date.now();
  const built = run('npx', ['next', 'build', bundler], app);
  console.log(`[next] next build ${bundler}: ${Date.now() - t} ms`);
  if (/warn/i.test(built)) console.log(`[next] the build warned:\n${built}`);

  const port = await freePort();
  server = spawn('npx', ['next', 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: app,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  await new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`next start not ready:\n${out}`)), 60_000);
    const onData = (chunk) => {
      out += chunk;
      if (/Ready in/.test(out)) {
        clearTimeout(timer);
        ready();
      }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`next start exited (${code}):\n${out}`));
    });
  });

  const origin = `http://127.0.0.1:${port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  const requested = [];
  page.context().on('request', (r) => requested.push(r.url()));
  t = Date.now();
  await page.goto(`${origin}/`);
  const handle = await page.waitForFunction(() => globalThis.__clefResult, undefined, {
    timeout: 120_000,
  });
  const result = await handle.jsonValue();
  const route = result.response.answers.route;
  const foreign = requested.filter((url) => !url.startsWith(`${origin}/`));
  console.log(
    `[next] ${Date.now() - t} ms to the answer: ${route.choice} (${route.confidence}) on ` +
      `${result.info.device}, cross-origin isolated: ${result.isolated}, other origins: ${foreign.length}`,
  );
  ok = route.choice === 'report_fraud' && result.isolated === true && foreign.length === 0;
} catch (e) {
  console.error(`[next] ${e.message}`);
} finally {
  await browser?.close();
  if (server) await stopGroup(server);
  rmSync(app, { recursive: true, force: true });
}
console.log(ok ? '[next] ok' : '[next] FAILED');
process.exitCode = ok ? 0 : 1;
