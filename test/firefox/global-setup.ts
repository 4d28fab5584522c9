/**
 * The Firefox suite's dev server: Vite with the clef-web/vite plugin (COOP/COEP, /ort/, the
 * bundled clef-nano), as the Chromium suite's playwright.config.ts starts it, in its own
 * process group, stopped and awaited after the suite. No Firefox is a failure saying what to
 * install, before anything starts.
 */
import type { TestProject } from 'vitest/node';
import { FIREFOX_INSTALL_HINT, firefoxAvailable } from '../../tools/firefox.mjs';
import { spawnGroup, stopGroup } from '../support/processes.js';

export default async function setup(project: TestProject) {
  if (!firefoxAvailable()) throw new Error(FIREFOX_INSTALL_HINT);
  const port = Number(process.env.CLEF_TEST_PORT || 5180);
  const origin = `http://localhost:${port}`;
  const vite = spawnGroup(
    'node_modules/.bin/vite',
    ['--port', String(port), '--strictPort', '--host', 'localhost'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  vite.stdout?.on('data', (d) => (output += d));
  vite.stderr?.on('data', (d) => (output += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (vite.exitCode !== null) throw new Error(`vite exited (${vite.exitCode}):\n${output}`);
    const up = await fetch(`${origin}/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stopGroup(vite);
      throw new Error(`vite did not answer on ${origin} within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  project.provide('origin', origin);
  return () => stopGroup(vite);
}
