// The one number reader under every command's options: what counts as a number, the bounds, and
// each command's own words for a value it refuses (the words users already know).
import { describe, expect, it, vi } from 'vitest';
import {
  UsageError,
  integerOption,
  notANumberInRange,
  numberOption,
  readNumber,
} from '../../../src/node/cli-args.js';
import { main } from '../../../src/node/cli.js';

describe('readNumber', () => {
  it('reads finite numbers; blank, NaN and Infinity are not numbers', () => {
    expect(readNumber('0.25')).toBe(0.25);
    expect(readNumber('-3')).toBe(-3);
    expect(readNumber('1e3')).toBe(1000);
    for (const bad of ['', '  ', 'abc', 'NaN', 'Infinity', '-Infinity', '1,5', '2x']) {
      expect(readNumber(bad), bad).toBeNull();
    }
  });

  it('keeps to the rule: integers are safe integers, bounds are inclusive', () => {
    expect(readNumber('2.5', { integer: true })).toBeNull();
    expect(readNumber('9007199254740993', { integer: true })).toBeNull();
    expect(readNumber('4', { integer: true })).toBe(4);
    expect(readNumber('0', { min: 0, max: 1 })).toBe(0);
    expect(readNumber('1', { min: 0, max: 1 })).toBe(1);
    expect(readNumber('1.01', { min: 0, max: 1 })).toBeNull();
    expect(readNumber('-0.01', { min: 0 })).toBeNull();
    expect(readNumber('7', { max: 6 })).toBeNull();
  });
});

describe('numberOption and integerOption', () => {
  it('absent is undefined (or the fallback); a refusal is a UsageError in the given words', () => {
    expect(numberOption('seed', undefined)).toBeUndefined();
    expect(integerOption('port', undefined, 8787, 0, 65_535)).toBe(8787);
    expect(integerOption('port', '0', 8787, 0, 65_535)).toBe(0);
    expect(() => numberOption('x', 'y', {}, (name, text) => `${name}|${text}`)).toThrow(
      new UsageError('x|y'),
    );
    expect(() => integerOption('workers', '0', 1)).toThrow(UsageError);
  });

  it('says the range it wanted by default', () => {
    expect(notANumberInRange('port', 'abc', { integer: true, min: 0, max: 65_535 })).toBe(
      '--port abc: not an integer from 0 to 65535',
    );
    expect(notANumberInRange('workers', '0', { integer: true, min: 1 })).toBe(
      '--workers 0: not an integer >= 1',
    );
    expect(notANumberInRange('t', '2', { max: 1 })).toBe('--t 2: not a number <= 1');
    expect(notANumberInRange('t', 'z', {})).toBe('--t z: not a number');
  });
});

describe("each command's words for a refused number are the ones it always used", () => {
  /** stderr's first line and the exit code of `clef-web ...argv`. */
  async function said(argv: string[]): Promise<[number, string]> {
    const lines: string[] = [];
    const log = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
      lines.push(a.join(' '));
    });
    const out = vi.spyOn(console, 'log').mockImplementation(() => {});
    const err = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      });
    try {
      const code = await main(argv);
      return [code, lines.join('\n').split('\n')[0]!];
    } finally {
      log.mockRestore();
      out.mockRestore();
      err.mockRestore();
    }
  }

  it.each([
    [
      ['calibrate', 'pkg', '--examples', 'x.jsonl', '--coverage', 'lots'],
      2,
      'clef-web calibrate: --coverage: not a number',
    ],
    [
      ['calibrate', 'pkg', '--examples', 'x.jsonl', '--seed', ''],
      2,
      'clef-web calibrate: --seed: not a number',
    ],
    [
      ['train', '--examples', 'x.jsonl', '--out', 'o', '--lambda', 'one'],
      1,
      'clef-web train: --lambda must be a number, got "one"',
    ],
    [
      ['verify', 'pkg', '--release', 'r', '--requests', 'ten'],
      2,
      'clef-web verify: --requests needs an integer ≥ 1, not "ten"',
    ],
    [
      ['verify', 'pkg', '--release', 'r', '--seed=-1'],
      2,
      'clef-web verify: --seed needs an integer ≥ 0, not "-1"',
    ],
    [
      ['verify', 'pkg', '--release', 'r', '--max-dp=-1'],
      2,
      'clef-web verify: --max-dp needs a number ≥ 0, not "-1"',
    ],
    [
      ['decide', '--in', 'x', '--out', 'y', '--threads', '1.5'],
      2,
      'clef-web decide: --threads must be an integer >= 1',
    ],
    [
      ['replay', 'r.jsonl', '--tolerance', '2'],
      2,
      'clef-web replay: --tolerance must be a number in [0, 1]',
    ],
    [
      ['replay', 'r.jsonl', '--tolerance', 'x'],
      2,
      'clef-web replay: --tolerance must be a number in [0, 1]',
    ],
    [['serve', '--max-queue', '0'], 2, 'clef-web serve: --max-queue 0: not an integer >= 1'],
    [
      ['static', 'dist', '--port', '70000'],
      2,
      'clef-web static: --port 70000: not an integer from 0 to 65535',
    ],
    [
      ['convert', '.', 'out', '--dtype', 'q4', '--q8-layers=-1'],
      2,
      'clef-web convert: --q8-layers -1: not an integer >= 0',
    ],
  ] as const)('%j -> exit %i, %s', async (argv, exit, first) => {
    expect(await said([...argv])).toEqual([exit, first]);
  });
});
