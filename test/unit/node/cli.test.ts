// The CLI behaves. --help/-h after every command and `help <command>` print that
// command's usage on stdout and exit 0; --version prints the package's version; a missing
// option is named in the message; `decide` without --package answers with the bundled model.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES, main } from '../../../src/node/cli.js';

let out: string[];
let err: string[];
beforeEach(() => {
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    out.push(args.join(' '));
  });
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    err.push(args.join(' '));
  });
  // verify writes to the stream itself.
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk).replace(/\n$/, ''));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

const stdout = () => out.join('\n');
const stderr = () => err.join('\n');

describe('clef-web help', () => {
  it('lists every command', () => {
    expect(COMMAND_NAMES).toEqual([
      'convert',
      'prepare',
      'verify',
      'serve',
      'decide',
      'assets',
      'calibrate',
      'train',
      'replay',
      'static',
    ]);
  });

  it.each(
    COMMAND_NAMES.flatMap((c) => [
      [c, '--help'],
      [c, '-h'],
      ['help', c],
    ]),
  )('%s %s: the usage on stdout, exit 0', async (first, second) => {
    const command = first === 'help' ? second : first;
    expect(await main([first, second])).toBe(0);
    expect(stdout()).toMatch(new RegExp(`^usage: clef-web ${command} `));
    expect(stderr()).toBe('');
  });

  it('--help after other options and positionals still wins (and not after --)', async () => {
    expect(await main(['serve', './pkg', '--port', '9', '--help'])).toBe(0);
    expect(stdout()).toMatch(/^usage: clef-web serve /);
    out = [];
    // After `--`, --help is the package folder's name (none is there): not the usage.
    expect(await main(['prepare', '--', '--help'])).toBe(1);
    expect(stdout()).toBe('');
  });

  it('--help, -h and help alone: the command list, exit 0; nothing at all: exit 2', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      out = [];
      expect(await main(argv)).toBe(0);
      for (const name of COMMAND_NAMES) expect(stdout()).toContain(`  ${name} `);
    }
    expect(await main([])).toBe(2);
    expect(stderr()).toMatch(/^usage: clef-web <command>/);
  });

  it('help for an unknown command, and an unknown command, exit 2 naming it', async () => {
    expect(await main(['help', 'nope'])).toBe(2);
    expect(stderr()).toContain('no command nope');
    err = [];
    expect(await main(['nope'])).toBe(2);
    expect(stderr()).toContain('unknown command nope');
    err = [];
    // Not a way into Object.prototype.
    expect(await main(['toString'])).toBe(2);
    expect(stderr()).toContain('unknown command toString');
  });
});

describe('clef-web --version', () => {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  it.each([['--version'], ['-v'], ['version']])('%s prints the version, exit 0', async (arg) => {
    expect(await main([arg])).toBe(0);
    expect(stdout()).toBe(`clef-web ${version}`);
  });
});

describe('a missing option is named', () => {
  it.each([
    [['decide', '--out', 'o.jsonl'], '--in <requests.jsonl>'],
    [['decide', '--in', 'i.jsonl'], '--out <responses.jsonl>'],
    [['decide'], '--in <requests.jsonl> and --out <responses.jsonl>'],
    [['convert', 'release', 'out'], 'missing --dtype'],
    [['convert', 'release', 'out', '--dtype', 'q3'], '--dtype q3: not one of'],
    [['convert', 'release', '--dtype', 'q4'], 'missing <out-dir>'],
    [['convert', '--dtype', 'q4'], 'missing <release-dir> and <out-dir>'],
    [['prepare'], 'missing <package-dir>'],
    [['prepare', '--force', 'pkg'], 'unknown option --force'],
    [['calibrate', 'pkg'], 'missing --examples <labelled.jsonl>'],
    [['calibrate', '--examples', 'x.jsonl'], 'missing <package-dir>'],
    [['verify', 'pkg'], '--release'],
    [['assets'], 'missing <dir>'],
  ])('%j -> exit 2, "%s"', async (argv, message) => {
    expect(await main(argv)).toBe(2);
    const [first] = stderr().split('\n');
    expect(first).toContain(message);
    expect(stderr()).toContain(`usage: clef-web ${argv[0]} `);
  });
});

describe('clef-web decide without --package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clef-cli-decide-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers with the bundled clef-nano, as serve does', async () => {
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    writeFileSync(
      input,
      JSON.stringify({
        model: 'clef-nano',
        state: 'can you move 200 dollars from checking into my savings account',
        questions: {
          route: {
            type: 'choice',
            criteria: { transfer: 'Wants to move money between accounts.', pay_bill: null },
          },
        },
      }) + '\n',
    );
    const code = await main([
      'decide',
      '--in',
      input,
      '--out',
      output,
      '--threads',
      '1',
      '--quiet',
    ]);
    expect(stderr()).toBe('');
    expect(code).toBe(0);
    const [line] = readFileSync(output, 'utf8').trim().split('\n');
    const body = JSON.parse(line as string) as {
      model: string;
      answers: { route: { choice: string } };
    };
    expect(body.model).toBe('clef-nano');
    expect(body.answers.route.choice).toBe('transfer');
  });
});
