// The seeds of tests that draw fresh inputs each run: the printed line carries the
// seed and the environment that reruns it, and that environment gives the same seed back.
import { describe, expect, it, vi } from 'vitest';
import { SEED_ENV, seedLine, testSeed } from '../../support/seed.js';

describe('testSeed', () => {
  it('prints the seed with the variable that reproduces it, and honours that variable', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const drawn = testSeed('a label', {});
      const line = log.mock.calls[0]![0] as string;
      expect(line).toBe(seedLine('a label', drawn));
      const [, assignment] = /reproduce: (\S+)\)$/.exec(line)!;
      const [name, value] = assignment!.split('=');
      expect(name).toBe(SEED_ENV);
      expect(testSeed('a label', { [name!]: value })).toBe(drawn);
      expect(testSeed('x', { [SEED_ENV]: '1234' })).toBe(1234);
    } finally {
      log.mockRestore();
    }
  });

  it('refuses a seed that is not a non-negative integer', () => {
    expect(() => testSeed('x', { [SEED_ENV]: '12abc' })).toThrow(/non-negative integer/);
  });
});
