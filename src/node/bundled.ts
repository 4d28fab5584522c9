/**
 * Where the package's own files are on disk: the bundled clef-nano (`models/clef-nano/`) that
 * `clef-web serve` answers with when no package is named. Found from this module's location, so
 * it works in the checkout (src/node) and installed (dist/node/node).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding clef-web's package.json (the checkout, or node_modules/clef-web). */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'clef-web') return dir;
    }
    if (dirname(dir) === dir) throw new Error(`clef-web's package.json not found above ${from}`);
  }
}

export function bundledModelDir(root = packageRoot()): string {
  return join(root, 'models', 'clef-nano');
}
