// The CLI never prints a stack trace for a user's mistake. Every message starts with
// its command's prefix (`clef-web serve: `), says what to do, and any option it suggests exists
// on that command; an unknown option names the nearest known one; `--help` lists every option
// the docs use. The in-process cases run `main` as bin/clef-web.mjs does; three run the compiled
// binary itself, as a user does.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES, main } from '../../../src/node/cli.js';
import { nearestOption } from '../../../src/node/cli-args.js';

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
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk).replace(/\n$/, ''));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

const dir = mkdtempSync(join(tmpdir(), 'clef-cli-mistakes-'));
const inDir = (name: string) => join(dir, name);
/** A port in this suite's range that something else listens on. */
const BUSY_PORT = Number(process.env.CLEF_TEST_PORT || 5179) + 11;
let busy: Server;
beforeAll(async () => {
  writeFileSync(inDir('empty.jsonl'), '');
  busy = createServer();
  await new Promise<void>((done) => busy.listen(BUSY_PORT, '127.0.0.1', done));
});
afterAll(async () => {
  await new Promise<void>((done) => busy.close(() => done()));
  rmSync(dir, { recursive: true, force: true });
});

/** A line of a stack trace, as Node prints one. */
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;
/** A class name leading a message (`RangeError [ERR_...]:`, `MissingDependencyError:`). */
const CLASS_PREFIX = /(^|: )[A-Z][A-Za-z]*Error( \[[A-Z_]+\])?:/m;

async function usageOf(command: string): Promise<string> {
  out = [];
  await main(['help', command]);
  return out.join('\n');
}

/** Runs `argv`; what it printed on stderr, checked for the rules every mistake follows. */
async function mistake(argv: string[], exit: number): Promise<string> {
  const code = await main(argv);
  const text = err.join('\n');
  const [first = ''] = text.split('\n');
  const command = argv[0]!;
  expect(code, text).toBe(exit);
  expect(out.join('\n'), 'nothing on stdout').toBe('');
  expect(first.startsWith(`clef-web ${command}: `), first).toBe(true);
  expect(text).not.toMatch(STACK_LINE);
  expect(first).not.toMatch(CLASS_PREFIX);
  // Every option the message suggests is one of this command's.
  const usage = await usageOf(command);
  for (const option of first.match(/--[a-z][a-z0-9-]*/g) ?? []) {
    if (argv.includes(option) || first.includes(`option ${option} `)) continue;
    expect(usage, `${first}: suggests ${option}`).toContain(option);
  }
  return first;
}

describe('a mistake is one line after the command, with what to do, never a stack', () => {
  it.each([
    [['serve', '--port', '99999'], 2, '--port 99999: not an integer from 0 to 65535'],
    [['serve', '--port', 'abc'], 2, '--port abc: not an integer from 0 to 65535'],
    [['serve', '--port'], 2, '--port needs a value'],
    [['serve', '--bogus'], 2, 'unknown option --bogus (its options: --port, --host'],
    [['serve', '--prot', '9'], 2, 'unknown option --prot (did you mean --port?)'],
    [['serve', '--worker', '2'], 2, 'unknown option --worker (did you mean --workers?)'],
    [['serve', '--quiet=yes'], 2, '--quiet takes no value'],
    [['serve', '--workers', '0'], 2, '--workers 0: not an integer >= 1'],
    [['serve', 'a', 'b'], 2, 'at most one package directory'],
    [['serve', inDir('nope'), '--port', '0'], 1, 'manifest'],
    [['decide', 'stray', '--in', 'x', '--out', 'y'], 2, 'unexpected argument stray'],
    [['decide', '--in', inDir('nope.jsonl'), '--out', inDir('o.jsonl')], 1, 'nope.jsonl'],
    [['decide', '--in', 'x', '--out', 'y', '--threads', 'x'], 2, '--threads'],
    [['convert', 'a', 'b', '--dtype', 'q4'], 2, '<release-dir> a: no such folder'],
    [['convert', dir, 'b', '--dtype', 'q4', '--context', 'x'], 2, '--context x: not an integer'],
    [
      ['convert', dir, 'b', '--dtype', 'q4', '--kv-float16', 'y'],
      2,
      '--kv-float16 y: not on or off',
    ],
    [['convert', dir, 'b', '--dtyp', 'q4'], 2, 'unknown option --dtyp (did you mean --dtype?)'],
    [['prepare', '--force', 'pkg'], 2, 'unknown option --force: it takes none'],
    [['prepare', inDir('nope')], 1, 'no package there (no manifest.json'],
    [['verify', inDir('nope'), '--release', inDir('r')], 1, 'manifest'],
    [['verify', 'pkg', '--release', 'r', '--requests', 'x'], 2, '--requests needs an integer'],
    [['calibrate', 'pkg', '--examples', inDir('nope.jsonl')], 1, 'nope.jsonl: no such file'],
    [['calibrate', inDir('nope'), '--examples', inDir('empty.jsonl')], 1, 'manifest'],
    [
      ['calibrate', 'pkg', '--example', 'x'],
      2,
      'unknown option --example (did you mean --examples?)',
    ],
    [['train', '--bogus'], 2, 'unknown option --bogus'],
    [['train', '--examples', inDir('nope.jsonl'), '--out', inDir('o')], 1, 'nope.jsonl'],
    [['replay'], 2, 'give one records file'],
    [['replay', inDir('nope.jsonl')], 2, 'no such file'],
    [['replay', inDir('empty.jsonl'), '--tolerance', '2'], 2, '--tolerance'],
    [['assets', inDir('site'), '--device', 'wasm'], 2, 'did you mean --devices?'],
    [
      ['assets', inDir('site'), '--devices', 'gpu'],
      2,
      "--devices: 'gpu' is not one of webgpu, wasm",
    ],
    [['assets', inDir('site'), '--runtime-builds', 'jsep'], 2, "'jsep' is not one of plain, jspi"],
    [['assets', inDir('site'), '--no-worker', '--worker-dir', 'a'], 2, 'one or the other'],
  ] as const)('%j -> exit %i: "%s"', async (argv, exit, said) => {
    const first = await mistake([...argv], exit);
    expect(first).toContain(said);
  });

  it('a port in use: says so and how to pick another, exit 1', async () => {
    const first = await mistake(['serve', '--port', String(BUSY_PORT), '--threads', '1'], 1);
    expect(first).toBe(
      `clef-web serve: 127.0.0.1:${BUSY_PORT} is in use (another server?): pick another port with --port N (--port 0: any free one)`,
    );
  });

  it('an unknown command names the nearest one', async () => {
    expect(await main(['serv'])).toBe(2);
    expect(err.join('\n').split('\n')[0]).toBe(
      'clef-web: unknown command serv (did you mean serve?)',
    );
  });

  it('whatever a command throws is one line after its prefix (the net under them)', async () => {
    // `assets` into a path under a file: the copy fails deep in node:fs.
    writeFileSync(inDir('file'), '');
    const first = await mistake(['assets', join(inDir('file'), 'site'), '--no-model'], 1);
    expect(first).toMatch(/: a file, not a folder$|: no such file or folder$/);
  });
});

