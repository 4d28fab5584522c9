/**
 * `npx clef-web assets <dir> [--no-model] [--element]`: copies what a page needs from its own
 * origin into a static site's folder (for servers other than Vite's): onnxruntime-web's files
 * under `ort/`, the bundled clef-nano under `clef-web/models/clef-nano/`, and with `--element`
 * the one-script-tag `<clef-decide>` under `clef-web/`.
 */
import { parseArgs } from 'node:util';
import { copyAssets } from './assets.js';

export const ASSETS_USAGE = `usage: clef-web assets <dir> [--no-model] [--element]
  copies /ort/ (onnxruntime-web), /clef-web/models/clef-nano/ and, with --element,
  /clef-web/clef-decide.js into <dir>; serve <dir> with COOP/COEP headers`;

export function assetsMain(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'no-model': { type: 'boolean' }, element: { type: 'boolean' } },
    });
    if (parsed.positionals.length !== 1) throw new Error('one output directory is needed');
  } catch (e) {
    console.error(`clef-web assets: ${(e as Error).message}\n${ASSETS_USAGE}`);
    return 2;
  }
  try {
    const written = copyAssets(parsed.positionals[0] as string, {
      bundledModel: parsed.values['no-model'] !== true,
      elementBundle: parsed.values.element === true,
    });
    console.log(`clef-web assets: wrote ${written.length} files under ${parsed.positionals[0]}`);
    return 0;
  } catch (e) {
    console.error(`clef-web assets: ${(e as Error).message}`);
    return 1;
  }
}
