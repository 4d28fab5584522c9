/** `npx clef-web prepare <package-dir>`: adds WASM-prepared graphs to a converted package. */
import { addWasmGraphs } from './wasm-graphs.js';

export const PREPARE_USAGE = `usage: clef-web prepare <package-dir>
  Adds the graphs optimised once for WASM (*.wasm.onnx) to a package converted without them, in
  place (needs onnxruntime-node). Pages on WASM then skip onnxruntime's optimiser at load.`;

export async function prepareMain(argv: string[]): Promise<number> {
  const option = argv.find((arg) => arg.startsWith('-'));
  const wrong =
    option !== undefined
      ? `unknown option ${option}`
      : argv.length === 0
        ? 'missing <package-dir>'
        : argv.length > 1
          ? `one <package-dir>, not ${argv.length}`
          : null;
  if (wrong !== null) {
    console.error(`clef-web prepare: ${wrong}\n${PREPARE_USAGE}`);
    return 2;
  }
  try {
    const written = await addWasmGraphs(argv[0]!, (line) => console.error(`[prepare] ${line}`));
    console.log(`${argv[0]}: ${written} WASM-prepared graph${written === 1 ? '' : 's'} added`);
    return 0;
  } catch (e) {
    console.error(`prepare failed: ${(e as Error).message}`);
    return 1;
  }
}
