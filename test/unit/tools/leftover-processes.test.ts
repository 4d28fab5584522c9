// The suite's leak check: `npm test` fails for a process that carries its run id
// after a half of the suite has exited. Checked here: a process started with the id is found,
// so is one whose parent has exited (re-parented, as npx's child was when only npx was
// signalled), and neither once ended; and stopGroup ends a wrapper and what it started.
// Every wait has a deadline and ends with the test's timeout; what a test started is killed in
// a finally, by its process group (so without relying on the stopGroup under test).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canScanProcesses,
  processesMarked,
  RUN_MARKER,
} from '../../../tools/leftover-processes.mjs';
import { groupMembers, spawnGroup, stopGroup } from '../../support/processes.js';

const linux = process.platform === 'linux';

/** Polls `condition` until it holds; fails after `ms`, or once `signal` aborts (the test ended). */
async function until(condition: () => boolean, what: string, signal: AbortSignal, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    signal.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIGKILL to process group `pgid`, whatever is left of it. */
function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

describe('the leftover-process check', () => {
  it('can see processes here (Linux), so it is not silently skipped', () => {
    expect(canScanProcesses()).toBe(linux);
  });

  it.runIf(linux)(
    'finds a marked process and an orphaned grandchild, and not once they end',
    async ({ signal }) => {
      const runId = randomUUID();
      const env = { ...process.env, [RUN_MARKER]: runId };
      // A wrapper that starts a long-lived child and exits at once, as a killed npx leaves one.
      // In a process group of its own, which the orphan stays in: the finally reaches it.
      const wrapper = spawnGroup('sh', ['-c', 'sleep 300 & echo $!'], {
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      wrapper.stdout!.on('data', (d: Buffer) => (out += d));
      const wrapperExited = new Promise((r) => wrapper.once('exit', r));
      const direct = spawnGroup(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
        env,
        stdio: 'ignore',
      });
      try {
        await wrapperExited;
        // Its output may come after its exit (the orphan holds the pipe open, so no 'close').
        await until(() => out.endsWith('\n'), 'the orphan pid printed', signal);
        const orphan = Number(out.trim());
        expect(orphan, `the wrapper printed ${JSON.stringify(out)}`).toBeGreaterThan(0);
        // (The orphan is listed as `sh` from its fork until its exec of `sleep`.)
        const orphanSleeps = () =>
          processesMarked(runId).find((p) => p.pid === orphan)?.command === 'sleep 300';
        await until(
          () => processesMarked(runId).length === 2 && orphanSleeps(),
          'both marked processes, the orphan running sleep',
          signal,
        );
        expect(
          processesMarked(runId)
            .map((p) => p.pid)
            .sort(),
        ).toEqual([orphan, direct.pid].sort());
        expect(processesMarked(runId).find((p) => p.pid === orphan)?.command).toBe('sleep 300');
      } finally {
        killGroup(wrapper.pid);
        killGroup(direct.pid);
      }
      await until(() => processesMarked(runId).length === 0, 'both gone', signal);
      expect(processesMarked(randomUUID())).toEqual([]);
    },
  );

  it.runIf(linux)(
    'stopGroup ends a wrapper and the process it started, and waits for both',
    async ({ signal }) => {
      const child = spawnGroup('sh', ['-c', 'sleep 300 & wait'], { stdio: 'ignore' });
      try {
        await until(() => groupMembers(child.pid!).length === 2, 'the wrapper and sleep', signal);
        await stopGroup(child);
        expect(child.signalCode ?? child.exitCode).not.toBeNull();
        expect(groupMembers(child.pid!)).toEqual([]);
      } finally {
        killGroup(child.pid);
      }
    },
  );
});
