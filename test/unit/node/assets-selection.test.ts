// An app ships only the onnxruntime-web builds its devices run on, no file over a
// static host's 25 MiB limit by default, and `clef-web assets` / the Vite plugin say what they
// copied and how big it is. Sizes are the installed onnxruntime-web's real files.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HOST_FILE_LIMIT_BYTES,
  assetFiles,
  assetReport,
  clefAssets,
  copyAssets,
  runtimeBuildsFor,
} from '../../../src/node/assets.js';
import { DEVICES } from '../../../src/core/devices.js';
import { ORT_PUBLIC_PATH, RUNTIME_BUILD_FILES } from '../../../src/wire/assets.js';

const ortFiles = (options: Parameters<typeof clefAssets>[0]) =>
  [...(clefAssets(options).get(ORT_PUBLIC_PATH)?.keys() ?? [])].sort();

describe('the runtime builds an app ships', () => {
  it('follow the devices: WASM the plain build, WebGPU the JSPI one; both by default', () => {
    expect(runtimeBuildsFor({ devices: ['wasm'] })).toEqual(['plain']);
    expect(runtimeBuildsFor({ devices: ['webgpu'] })).toEqual(['jspi']);
    expect(runtimeBuildsFor()).toEqual(['plain', 'jspi']);
    expect(runtimeBuildsFor({ devices: ['wasm', 'webgpu', 'wasm'] })).toEqual(['plain', 'jspi']);
    expect(ortFiles({ devices: ['wasm'] })).toEqual([
      'ort-wasm-simd-threaded.mjs',
      'ort-wasm-simd-threaded.wasm',
    ]);
  });

  it('read each device from its descriptor (a device without a runtime adds nothing)', () => {
    for (const d of DEVICES) {
      expect(runtimeBuildsFor({ devices: [d.name] })).toEqual(d.runtimeBuilds.slice(0, 1));
    }
  });

  it('are named exactly by runtimeBuilds (asyncify only when asked for)', () => {
    expect(runtimeBuildsFor({ runtimeBuilds: ['asyncify', 'plain'] })).toEqual([
      'asyncify',
      'plain',
    ]);
    expect(ortFiles({ runtimeBuilds: ['asyncify'] })).toEqual([
      RUNTIME_BUILD_FILES.asyncify.loader,
      RUNTIME_BUILD_FILES.asyncify.wasm,
    ]);
    expect(ortFiles({}).some((f) => f.includes('asyncify'))).toBe(false);
  });

  it('refuse an unknown name, naming the known ones', () => {
    expect(() => runtimeBuildsFor({ devices: ['gpu' as never] })).toThrow(
      "devices: 'gpu' is not one of webgpu, wasm",
    );
    expect(() => runtimeBuildsFor({ devices: [] })).toThrow('devices: nothing is not one of');
    expect(() => runtimeBuildsFor({ runtimeBuilds: ['jsep' as never] })).toThrow(
      "runtimeBuilds: 'jsep' is not one of plain, jspi, asyncify",
    );
  });
});

describe('no shipped file over 25 MiB by default', () => {
  it('holds for every device selection; the asyncify wasm, asked for, is over and says so', () => {
    const selections = [{}, { devices: ['wasm'] }, { devices: ['webgpu'] }] as const;
    for (const options of selections) {
      const files = assetFiles(clefAssets({ ...options, elementBundle: true, workerDir: '/' }));
      const over = files.filter((f) => f.bytes > HOST_FILE_LIMIT_BYTES);
      expect(over, JSON.stringify(options)).toEqual([]);
      expect(assetReport(files, options).join('\n')).not.toContain('warning');
    }
    const asyncify = assetFiles(clefAssets({ runtimeBuilds: ['asyncify'], bundledModel: false }));
    const report = assetReport(asyncify, { runtimeBuilds: ['asyncify'] }).join('\n');
    expect(report).toMatch(
      /warning: \/ort\/ort-wasm-simd-threaded\.asyncify\.wasm is 25\.\d MiB, over the 25 MiB/,
    );
  });
});

describe('what is copied is said, with its size', () => {
  const out = mkdtempSync(join(tmpdir(), 'clef-assets-report-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('each onnxruntime file with its build and devices, each other folder, the total', () => {
    const files = copyAssets(out, { devices: ['wasm'], workerDir: false });
    const wasm = statSync(join(out, 'ort', RUNTIME_BUILD_FILES.plain.wasm)).size;
    expect(files.find((f) => f.url === `/ort/${RUNTIME_BUILD_FILES.plain.wasm}`)?.bytes).toBe(wasm);
    const total = files.reduce((n, f) => n + f.bytes, 0);
    const lines = assetReport(files, { devices: ['wasm'] });
    expect(lines[0]).toBe(`${files.length} files, ${(total / 1e6).toFixed(2)} MB:`);
    expect(lines[1]).toMatch(
      /^ {2}\/ort\/ort-wasm-simd-threaded\.mjs +0\.02 MB {2}plain \(wasm\)$/,
    );
    expect(lines[2]).toMatch(
      new RegExp(`^  /ort/ort-wasm-simd-threaded\\.wasm +${(wasm / 1e6).toFixed(2)} MB  plain`),
    );
    // The bundled model's line: its files on disk (the model card, *.md, is not shipped).
    const nano = readdirSync('models/clef-nano').filter((f) => !f.endsWith('.md'));
    const nanoBytes = nano.reduce((n, f) => n + statSync(join('models/clef-nano', f)).size, 0);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^  /clef-web/models/clef-nano/ \\(${nano.length} files\\) +${(nanoBytes / 1e6).toFixed(2)} MB$`,
        ),
      ),
    );
    expect(lines.join('\n')).not.toContain('jspi');
    // WASM only: under the 20 MB for a whole app (the app's own code is ~0.3 MB more).
    expect(total).toBeLessThan(19e6);
  });
});
