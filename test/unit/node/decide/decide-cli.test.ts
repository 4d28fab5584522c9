// `clef-web decide`: a JSONL file of requests answered line by line, errors per line,
// progress and summary, and resuming after an interruption (a kill mid-run, a partial last line).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/wire/errors.js';
import { parseRequestJson } from '../../../../src/protocol/json.js';
import {
  decideFile,
  decideMain,
  summaryText,
  UsageError,
  type DecideEngine,
} from '../../../../src/node/decide/cli.js';
import { OutputExistsError } from '../../../../src/node/decide/jsonl.js';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import {
  buildTinyPackage,
  TINY_CONTEXT,
  TINY_MODEL,
  type TinyPackage,
} from '../../support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let dir: string;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-decide-test-');
  dir = join(tiny.dir, '..');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
}, 60_000);
afterAll(async () => {
  await engine?.dispose();
  tiny?.remove();
});

const request = (state: string, questions: object, model = TINY_MODEL) =>
  JSON.stringify({ model, state, questions });

/** Valid requests; one keeps integer-like question ids first, in its written order. */
function validLines(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    i === 1
      ? `{"model":"${TINY_MODEL}","state":"order","questions":{"b":{"type":"noul"},"2":{"type":"noul"}}}`
      : request(`ticket ${i}: parcel late`, {
          [`q${i}`]: { type: 'choice', criteria: { ship: null, pay: 'Money' } },
        }),
  );
}

/** What the engine itself answers for a line (the file must hold exactly this). */
const answerOf = async (line: string) => (await engine.decide(parseRequestJson(line))).json;

const file = (name: string) => join(dir, name);
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);

