/**
 * Progress of `clef-web decide` on stderr: a bar redrawn in place on a terminal, plain lines
 * (every few seconds) when stderr is a file or a pipe, so logs stay readable.
 */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** Lines in the input. */
  total: number;
  /** Lines already answered by an earlier run. */
  skipped: number;
  /** Least time between two redraws on a terminal (ms). */
  ttyIntervalMs?: number;
  /** Least time between two plain lines (ms). */
  plainIntervalMs?: number;
  now?: () => number;
}

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.round(seconds);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

export class Progress {
  private readonly tty: boolean;
  private readonly started: number;
  private lastDraw = -Infinity;
  private drewBar = false;
  private readonly now: () => number;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: ProgressOptions,
  ) {
    this.tty = stream.isTTY === true;
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
  }

  /** `done` counts lines of this run (skipped ones not included). */
  update(done: number, errors: number, force = false): void {
    const t = this.now();
    const interval = this.tty
      ? (this.options.ttyIntervalMs ?? 100)
      : (this.options.plainIntervalMs ?? 5000);
    if (!force && t - this.lastDraw < interval) return;
    this.lastDraw = t;
    const { total, skipped } = this.options;
    const position = skipped + done;
    const seconds = (t - this.started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? (total - position) / rate : Infinity;
    const percent = total > 0 ? Math.floor((100 * position) / total) : 100;
    const facts = `${position}/${total} ${rate.toFixed(1)}/s errors ${errors} eta ${clock(eta)}`;
    if (this.tty) {
      const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - facts.length - 10));
      const filled = total > 0 ? Math.round((width * position) / total) : width;
      const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
      this.stream.write(`\r\x1b[K[${bar}] ${String(percent).padStart(3)}% ${facts}`);
      this.drewBar = true;
    } else {
      this.stream.write(`decide: ${percent}% ${facts}\n`);
    }
  }

  /** Ends the bar's line so what follows starts on a fresh one. */
  finish(): void {
    if (this.tty && this.drewBar) this.stream.write('\n');
  }
}
