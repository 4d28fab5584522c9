/**
 * Child processes that tests start, ended on every path. `spawnGroup` makes the
 * child the leader of its own process group, so that `stopGroup` reaches what it started in
 * turn (npx's node, Vite's esbuild service): a SIGTERM to the group, a SIGKILL to the group if
 * the leader has not exited after `graceMs`, then a SIGKILL to what is left of the group once
 * the leader has exited, and the promise settles only when the group is empty. The suite's
 * leak check (tools/leftover-processes.mjs, run by `npm test`) catches whatever escapes this.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export function spawnGroup(cmd: string, args: readonly string[], options: SpawnOptions = {}) {
  return spawn(cmd, args, { ...options, detached: true });
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/** Live members of process group `pgid` (Linux: /proc; elsewhere: unknown, so none listed). */
export function groupMembers(pgid: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp ...": comm may hold spaces, so after ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/** Ends `child` and its process group, and resolves once the leader and the group are gone. */
export async function stopGroup(child: ChildProcess, graceMs = 5_000): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  const running = child.exitCode === null && child.signalCode === null;
  const exited = running ? new Promise<void>((r) => child.once('exit', () => r())) : undefined;
  signalGroup(pgid, 'SIGTERM');
  const escalate = setTimeout(() => signalGroup(pgid, 'SIGKILL'), graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(escalate);
  }
  signalGroup(pgid, 'SIGKILL');
  for (let i = 0; groupMembers(pgid).length > 0; i++) {
    if (i === 200) throw new Error(`process group ${pgid} still has ${groupMembers(pgid)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
