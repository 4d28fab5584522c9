/** `clef-web <command>`: dispatches to each tool's own main. */
const USAGE = `usage: clef-web <command> [options]
commands:
  convert <release-dir> <out-dir> --dtype fp32|fp16|q8|q4|mixed   Clef release -> browser package
  prepare <package-dir>                                           add WASM-prepared graphs to a package
  verify <package-dir> --release <release-dir> [--requests N]     package vs the reference forward
  serve [<package-dir>] [--port 8787] [--host 127.0.0.1]          System One HTTP server (default: the bundled clef-nano)
  decide --package <dir> --in requests.jsonl --out responses.jsonl [--resume]   a file of requests
  assets <dir> [--no-model] [--element]                           copy what a page serves same-origin
  calibrate <package-dir> --examples labelled.jsonl [--coverage 0.9] [--out <dir>]   fit calibration
  train --examples labelled.jsonl --out <dir> [--seed N] [--holdout 0.1]      train a decision model`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'convert':
      return (await import('./convert/cli.js')).convertMain(rest);
    case 'prepare':
      return (await import('./convert/prepare-cli.js')).prepareMain(rest);
    case 'verify':
      return (await import('./verify/cli.js')).verifyMain(rest);
    case 'serve':
      return (await import('./serve/cli.js')).serveMain(rest);
    case 'decide':
      return (await import('./decide/cli.js')).decideMain(rest);
    case 'assets':
      return (await import('./assets-cli.js')).assetsMain(rest);
    case 'calibrate':
      return (await import('./calibrate/cli.js')).calibrateMain(rest);
    case 'train':
      return (await import('./train/cli.js')).trainMain(rest);
    case undefined:
    case '--help':
    case '-h':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}
