// The shipped engine worker carries no test instrumentation: built as the package
// builds it (vite.worker.config.ts, the config behind dist/lib/clef.worker.js), none of its
// files names a fault simulation or `arm`, or patches a global (WebAssembly.instantiate*,
// GPUDevice.createBuffer, any prototype). The instrumented test worker, built the same way,
// holds every one of them: the check sees instrumentation where there is some.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const dirs: string[] = [];

/** What instrumentation leaves in a bundle: a name from it, or a patched global. */
const MARKS: Array<[string, RegExp]> = [
  ['a WebAssembly function replaced', /\bWebAssembly\.\w+\s*=(?!=)/],
  ['a prototype patched', /\.prototype\.\w+\s*=(?!=)/],
  ['instantiateStreaming', /instantiateStreaming/],
  ['createBuffer', /\bcreateBuffer\b/],
  ['simulate', /\bsimulate\b/],
  ['stallAt', /\bstallAt\b/],
  ['loseWebgpuMidDecision', /\bloseWebgpuMidDecision\b/],
  ['failWebgpuLoad', /\bfailWebgpuLoad\b/],
  ['adapterLimitBytes', /\badapterLimitBytes\b/],
  ['lexiconFromStorage', /\blexiconFromStorage\b/],
  ['holdWarmUp', /\bholdWarmUp\b/],
  ['noWebgpu', /\bnoWebgpu\b/],
  ['an arm method', /\barm\s*[:(]/],
];

function marks(code: string): string[] {
  return MARKS.filter(([, pattern]) => pattern.test(code)).map(([name]) => name);
}

/** The worker built from `entry` with the package's worker config: every JS file's text. */
async function bundle(entry: string): Promise<{ files: string[]; code: string; bytes: number }> {
  const outDir = mkdtempSync(join(tmpdir(), 'clef-shipped-worker-'));
  dirs.push(outDir);
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.worker.config.ts'),
    logLevel: 'silent',
    build: {
      outDir,
      emptyOutDir: true,
      sourcemap: false,
      lib: { entry: { 'clef.worker': entry }, formats: ['es'] },
    },
  });
  const files = readdirSync(outDir).filter((f) => f.endsWith('.js'));
  const code = files.map((f) => readFileSync(join(outDir, f), 'utf8')).join('\n');
  const main = readFileSync(join(outDir, 'clef.worker.js'), 'utf8');
  return { files, code, bytes: Buffer.byteLength(main) };
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the shipped engine worker', () => {
  it('holds no fault simulation, no arm, and patches no global', async () => {
    const shipped = await bundle('workers/clef.worker.ts');
    expect(shipped.files).toContain('clef.worker.js');
    // Guards against an empty build passing: the engine and onnxruntime's loader are there.
    expect(shipped.code).toContain('onnxruntime-web/wasm');
    expect(shipped.code).toContain('lifeline');
    expect(marks(shipped.code)).toEqual([]);
  });

  it('the same check finds every mark in the instrumented test worker (it can fail)', async () => {
    const instrumented = await bundle('test/support/instrumented-worker/instrumented.worker.ts');
    expect(marks(instrumented.code)).toEqual(MARKS.map(([name]) => name));
  });
});
