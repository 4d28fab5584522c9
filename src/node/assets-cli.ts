/**
 * `npx clef-web assets <dir>`: copies what a page needs from its own origin into a static site's
 * folder (for servers other than Vite's): onnxruntime-web's files under `ort/` (the builds of
 * the devices the app ships), the bundled clef-nano under `clef-web/models/clef-nano/`, the
 * engine's worker beside the app's bundle (esbuild and Rollup leave
 * `new Worker(new URL('./clef.worker.js', import.meta.url))` to the page), and with `--element`
 * the one-script-tag `<clef-decide>` under `clef-web/`. Prints what it copied and its size.
 */
import { DEVICE_NAMES, type DeviceName } from '../core/devices.js';
import { RUNTIME_BUILD_NAMES, type RuntimeBuild } from '../wire/assets.js';
import { assetReport, copyAssets, type AssetOptions } from './assets.js';
import { errorText, parseCommandArgs } from './cli-args.js';

export const ASSETS_USAGE = `usage: clef-web assets <dir> [--devices ${DEVICE_NAMES.join(',')}] [--worker-dir <path>] [--no-worker] [--no-model] [--element]
  copies into <dir>, for any static server (serve it with the headers in docs/deploy.md):
    /ort/                        onnxruntime-web's loader and wasm, for the devices the app uses:
                                 --devices ${DEVICE_NAMES.join(',')} (default: both), wasm (WASM only,
                                 14 MB) or webgpu (WebGPU's build, which runs WASM too);
                                 --runtime-builds ${RUNTIME_BUILD_NAMES.join(',')} names the builds instead
                                 (asyncify: WebGPU without JSPI, Safari; 26.8 MB)
    /clef-web/models/clef-nano/  the bundled model (--no-model leaves it out)
    /clef.worker.js + chunks     the engine's worker, for bundles that do not emit it (esbuild,
                                 Rollup); --worker-dir puts it where the bundle is (default: <dir>
                                 itself; Rollup with @web/rollup-plugin-import-meta-assets:
                                 --worker-dir assets), --no-worker leaves it out (Vite, webpack,
                                 Parcel, Next.js emit it)
    /clef-web/sw-routes.js       the System One routes for a classic service worker
    /clef-web/clef-decide.js     with --element: the one-script-tag <clef-decide>`;

/** A comma-separated list option (`wasm,webgpu`), or undefined when absent. */
function listOption(text: string | undefined): string[] | undefined {
  return text?.split(',').map((s) => s.trim());
}

export function assetsMain(argv: string[]): number {
  let options: AssetOptions;
  let dir: string;
  try {
    const { values, positionals } = parseCommandArgs(argv, {
      devices: { type: 'string' },
      'runtime-builds': { type: 'string' },
      'no-model': { type: 'boolean' },
      'no-worker': { type: 'boolean' },
      'worker-dir': { type: 'string' },
      element: { type: 'boolean' },
    });
    const n = positionals.length;
    if (n !== 1) throw new Error(n === 0 ? 'missing <dir>' : `one <dir>, not ${n}`);
    if (values['no-worker'] && values['worker-dir'] !== undefined) {
      throw new Error('--worker-dir and --no-worker: one or the other');
    }
    if (values.devices !== undefined && values['runtime-builds'] !== undefined) {
      throw new Error('--devices and --runtime-builds: one or the other');
    }
    dir = positionals[0] as string;
    options = {
      bundledModel: values['no-model'] !== true,
      elementBundle: values.element === true,
      workerDir: values['no-worker'] === true ? false : (values['worker-dir'] ?? '/'),
    };
    const devices = listOption(values.devices);
    const builds = listOption(values['runtime-builds']);
    // Checked against the known names by copyAssets, which names them.
    if (devices) options.devices = devices as DeviceName[];
    if (builds) options.runtimeBuilds = builds as RuntimeBuild[];
  } catch (e) {
    console.error(`clef-web assets: ${(e as Error).message}\n${ASSETS_USAGE}`);
    return 2;
  }
  try {
    const files = copyAssets(dir, options);
    const [head, ...rest] = assetReport(files, options);
    console.log([`clef-web assets: copied into ${dir} ${head}`, ...rest].join('\n'));
    return 0;
  } catch (e) {
    const message = errorText(e).replace(/^clef-web: /, '');
    // A wrong --devices / --runtime-builds name is a usage mistake: the usage follows.
    const usage = /^(devices|runtimeBuilds): /.test(message);
    const said = message
      .replace(/^devices: /, '--devices: ')
      .replace(/^runtimeBuilds: /, '--runtime-builds: ');
    console.error(`clef-web assets: ${said}${usage ? `\n${ASSETS_USAGE}` : ''}`);
    return usage ? 2 : 1;
  }
}
