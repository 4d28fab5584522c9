// Processes a test run left behind. `npm test` (tools/test-all.mjs) puts a fresh
// CLEF_TEST_RUN=<id> in its environment, which every process the suite starts inherits (npx's
// children, a Vite server, `clef-web serve`, Chromium) and keeps even when its parent dies and it
// is re-parented. After each half of the suite has exited, any process still carrying the id
// is a leak: the run fails and names it. Linux (/proc); elsewhere the check says it cannot run.
import { readdirSync, readFileSync } from 'node:fs';

export const RUN_MARKER = 'CLEF_TEST_RUN';

/** Whether this platform lets the check see other processes' environments. */
export function canScanProcesses() {
  try {
    readdirSync('/proc');
    readFileSync(`/proc/${process.pid}/environ`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Processes other than this one whose environment holds RUN_MARKER=runId, with their command
 * lines. Processes whose environment cannot be read (another user's) are not ours.
 */
export function processesMarked(runId) {
  const needle = `${RUN_MARKER}=${runId}`;
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(needle)) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      // gone meanwhile
    }
    // A zombie (exited, not yet reaped) holds no environment any more, so is not listed.
    found.push({ pid: Number(name), command });
  }
  return found;
}
