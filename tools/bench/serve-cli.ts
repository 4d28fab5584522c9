/**
 * The built `clef-web serve` (bin/clef-web.mjs; `npm run build:node` first) in a child process
 * for the serve benches, on a free port, and its RSS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ServeChild {
  child: ChildProcess;
  port: number;
  /** The served model's name, from the startup line. */
  model: string;
}

/** Starts `serve <packageDir> --port 0 --quiet <extra>` and resolves once it listens. */
export async function startServeCli(packageDir: string, extra: string[]): Promise<ServeChild> {
  const args = ['bin/clef-web.mjs', 'serve', packageDir, '--port', '0', '--quiet', ...extra];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
  return { child, port, model: /serve: (\S+) \(/.exec(out)?.[1] ?? 'clef-nano' };
}

/** Ends the server (SIGTERM: it finishes what it received) and waits for it to exit. */
export async function stopServeCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** A process's resident set in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}
