/**
 * `npx clef-web assets <dir>`: copies what a page needs from its own origin into a static site's
 * folder (for servers other than Vite's): onnxruntime-web's files under `ort/`, the bundled
 * clef-nano under `clef-web/models/clef-nano/`, the engine's worker beside the app's bundle
 * (esbuild leaves `new Worker(new URL('./clef.worker.js', import.meta.url))` to the page), and
 * with `--element` the one-script-tag `<clef-decide>` under `clef-web/`.
 */
import { parseArgs } from 'node:util';
import { copyAssets } from './assets.js';

export const ASSETS_USAGE = `usage: clef-web assets <dir> [--worker-dir <path>] [--no-worker] [--no-model] [--element]
  copies into <dir>, for any static server (serve it with COOP/COEP headers):
    /ort/                        onnxruntime-web's loader and wasm
    /clef-web/models/clef-nano/  the bundled model (--no-model leaves it out)
    /clef.worker.js + chunks     the engine's worker, for bundles that do not emit it (esbuild);
                                 --worker-dir puts it where the bundle is (default: <dir> itself),
                                 --no-worker leaves it out
    /clef-web/sw-routes.js       the System One routes for a classic service worker
    /clef-web/clef-decide.js     with --element: the one-script-tag <clef-decide>`;

export function assetsMain(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'no-model': { type: 'boolean' },
        'no-worker': { type: 'boolean' },
        'worker-dir': { type: 'string' },
        element: { type: 'boolean' },
      },
    });
    const n = parsed.positionals.length;
    if (n !== 1) throw new Error(n === 0 ? 'missing <dir>' : `one <dir>, not ${n}`);
  } catch (e) {
    console.error(`clef-web assets: ${(e as Error).message}\n${ASSETS_USAGE}`);
    return 2;
  }
  try {
    const written = copyAssets(parsed.positionals[0] as string, {
      bundledModel: parsed.values['no-model'] !== true,
      elementBundle: parsed.values.element === true,
      workerDir: parsed.values['no-worker'] === true ? false : (parsed.values['worker-dir'] ?? '/'),
    });
    console.log(`clef-web assets: wrote ${written.length} files under ${parsed.positionals[0]}`);
    return 0;
  } catch (e) {
    console.error(`clef-web assets: ${(e as Error).message}`);
    return 1;
  }
}
