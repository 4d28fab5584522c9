/**
 * A run's half-written folders in Node: `.<out>.partial-<pid>` (and the release's) exist from
 * the release phase until the final rename. SIGINT or SIGTERM while they do removes them before
 * the process ends; a later run of the same output name removes the ones a dead process left
 * (and says so), and refuses to race a live one.
 */
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TrainError } from '../../build/train/errors.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // there, someone else's
  }
}

/**
 * Removes the partial folders of `dirs` that runs now gone left behind; returns what it removed.
 * A partial of a process still running means another run writes the same output: refused.
 */
export function removeStalePartials(dirs: readonly string[], ownTag: string): string[] {
  const removed: string[] = [];
  for (const dir of dirs) {
    const prefix = `.${basename(dir)}.partial-`;
    let names: string[];
    try {
      names = readdirSync(dirname(dir));
    } catch {
      continue; // no parent yet: nothing left there
    }
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const tag = name.slice(prefix.length);
      const pid = Number(tag);
      if (tag === ownTag || !/^\d+$/.test(tag)) continue;
      if (alive(pid)) {
        throw new TrainError(
          'train_options_invalid',
          `${join(dirname(dir), name)} is being written by another run (process ${pid}): wait for it, or give another --out`,
          { pid },
        );
      }
      rmSync(join(dirname(dir), name), { recursive: true, force: true });
      removed.push(join(dirname(dir), name));
    }
  }
  return removed;
}

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * While `dirs` are being written: on SIGINT or SIGTERM, removes them; then, if nothing else
 * listens for the signal, ends the process as the signal would have (so a shell sees Ctrl-C),
 * else marks the run interrupted (`check` throws) and leaves the decision to the listener.
 */
export function guardPartials(dirs: readonly string[]) {
  let interrupted: NodeJS.Signals | null = null;
  const handlers = new Map<NodeJS.Signals, () => void>();
  const dispose = () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    handlers.clear();
  };
  for (const signal of SIGNALS) {
    const handler = () => {
      interrupted = signal;
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      if (process.listenerCount(signal) === 1) {
        process.stderr.write(
          `clef-web train: ${signal}: stopped; removed the partial folders ${dirs.join(', ')}\n`,
        );
        dispose();
        process.kill(process.pid, signal);
      }
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  return {
    dispose,
    /** Throws train_interrupted once a signal came (a listener kept the process alive). */
    check(): void {
      if (interrupted !== null) {
        throw new TrainError(
          'train_interrupted',
          `${interrupted}: the run stopped; its partial folders were removed`,
          { signal: interrupted },
        );
      }
    },
  };
}