describe('nearestOption', () => {
  it('takes a prefix, else the closest within a third of the length; else none', () => {
    const known = ['port', 'host', 'workers', 'record', 'record-hash-only'];
    expect(nearestOption('p', known)).toBe('port');
    expect(nearestOption('worker', known)).toBe('workers');
    expect(nearestOption('prot', known)).toBe('port');
    expect(nearestOption('recrod', known)).toBe('record');
    expect(nearestOption('zzzzzz', known)).toBeNull();
  });
});

describe('--help lists every option the docs use', () => {
  /** `clef-web <command> ...--option...` in the README and docs/, per command. */
  function documentedOptions(): Map<string, Set<string>> {
    const files = ['README.md', ...readdirSync('docs').map((f) => join('docs', f))].filter((f) =>
      f.endsWith('.md'),
    );
    const found = new Map<string, Set<string>>();
    for (const file of files) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        for (const m of line.matchAll(/clef-web (\w+)((?: +[^`|#]*)?)/g)) {
          if (!COMMAND_NAMES.includes(m[1]!)) continue;
          const options = found.get(m[1]!) ?? new Set<string>();
          for (const o of m[2]!.match(/--[a-z][a-z0-9-]*/g) ?? []) options.add(o);
          found.set(m[1]!, options);
        }
      }
    }
    return found;
  }

  it('each command’s usage names each option the docs write after it', async () => {
    const documented = documentedOptions();
    expect(documented.get('assets')).toContain('--no-worker');
    const missing: string[] = [];
    for (const [command, options] of documented) {
      const usage = await usageOf(command);
      for (const o of options) {
        if (o !== '--help' && !usage.includes(o)) missing.push(`${command} ${o}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('`clef-web --help` names the options the README’s recipes use', async () => {
    out = [];
    await main(['--help']);
    const usage = out.join('\n');
    for (const o of ['--no-worker', '--worker-dir', '--devices', '--element', '--workers']) {
      expect(usage).toContain(o);
    }
  });
});

describe('the installed binary, as a user runs it', () => {
  const bin = 'bin/clef-web.mjs';
  it.each([
    [['serve', '--port', '99999'], 2],
    [['serve', '--bogus'], 2],
    [['serve', '--port', String(BUSY_PORT), '--threads', '1', '--quiet'], 1],
  ])('%j: one prefixed line (and the usage), no stack', (argv, exit) => {
    if (!existsSync('dist/node/node/cli.js')) {
      throw new Error('dist/node is not built: run `npm run build:node` (npm test builds it)');
    }
    const r = spawnSync(process.execPath, [bin, ...argv], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(exit);
    expect(r.stderr.startsWith('clef-web serve: '), r.stderr).toBe(true);
    expect(r.stderr).not.toMatch(STACK_LINE);
    expect(r.stderr).not.toMatch(CLASS_PREFIX);
  });
});
