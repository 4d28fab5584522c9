/**
 * `clef-web train`'s progress on stderr. A fit reports every 20 L-BFGS iterations and the teacher
 * every answer: a line each is hundreds of lines for an 80-line file. Those updates within a
 * phase (ticks) rewrite one line in place on a terminal; in a log (stderr not a terminal) one is
 * written at most every LOG_TICK_MS, so a slow phase still shows it is alive. Everything else is a
 * line of its own in both: a phase's first update and its last, and any message outside the fit
 * (a teacher's retry, its summary, the converter's fidelity pass).
 */
import type { TrainProgress } from '../../build/train/options.js';
import type { TeacherProgress } from '../../build/train/teacher-options.js';

/** The least time between two tick lines in a log. */
export const LOG_TICK_MS = 10_000;

type Progress = TrainProgress | TeacherProgress;

/** The terminal's "back to the line's start, clear it". */
const REWRITE = '\r\x1b[K';

export interface ProgressLines {
  write(p: Progress): void;
  /** Ends a line left open by a tick (before an error or the result is printed). */
  end(): void;
}

export function progressLines(
  out: { write(text: string): unknown },
  format: (p: Progress) => string,
  options: { terminal: boolean; now?: () => number },
): ProgressLines {
  const now = options.now ?? Date.now;
  let phase: string | null = null;
  let lastLine = -Infinity;
  let open = false;
  return {
    write(p) {
      const text = format(p);
      const tick =
        p.phase === phase && p.done < p.total && (p.phase === 'fit' || p.message === undefined);
      phase = p.phase;
      if (options.terminal) {
        out.write(tick ? `${REWRITE}${text}` : `${open ? REWRITE : ''}${text}\n`);
        open = tick;
        return;
      }
      const at = now();
      if (tick && at - lastLine < LOG_TICK_MS) return;
      out.write(`${text}\n`);
      lastLine = at;
    },
    end() {
      if (open) out.write('\n');
      open = false;
    },
  };
}