describe('clef-web decide', () => {
  it('answers every line in order, with one error line per refused request', async () => {
    const [a, b, c] = validLines(3) as [string, string, string];
    const input = [
      a,
      'not json',
      '',
      request('x', { q: { type: 'yes-no' } }),
      b,
      request('x', { q: { type: 'noul' } }, 'nope'),
      request('word '.repeat(TINY_CONTEXT * 2), { q: { type: 'noul' } }),
      c,
    ];
    writeFileSync(file('in1.jsonl'), input.join('\r\n')); // CRLF, no final newline
    const stderr: string[] = [];
    const summary = await decideFile(engine, {
      input: file('in1.jsonl'),
      output: file('out1.jsonl'),
      resume: false,
      progress: { write: (t: string) => stderr.push(t), isTTY: false },
    });
    const out = lines(file('out1.jsonl'));
    expect(out).toHaveLength(8);
    expect(out[0]).toBe(await answerOf(a));
    expect(out[4]).toBe(await answerOf(b));
    expect(out[7]).toBe(await answerOf(c));
    expect(out[4]).toMatch(/"answers":\{"b":.*,"2":/); // written order kept in the text

    const errorOf = (i: number) => JSON.parse(out[i]!).error;
    expect(Object.keys(JSON.parse(out[1]!))).toEqual(['error']);
    expect(errorOf(1)).toMatchObject({
      status: 400,
      body: { detail: { error_type: 'api_usage_error' } },
    });
    expect(errorOf(1).body.detail.message).toMatch(/not valid JSON/);
    expect(errorOf(2).status).toBe(400); // a blank line still has its line
    expect(errorOf(3).status).toBe(422);
    expect(errorOf(3).body.detail[0].loc).toEqual(['body', 'questions', 'q', 'type']);
    expect(errorOf(5)).toEqual({
      status: 400,
      body: { detail: { error_type: 'api_usage_error', message: 'Unknown model: nope' } },
    });
    expect(errorOf(6).body.detail.error_type).toBe('max_tokens_exceeded');

    expect(summary).toMatchObject({ total: 8, skipped: 0, processed: 8, errors: 5 });
    expect(summary.stoppedBy).toBeNull();
    expect(summary.decisionsPerSecond).toBeCloseTo(8 / summary.seconds, 6);
    const text = summaryText(summary, 'out1.jsonl');
    expect(text).toMatch(
      /^decided 8 line\(s\) in \d+\.\d s: 3 answered, 5 error\(s\), \d+\.\d decisions\/s$/,
    );
    // Not a terminal: plain lines, the last at 100%.
    expect(stderr.every((l) => l.startsWith('decide: ') && l.endsWith('\n'))).toBe(true);
    expect(stderr.at(-1)).toMatch(/^decide: 100% 8\/8 /);
  });

  it('draws a bar in place on a terminal', async () => {
    writeFileSync(file('in2.jsonl'), validLines(2).join('\n') + '\n');
    const writes: string[] = [];
    await decideFile(engine, {
      input: file('in2.jsonl'),
      output: file('out2.jsonl'),
      resume: false,
      progress: { write: (t: string) => writes.push(t), isTTY: true, columns: 80 },
    });
    const bars = writes.filter((w) => w.startsWith('\r\x1b[K['));
    expect(bars.length).toBeGreaterThan(0);
    expect(bars.at(-1)).toMatch(/\[#+\] 100% 2\/2 /);
    expect(writes.at(-1)).toBe('\n');
    expect(lines(file('out2.jsonl'))).toHaveLength(2);
  });

  it('refuses to overwrite an output without --resume, and a longer output than input', async () => {
    writeFileSync(file('in3.jsonl'), validLines(1).join('\n') + '\n');
    writeFileSync(file('out3.jsonl'), '{"x":1}\n');
    const options = { input: file('in3.jsonl'), output: file('out3.jsonl'), resume: false };
    await expect(decideFile(engine, options)).rejects.toBeInstanceOf(OutputExistsError);
    writeFileSync(file('out3.jsonl'), '{"x":1}\n{"x":2}\n');
    await expect(decideFile(engine, { ...options, resume: true })).rejects.toBeInstanceOf(
      UsageError,
    );
    const code = await decideMain([
      '--package',
      tiny.dir,
      '--in',
      file('in3.jsonl'),
      '--out',
      file('out3.jsonl'),
      '--quiet',
    ]);
    expect(code).toBe(2);
  });

  it('resumes after a partial last line: cut off, then answered again', async () => {
    const input = validLines(6);
    writeFileSync(file('in4.jsonl'), input.join('\n') + '\n');
    const expected = await Promise.all(input.map(answerOf));
    const partial = expected[3]!.slice(0, 40);
    writeFileSync(file('out4.jsonl'), expected.slice(0, 3).join('\n') + '\n' + partial);
    const summary = await decideFile(engine, {
      input: file('in4.jsonl'),
      output: file('out4.jsonl'),
      resume: true,
    });
    expect(summary).toMatchObject({ total: 6, skipped: 3, processed: 3, truncatedBytes: 40 });
    expect(readFileSync(file('out4.jsonl'), 'utf8')).toBe(expected.join('\n') + '\n');
    expect(summaryText(summary, 'out4.jsonl')).toMatch(
      /3 line\(s\) were already in out4\.jsonl \(an unfinished last line, 40 bytes, was cut off\)/,
    );
  });

  it('stops on an interruption or an engine failure without writing that line', async () => {
    const input = validLines(5);
    writeFileSync(file('in5.jsonl'), input.join('\n') + '\n');
    let calls = 0;
    const failing: DecideEngine = {
      decide: (body) =>
        ++calls === 3 ? Promise.reject(new EngineError('boom')) : engine.decide(body),
    };
    const first = await decideFile(failing, {
      input: file('in5.jsonl'),
      output: file('out5.jsonl'),
      resume: false,
    });
    expect(first.stoppedBy).toMatchObject({ status: 500, line: 3 });
    expect(lines(file('out5.jsonl'))).toHaveLength(2);
    expect(summaryText(first, 'out5.jsonl')).toMatch(/stopped at input line 3: the engine failed/);

    let answered = 0;
    const second = await decideFile(
      { decide: (b) => engine.decide(b).finally(() => answered++) },
      {
        input: file('in5.jsonl'),
        output: file('out5.jsonl'),
        resume: true,
        stopRequested: () => answered >= 1,
      },
    );
    expect(second.stoppedBy).toBe('interrupted');
    expect(second).toMatchObject({ skipped: 2, processed: 1 });
    expect(summaryText(second, 'out5.jsonl')).toMatch(/interrupted with 2 line\(s\) left/);

    await decideFile(engine, {
      input: file('in5.jsonl'),
      output: file('out5.jsonl'),
      resume: true,
    });
    const expected = await Promise.all(input.map(answerOf));
    expect(readFileSync(file('out5.jsonl'), 'utf8')).toBe(expected.join('\n') + '\n');
  });

  it('the `clef-web decide` command survives a kill mid-run and --resume completes it', async ({
    signal,
  }) => {
    const input = validLines(24);
    writeFileSync(file('in6.jsonl'), input.join('\n') + '\n');
    const out = file('out6.jsonl');
    const args = ['bin/clef-web.mjs', 'decide', '--package', tiny.dir, '--in', file('in6.jsonl')];
    const child = spawn(process.execPath, [...args, '--out', out, '--threads', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, s) => r(s)));
    try {
      // Waits for an event (three lines written), not a time: the test's timeout (which aborts
      // `signal`) bounds it, and the child is killed on that path too.
      while (
        !(existsSync(out) && lines(out).length >= 3) &&
        child.exitCode === null &&
        !signal.aborted
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');
    // Not a TTY: progress came as plain lines.
    expect(stderr).toMatch(/^decide: \d+% /m);

    const expected = await Promise.all(input.map(answerOf));
    const kept = lines(out);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(24);
    expect(kept).toEqual(expected.slice(0, kept.length));

    const summary = await decideFile(engine, {
      input: file('in6.jsonl'),
      output: out,
      resume: true,
    });
    expect(summary.skipped).toBe(kept.length);
    expect(summary.processed).toBe(24 - kept.length);
    expect(readFileSync(out, 'utf8')).toBe(expected.join('\n') + '\n');
    rmSync(out);
  }, 90_000);
});
