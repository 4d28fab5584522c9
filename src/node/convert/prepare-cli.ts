/** `npx clef-web prepare <package-dir>`: adds WASM-prepared graphs to a converted package. */
import { addWasmGraphs } from '../build-runtime.js';
import { errorText, parseCommandArgs } from '../cli-args.js';

export const PREPARE_USAGE = `usage: clef-web prepare <package-dir>
  Adds the graphs optimised once for WASM (*.wasm.onnx) to a package converted without them, in
  place (needs onnxruntime-node). Pages on WASM then skip onnxruntime's optimiser at load.`;

export async function prepareMain(argv: string[]): Promise<number> {
  let dir: string;
  try {
    const { positionals } = parseCommandArgs(argv, {});
    if (positionals.length !== 1) {
      throw new Error(
        positionals.length === 0
          ? 'missing <package-dir>'
          : `one <package-dir>, not ${positionals.length}`,
      );
    }
    dir = positionals[0]!;
  } catch (e) {
    console.error(`clef-web prepare: ${(e as Error).message}\n${PREPARE_USAGE}`);
    return 2;
  }
  try {
    const written = await addWasmGraphs(dir, (line) => console.error(`[prepare] ${line}`));
    console.log(`${dir}: ${written} WASM-prepared graph${written === 1 ? '' : 's'} added`);
    return 0;
  } catch (e) {
    console.error(`clef-web prepare: ${errorText(e)}`);
    return 1;
  }
}
