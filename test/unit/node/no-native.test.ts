// `npx clef-web decide|serve|replay` where onnxruntime-node is not installed: the
// compiled CLI, in a process that cannot resolve onnxruntime-node, runs packages on the js
// device and answers exactly as the js engine does in-process, without a word about
// onnxruntime-node; asked for onnxruntime by name, it fails with the install line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../support/tiny-package.js';

const WITHOUT = './test/unit/support/without-onnxruntime-node.mjs';

let tiny: TinyPackage;
let js: NodeEngine;
let work: string;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-no-native-');
  js = await loadNodePackage(tiny.dir, { runtime: 'js' });
  work = mkdtempSync(join(tmpdir(), 'clef-no-native-io-'));
}, 60_000);
afterAll(async () => {
  await js?.dispose();
  tiny?.remove();
  rmSync(work, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The compiled CLI in a process without onnxruntime-node. */
function cli(args: string[], { signal }: { signal?: AbortSignal } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', WITHOUT, 'bin/clef-web.mjs', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const request = (state: string, model = TINY_MODEL) => ({
  model,
  state,
  questions: {
    route: { type: 'choice', criteria: { refund: 'Money back', ship: null, other: null } },
    urgent: { type: 'noul' },
  },
});

describe('the CLI without onnxruntime-node', () => {
  it('the process really lacks it (the import fails as for a missing package)', async () => {
    const probe = await new Promise<Run>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', WITHOUT, '-e', "import('onnxruntime-node').catch((e) => console.log(e.code))"],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.on('exit', (code) => resolve({ code, stdout, stderr: '' }));
    });
    expect(probe.stdout.trim()).toBe('ERR_MODULE_NOT_FOUND');
  });

  it('decide answers every line on the js device, as the js engine does, and says nothing of onnxruntime', async () => {
    const lines = ['a parcel arrived broken', 'charged twice for one order', 'where is my order?'];
    const input = join(work, 'in.jsonl');
    const output = join(work, 'out.jsonl');
    writeFileSync(input, lines.map((s) => JSON.stringify(request(s))).join('\n') + '\n');
    const run = await cli([
      'decide',
      '--package',
      tiny.dir,
      '--in',
      input,
      '--out',
      output,
      '--quiet',
    ]);
    expect(run.stderr).not.toMatch(/onnxruntime/i);
    expect(run.code, run.stderr).toBe(0);
    const want = await Promise.all(lines.map(async (s) => (await js.decide(request(s))).json));
    expect(readFileSync(output, 'utf8')).toBe(want.join('\n') + '\n');
  }, 60_000);

  it('decide with the bundled clef-nano records its decisions, and replay finds them identical', async () => {
    const input = join(work, 'nano.jsonl');
    const output = join(work, 'nano-out.jsonl');
    const records = join(work, 'records.jsonl');
    writeFileSync(input, JSON.stringify(request('I want my money back', 'clef-nano')) + '\n');
    const decided = await cli([
      'decide',
      '--in',
      input,
      '--out',
      output,
      '--record',
      records,
      '--quiet',
    ]);
    expect(decided.code, decided.stderr).toBe(0);
    const record = JSON.parse(readFileSync(records, 'utf8').split('\n')[0]!) as {
      engine: { device: string; runtime: string };
    };
    expect(record.engine).toMatchObject({ device: 'js', runtime: 'clef-web js' });
    const replayed = await cli(['replay', records]);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/replayed 1 record\(s\): 1 identical/);
    expect(replayed.stderr).not.toMatch(/onnxruntime/i);
  }, 60_000);

  it('serve answers on the js device', async ({ signal }) => {
    const child = spawn(
      process.execPath,
      ['--import', WITHOUT, 'bin/clef-web.mjs', 'serve', tiny.dir, '--port', '0', '--quiet'],
      { stdio: ['ignore', 'pipe', 'pipe'], signal },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d;
          const m = /listening on (http:\/\/\S+?)[,\s]/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      const body = request('the courier left it in the rain');
      const response = await fetch(new URL('/v1/systemone', url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe((await js.decide(body)).json);
      const cards = (await (await fetch(new URL('/v1/models', url))).json()) as {
        models: Array<{ description: string }>;
      };
      expect(cards.models[0]!.description).toMatch(/on the js device/);
    } finally {
      child.kill('SIGTERM');
    }
    await exited;
    expect(stderr).not.toMatch(/onnxruntime/i);
  }, 60_000);

  it('asked for onnxruntime, it names the install command and decides nothing', async () => {
    const input = join(work, 'in.jsonl');
    const output = join(work, 'refused.jsonl');
    const run = await cli([
      'decide',
      '--package',
      tiny.dir,
      '--in',
      input,
      '--out',
      output,
      '--runtime',
      'onnxruntime',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /needs onnxruntime-node, which is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1\.30\.0`/,
    );
    const bad = await cli(['decide', '--in', input, '--out', output, '--runtime', 'wasm']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--runtime must be one of auto, onnxruntime, js, not "wasm"/);
  }, 60_000);
});
