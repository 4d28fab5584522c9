/**
 * Progress of a long step with a known count (verify's and convert's fidelity requests,
 * prepare's graphs): done/total, the time each takes and an estimate of what is left. Redrawn
 * in place on a terminal; on a file or pipe one plain line every few seconds and at the end,
 * so a CI log shows the step is alive without a line per item.
 */
export interface StepStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface StepProgressOptions {
  /** What is counted, plural (`requests`, `graphs`). */
  unit: string;
  total: number;
  /** Each line starts with it (`[verify] `). */
  prefix?: string;
  /** Least time between two plain lines (ms; default 5000). */
  plainIntervalMs?: number;
  /** Least time between two redraws on a terminal (ms; default 200). */
  ttyIntervalMs?: number;
  now?: () => number;
}

/** Seconds as m:ss. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The progress text after `done` of `total` in `elapsedMs`. */
export function stepText(done: number, total: number, unit: string, elapsedMs: number): string {
  if (done <= 0) return `0/${total} ${unit}`;
  const each = elapsedMs / 1000 / done;
  const left = each * (total - done);
  const eachText = each >= 1 ? `${each.toFixed(1)} s` : `${Math.round(each * 1000)} ms`;
  return done >= total
    ? `${done}/${total} ${unit} in ${clock(elapsedMs / 1000)} (${eachText} each)`
    : `${done}/${total} ${unit}, ${eachText} each, about ${clock(left)} left`;
}

export class StepProgress {
  private readonly started: number;
  private readonly now: () => number;
  private lastDraw = -Infinity;
  private drew = false;

  constructor(
    private readonly stream: StepStream,
    private readonly options: StepProgressOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
  }

  /** After each item; the last one (done === total) always prints. */
  update(done: number): void {
    const { total, unit, prefix = '' } = this.options;
    const t = this.now();
    const tty = this.stream.isTTY === true;
    const interval = tty
      ? (this.options.ttyIntervalMs ?? 200)
      : (this.options.plainIntervalMs ?? 5000);
    if (done < total && t - this.lastDraw < interval) return;
    this.lastDraw = t;
    const text = prefix + stepText(done, total, unit, t - this.started);
    if (tty) {
      this.stream.write(`\r\x1b[K${text}`);
      this.drew = true;
      if (done >= total) this.finish();
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** Ends a terminal's redrawn line so that what follows starts on a fresh one. */
  finish(): void {
    if (this.drew) this.stream.write('\n');
    this.drew = false;
  }
}
