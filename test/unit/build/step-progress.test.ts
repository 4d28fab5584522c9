// Long CLI steps (verify's and convert's fidelity requests, prepare's graphs) report
// done/total, the time per item and what is left: a line every few seconds in a log, redrawn
// in place on a terminal.
import { describe, expect, it } from 'vitest';
import { clock, StepProgress, stepText } from '../../../src/build/step-progress.js';

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, write: (t: string) => written.push(t), isTTY };
}

describe('stepText', () => {
  it('says done/total, the time each took and an estimate of what is left', () => {
    expect(stepText(5, 20, 'requests', 10_000)).toBe('5/20 requests, 2.0 s each, about 0:30 left');
    expect(stepText(3, 200, 'requests', 750)).toBe('3/200 requests, 250 ms each, about 0:49 left');
    expect(stepText(0, 20, 'requests', 5_000)).toBe('0/20 requests');
    expect(stepText(20, 20, 'requests', 40_000)).toBe('20/20 requests in 0:40 (2.0 s each)');
  });

  it('clock rounds to whole seconds as m:ss', () => {
    expect(clock(0)).toBe('0:00');
    expect(clock(59.6)).toBe('1:00');
    expect(clock(364)).toBe('6:04');
  });
});

describe('StepProgress', () => {
  it('in a log: the first item, then a line at most every 5 s, and always the last', () => {
    let t = 0;
    const out = stream(false);
    const p = new StepProgress(out, {
      unit: 'requests',
      total: 10,
      prefix: '[verify] ',
      now: () => t,
    });
    for (let done = 1; done <= 10; done++) {
      t = done * 2_000; // 2 s per request
      p.update(done);
    }
    p.finish();
    expect(out.written).toEqual([
      '[verify] 1/10 requests, 2.0 s each, about 0:18 left\n',
      '[verify] 4/10 requests, 2.0 s each, about 0:12 left\n',
      '[verify] 7/10 requests, 2.0 s each, about 0:06 left\n',
      '[verify] 10/10 requests in 0:20 (2.0 s each)\n',
    ]);
  });

  it('on a terminal: one line redrawn in place, ended once', () => {
    let t = 0;
    const out = stream(true);
    const p = new StepProgress(out, { unit: 'graphs', total: 3, now: () => t });
    for (let done = 1; done <= 3; done++) {
      t = done * 1_000;
      p.update(done);
    }
    p.finish();
    expect(out.written).toEqual([
      '\r\x1b[K1/3 graphs, 1.0 s each, about 0:02 left',
      '\r\x1b[K2/3 graphs, 1.0 s each, about 0:01 left',
      '\r\x1b[K3/3 graphs in 0:03 (1.0 s each)',
      '\n',
    ]);
  });
});
