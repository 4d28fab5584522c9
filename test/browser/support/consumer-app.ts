/**
 * Helpers for the consumer-app test (test/browser/consumer-app.spec.ts): commands run in the
 * fresh app, long-running servers that are always stopped and awaited, a plain static server
 * with COOP/COEP, and a page's first decision.
 */
import { expect, type Browser } from '@playwright/test';
import { spawnSync, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { groupMembers, spawnGroup, stopGroup } from '../../support/processes.js';
import puppeteer from 'puppeteer-core';
import type { RunningFirefox } from '../../firefox/support/launch.js';
import { staticSite, type StaticSite } from '../../support/static-site.js';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

/** `npm pack --json`'s answer for one package. */
export interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: Array<{ path: string; size: number }>;
}

// eslint-disable-next-line no-control-regex -- the escape that starts a terminal colour
const ANSI_COLOUR = /\x1b\[[0-9;]*m/g;

/** Runs a command to completion; its output (colours removed), or a throw unless it exits 0. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return `${r.stdout}\n${r.stderr}`.replace(ANSI_COLOUR, '');
}

export interface Started {
  child: ChildProcess;
  match: RegExpMatchArray;
  /** Everything it printed so far (colours removed). */
  output: () => string;
  /** Ends the process and everything it started; resolves once all of it has exited. */
  stop: () => Promise<void>;
}

/** The process groups `start` began, so the suite can check that none of them outlived it. */
const groups: number[] = [];

/** Members of every group `start` began that are still running (none, once all are stopped). */
export function leftoverProcesses(): number[] {
  return groups.flatMap((pgid) => groupMembers(pgid));
}

/**
 * Runs a command to its exit in a process group of its own, and ends whatever is left of the
 * group afterwards, on every path: a timeout stops the whole group (npx and the program it
 * started, which spawnSync's `timeout` would leave running) and rejects.
 */
export async function runToExit(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawnGroup(cmd, args, {
    cwd,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<null, Readable, Readable>;
  if (child.pid !== undefined) groups.push(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', reject);
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), timeoutMs)));
  let status: number | null | 'late';
  try {
    status = await Promise.race([exited, late]);
    if (status === 'late') {
      throw new Error(`${cmd} ${args.join(' ')} still running after ${timeoutMs / 1000} s`);
    }
  } finally {
    clearTimeout(timer);
    await stopGroup(child);
    // Every writer of its pipes has exited: the rest of its output arrives, then 'close'.
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))]);
  }
  return { status, stdout, stderr };
}

/**
 * Starts a long-running command in its own process group (npx starts the real server as a
 * child) and resolves with the first match of `ready` in its output; on a timeout or an early
 * exit it stops the group before rejecting.
 */
export function start(cmd: string, args: string[], cwd: string, ready: RegExp): Promise<Started> {
  const child = spawnGroup(cmd, args, {
    cwd,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<null, Readable, Readable>;
  if (child.pid !== undefined) groups.push(child.pid);
  let out = '';
  let settled = false;
  const stop = () => stopGroup(child);
  return new Promise((resolveStart, reject) => {
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${cmd} ${why}:\n${out}`)));
    };
    const timer = setTimeout(() => fail('not ready in 120 s'), 120_000);
    const onData = (chunk: Buffer) => {
      // Vite colours its banner: match on the text alone.
      out += chunk.toString().replace(ANSI_COLOUR, '');
      const match = settled ? null : out.match(ready);
      if (match) {
        settled = true;
        clearTimeout(timer);
        resolveStart({ child, match, output: () => out, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => fail(`exited (${code})`));
  });
}

/** Any static server with COOP/COEP (here node:http), serving `dir`. */
export const staticServer = (dir: string): Promise<StaticSite> => staticSite(dir, true);

/** Opens the app at `origin` and returns its first decision, with every URL it requested. */
export async function firstDecision(browser: Browser, origin: string) {
  const page = await browser.newPage();
  const requested: string[] = [];
  const errors: string[] = [];
  page.context().on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  const started = Date.now();
  try {
    await page.goto(`${origin}/`);
    const handle = await page
      .waitForFunction(() => (window as any).__clefResult, undefined, { timeout: 120_000 })
      .catch((e: Error) => {
        throw new Error(`${e.message}\npage errors: ${errors.join('\n')}`);
      });
    const result = (await handle.jsonValue()) as any;
    return { ...result, requested, ms: Date.now() - started };
  } finally {
    await page.close();
  }
}

/**
 * The same first decision in Firefox ESR (a session on `firefox`, in a fresh browser context):
 * `window.__clefResult` and every request the page and its workers made.
 */
export async function firstDecisionInFirefox(firefox: RunningFirefox, origin: string) {
  const browser = await puppeteer.connect({
    browserWSEndpoint: firefox.wsEndpoint,
    protocol: 'webDriverBiDi',
    protocolTimeout: 150_000,
  });
  const context = await browser.createBrowserContext();
  const requested: string[] = [];
  const errors: string[] = [];
  const started = Date.now();
  try {
    const page = await context.newPage();
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => errors.push(String((e as Error).message ?? e)));
    await page.goto(`${origin}/`);
    const handle = await page
      .waitForFunction(() => (window as any).__clefResult, { timeout: 120_000 })
      .catch((e: Error) => {
        throw new Error(`Firefox: ${e.message}\npage errors: ${errors.join('\n')}`);
      });
    const result = (await handle.jsonValue()) as any;
    return { ...result, requested, ms: Date.now() - started };
  } finally {
    await context.close();
    await browser.disconnect();
  }
}

/** The page decided the fraud message with the bundled model, on WASM, same-origin only. */
export function expectFraudRoute(result: any, origin: string) {
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

/**
 * Writes `site`'s index.html, serves `site` statically and decides in it, in Chromium and in
 * Firefox (nothing 404s).
 */
export async function decideOnStaticSite(
  browser: Browser,
  site: string,
  script: string,
  label: string,
  firefox: RunningFirefox,
) {
  writeFileSync(join(site, 'index.html'), `<!doctype html><title>${label}</title>${script}\n`);
  const server = await staticServer(site);
  try {
    const result = await firstDecision(browser, server.origin);
    console.log(`[consumer] ${label}: page load to first answer ${result.ms} ms`);
    expectFraudRoute(result, server.origin);
    const inFirefox = await firstDecisionInFirefox(firefox, server.origin);
    console.log(`[consumer] ${label} in Firefox: page load to first answer ${inFirefox.ms} ms`);
    expectFraudRoute(inFirefox, server.origin);
    expect(server.missing.filter((path) => path !== '/favicon.ico')).toEqual([]);
  } finally {
    await server.close();
  }
}

/** Runs the checkout's TypeScript in `app` on `file` (written from `source`) with `options`. */
export function typecheck(
  app: string,
  file: string,
  source: string,
  options: Record<string, unknown>,
) {
  writeFileSync(join(app, file), source);
  const config = `tsconfig.${file}.json`;
  writeFileSync(
    join(app, config),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        strict: true,
        noEmit: true,
        noUncheckedIndexedAccess: true,
        ...options,
      },
      files: [file],
    }),
  );
  run('node', [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], app);
}
