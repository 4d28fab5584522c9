/**
 * `clef-web train`'s progress lines: a fit's iteration updates and the teacher's per-answer ones
 * rewrite one line on a terminal and are written at most every LOG_TICK_MS in a log, while a
 * phase's first and last update and every message outside the fit are always lines.
 */
import { describe, expect, it } from 'vitest';
import { formatProgress } from '../../../../src/node/train/cli.js';
import { LOG_TICK_MS, progressLines } from '../../../../src/node/train/progress-lines.js';
import type { TrainProgress } from '../../../../src/build/train/options.js';
import type { TeacherProgress } from '../../../../src/build/train/teacher-options.js';

type Event = TrainProgress | TeacherProgress;

/** A run as the pipeline reports it: 16 fits of 300 iterations (a tick every 20), 100 ms each tick. */
function run(): Array<{ at: number; p: Event }> {
  const events: Array<{ at: number; p: Event }> = [];
  let at = 0;
  const push = (p: Event) => events.push({ at: (at += 100), p });
  push({ phase: 'teacher', done: 0, total: 3 });
  push({ phase: 'teacher', done: 1, total: 3 });
  push({ phase: 'teacher', done: 1, total: 3, message: 'row 2: HTTP 503; try 2 in 1.0 s' });
  push({ phase: 'teacher', done: 2, total: 3 });
  push({ phase: 'teacher', done: 3, total: 3, message: 'kept 3 of 3 answers' });
  push({ phase: 'check', done: 0, total: 1 });
  push({ phase: 'check', done: 1, total: 1, message: '80 examples' });
  for (let fit = 0; fit < 16; fit++)
    for (let iteration = 0; iteration <= 300; iteration += 20)
      push({
        phase: 'fit',
        done: fit,
        total: 16,
        etaMs: 1000,
        message: `fit ${fit + 1} of 16${iteration === 0 ? '' : `, iteration ${iteration}`}`,
      });
  push({ phase: 'fit', done: 16, total: 16 });
  push({ phase: 'convert', done: 0, total: 1, message: 'fidelity on 2 random requests' });
  push({ phase: 'convert', done: 1, total: 1 });
  return events;
}

function written(terminal: boolean): string {
  let text = '';
  let clock = 0;
  const lines = progressLines({ write: (t: string) => (text += t) }, formatProgress, {
    terminal,
    now: () => clock,
  });
  for (const { at, p } of run()) {
    clock = at;
    lines.write(p);
  }
  lines.end();
  return text;
}

describe('progressLines', () => {
  const events = run();
  const seconds = (events.at(-1) as { at: number }).at / 1000;

  it('in a log: a line per phase start and end and per message, a tick at most every 10 s', () => {
    const log = written(false).split('\n').filter(Boolean);
    expect(log[0]).toBe('train: teacher 0/3');
    // The retry and the summary are messages: lines, though the count did not move.
    expect(log).toContain('train: teacher 1/3: row 2: HTTP 503; try 2 in 1.0 s');
    expect(log).toContain('train: teacher 3/3: kept 3 of 3 answers');
    expect(log).toContain('train: check done: 80 examples');
    expect(log).toContain('train: fit 1 of 16, about 1 s left');
    expect(log).toContain('train: fit 16/16');
    expect(log).toContain('train: convert: fidelity on 2 random requests');
    expect(log.at(-1)).toBe('train: convert done');
    const ticks = log.filter((l) => l.includes('iteration'));
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks.length).toBeLessThanOrEqual(Math.ceil((seconds * 1000) / LOG_TICK_MS));
    // Without the throttle every one of the 16 × 15 iteration updates would be a line.
    expect(events.filter((e) => e.p.message?.includes('iteration')).length).toBe(240);
  });

  it('on a terminal: ticks rewrite one line in place, every other update ends its line', () => {
    const text = written(true);
    const lines = text.split('\n');
    // Each full line's last rewrite is what stays on screen.
    const shown = lines.map((l) => l.split('\r\x1b[K').at(-1));
    expect(shown).toContain('train: teacher 1/3: row 2: HTTP 503; try 2 in 1.0 s');
    expect(shown).toContain('train: fit 16/16');
    expect(text).toContain('\r\x1b[Ktrain: fit 16 of 16, iteration 300, about 1 s left');
    // 240 iteration updates, and no more lines than events that are not ticks.
    expect(lines.length).toBeLessThan(20);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('leaves no line open at the end, and ends none that is not', () => {
    let text = '';
    const lines = progressLines({ write: (t: string) => (text += t) }, formatProgress, {
      terminal: true,
    });
    lines.write({ phase: 'fit', done: 0, total: 2, message: 'fit 1 of 2' });
    lines.write({ phase: 'fit', done: 0, total: 2, message: 'fit 1 of 2, iteration 20' });
    lines.end();
    expect(text).toBe('train: fit 1 of 2\n\r\x1b[Ktrain: fit 1 of 2, iteration 20\n');
    lines.end();
    expect(text.endsWith('20\n')).toBe(true);
  });

  it('names no time left on a phase that is done', () => {
    expect(formatProgress({ phase: 'verify', done: 80, total: 80, etaMs: 0 })).toBe(
      'train: verify 80/80',
    );
    expect(formatProgress({ phase: 'verify', done: 50, total: 80, etaMs: 4000 })).toBe(
      'train: verify 50/80, about 4 s left',
    );
  });
});
