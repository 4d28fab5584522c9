/**
 * What the Firefox suite shares: the dev server (Vite with the clef-web/vite plugin: COOP/COEP,
 * /ort/, the bundled clef-nano), as the Chromium suite's playwright.config.ts starts it, and the
 * two Firefoxes of support/firefox.ts. Each in its own process group, stopped and awaited after
 * the suite. No Firefox is a failure saying what to install, before anything starts.
 */
import type { TestProject } from 'vitest/node';
import { FIREFOX_INSTALL_HINT, firefoxAvailable } from '../../tools/firefox.mjs';
import { spawnGroup, stopGroup } from '../support/processes.js';
import { startFirefox, type RunningFirefox } from './support/firefox.js';

async function startVite(origin: string, port: number) {
  const vite = spawnGroup(
    'node_modules/.bin/vite',
    ['--port', String(port), '--strictPort', '--host', 'localhost'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  vite.stdout?.on('data', (d) => (output += d));
  vite.stderr?.on('data', (d) => (output += d));
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (vite.exitCode !== null || vite.signalCode !== null) {
        throw new Error(`vite exited (${vite.exitCode ?? vite.signalCode}):\n${output}`);
      }
      const up = await fetch(`${origin}/`, { signal: AbortSignal.timeout(5_000) }).then(
        async (r) => {
          await r.body?.cancel();
          return r.ok;
        },
        () => false,
      );
      if (up) return vite;
      if (Date.now() > deadline) {
        throw new Error(`vite did not answer on ${origin} within 60 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (e) {
    // Whatever the reason, what it started (its esbuild service) goes with it.
    await stopGroup(vite);
    throw e;
  }
}

export default async function setup(project: TestProject) {
  if (!firefoxAvailable()) throw new Error(FIREFOX_INSTALL_HINT);
  const port = Number(process.env.CLEF_TEST_PORT || 5180);
  const origin = `http://localhost:${port}`;
  const started: RunningFirefox[] = [];
  // All three at once: each spends most of its start waiting.
  const [server, ...launched] = await Promise.allSettled([
    startVite(origin, port),
    startFirefox('default'),
    startFirefox('tuned'),
  ]);
  for (const l of launched) if (l.status === 'fulfilled') started.push(l.value);
  if (server.status === 'rejected') {
    await Promise.allSettled(started.map((f) => f.stop()));
    throw server.reason;
  }
  const vite = server.value;
  try {
    for (const l of launched) if (l.status === 'rejected') throw l.reason;
    const [plain, tuned] = started as [RunningFirefox, RunningFirefox];
    console.log(`[firefox] ${plain.version} (${process.env.FIREFOX_PATH || 'firefox-esr'})`);
    project.provide('origin', origin);
    project.provide('firefox', { default: plain.wsEndpoint, tuned: tuned.wsEndpoint });
  } catch (e) {
    await Promise.allSettled(started.map((f) => f.stop()));
    await stopGroup(vite);
    throw e;
  }
  return async () => {
    const stops = await Promise.allSettled(started.map((f) => f.stop()));
    await stopGroup(vite);
    for (const s of stops) if (s.status === 'rejected') throw s.reason;
  };
}
