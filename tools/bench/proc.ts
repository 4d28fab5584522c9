/**
 * Memory of the Chromium processes this bench started, from Linux's /proc: resident and peak
 * resident (VmRSS, VmHWM) per process type. The engine's worker (JS heap, wasm memory, package
 * bytes) lives in the renderer; SwiftShader's "GPU buffers" live in the GPU process. Writing 5
 * to clear_refs resets a process's peak, so each phase gets its own peak. Elsewhere (no /proc)
 * every figure is null.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

export interface ProcMemory {
  renderer: { rss: number; peak: number } | null;
  gpu: { rss: number; peak: number } | null;
}

interface ChromiumProcess {
  pid: number;
  type: 'browser' | 'renderer' | 'gpu' | 'other';
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
}

/** Chromium processes descending from this Node process (other helpers' browsers excluded). */
export function chromiumProcesses(): ChromiumProcess[] {
  if (!existsSync('/proc/self/stat')) return [];
  const root = process.pid;
  const out: ChromiumProcess[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (!/chrom/i.test(cmd)) continue;
    let p: number | null = pid;
    let mine = false;
    for (let depth = 0; p !== null && p > 1 && depth < 12; depth++) {
      p = parentOf(p);
      if (p === root) {
        mine = true;
        break;
      }
    }
    if (!mine) continue;
    const type = /--type=renderer/.test(cmd)
      ? 'renderer'
      : /--type=gpu-process/.test(cmd)
        ? 'gpu'
        : /--type=/.test(cmd)
          ? 'other'
          : 'browser';
    out.push({ pid, type });
  }
  return out;
}

function status(pid: number): { rss: number; peak: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN);
    return { rss: kb('VmRSS') * 1024, peak: kb('VmHWM') * 1024 };
  } catch {
    return null;
  }
}

function sum(
  list: Array<{ rss: number; peak: number } | null>,
): { rss: number; peak: number } | null {
  const present = list.filter((x): x is { rss: number; peak: number } => x !== null);
  if (present.length === 0) return null;
  return {
    rss: present.reduce((n, x) => n + x.rss, 0),
    peak: present.reduce((n, x) => n + x.peak, 0),
  };
}

export function readMemory(): ProcMemory {
  const procs = chromiumProcesses();
  return {
    renderer: sum(procs.filter((p) => p.type === 'renderer').map((p) => status(p.pid))),
    gpu: sum(procs.filter((p) => p.type === 'gpu').map((p) => status(p.pid))),
  };
}

/** Starts a new peak-measuring phase for every process of this browser. */
export function resetPeaks(): void {
  for (const p of chromiumProcesses()) {
    try {
      writeFileSync(`/proc/${p.pid}/clear_refs`, '5');
    } catch {
      // Not permitted here: peaks then cover the process's whole life (said in the output).
    }
  }
}

export function loadAverage(): number[] | null {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return null;
  }
}

/** The machine facts every results file records, with the load average at start and end. */
export function machineFacts(loadStart: number[] | null, loadEnd = loadAverage()) {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverage: { start: loadStart, end: loadEnd },
  };
}
