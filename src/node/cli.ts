/**
 * `clef-web <command>`: dispatches to each tool's own main. `--help`/`-h` after any command,
 * and `clef-web help <command>`, print that command's usage and exit 0; `--version` prints the
 * package's version. Whatever a command throws is said in one line after its prefix
 * (`clef-web serve: ...`), never as a stack trace: a user's mistake is not a crash.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './bundled.js';
import { UsageError, errorText, nearestOption } from './cli-args.js';

const USAGE = `usage: clef-web <command> [options]    (clef-web help <command>, clef-web --version)
commands:
  convert <release-dir> <out-dir> --dtype fp32|fp16|q8|q4|mixed   Clef release -> browser package
  prepare <package-dir>                                           add WASM-prepared graphs to a package
  verify <package-dir> --release <release-dir> [--requests N]     package vs the reference forward
  serve [<package-dir>] [--port 8787] [--host 127.0.0.1] [--workers N]   System One HTTP server (default: the bundled clef-nano)
  decide --in requests.jsonl --out responses.jsonl [--package <dir>] [--resume]   a file of requests (default: clef-nano)
  assets <dir> [--devices webgpu,wasm] [--no-worker | --worker-dir <path>] [--no-model] [--element]
                                                                  copy what a page serves same-origin
  calibrate <package-dir> --examples labelled.jsonl [--coverage 0.9] [--out <dir>]   fit calibration
  train --examples labelled.jsonl --out <dir> [--seed N] [--holdout 0.1]      train a decision model
  replay <records.jsonl> [--package <dir>]                        re-run decision records: identical or not
  static <dir> [--port 8080] [--host 127.0.0.1]                   serve a built app with the production headers (docs/deploy.md)`;

interface Command {
  usage: string;
  main: (argv: string[]) => number | Promise<number>;
}

/** Each command, loaded only when it runs or its usage is asked for. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  convert: async () => {
    const m = await import('./convert/cli.js');
    return { usage: m.CONVERT_USAGE, main: m.convertMain };
  },
  prepare: async () => {
    const m = await import('./convert/prepare-cli.js');
    return { usage: m.PREPARE_USAGE, main: m.prepareMain };
  },
  verify: async () => {
    const m = await import('./verify/cli.js');
    return { usage: m.VERIFY_USAGE, main: (argv) => m.verifyMain(argv) };
  },
  serve: async () => {
    const m = await import('./serve/cli.js');
    return { usage: m.SERVE_USAGE, main: m.serveMain };
  },
  decide: async () => {
    const m = await import('./decide/cli.js');
    return { usage: m.DECIDE_USAGE, main: m.decideMain };
  },
  assets: async () => {
    const m = await import('./assets-cli.js');
    return { usage: m.ASSETS_USAGE, main: m.assetsMain };
  },
  calibrate: async () => {
    const m = await import('./calibrate/cli.js');
    return { usage: m.CALIBRATE_USAGE, main: m.calibrateMain };
  },
  train: async () => {
    const m = await import('./train/cli.js');
    return { usage: m.TRAIN_USAGE, main: m.trainMain };
  },
  replay: async () => {
    const m = await import('./record/replay.js');
    return { usage: m.REPLAY_USAGE, main: m.replayMain };
  },
  static: async () => {
    const m = await import('./static/cli.js');
    return { usage: m.STATIC_USAGE, main: m.staticMain };
  },
};

export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

const isHelp = (arg: string) => arg === '--help' || arg === '-h';

/** clef-web's version, from the package's own package.json. */
export function version(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    console.error(USAGE);
    return 2;
  }
  if (isHelp(command) || (command === 'help' && rest.length === 0)) {
    console.log(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(`clef-web ${version()}`);
    return 0;
  }
  if (command === 'help') {
    const load = COMMANDS[rest[0] as string];
    if (load === undefined || rest.length > 1) {
      console.error(`clef-web help: no command ${rest.join(' ')}\n${USAGE}`);
      return 2;
    }
    console.log((await load()).usage);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) {
    const near = nearestOption(command, COMMAND_NAMES);
    const hint = near ? ` (did you mean ${near}?)` : '';
    console.error(`clef-web: unknown command ${command}${hint}\n${USAGE}`);
    return 2;
  }
  const loaded = await load();
  // Options end at `--`; a --help before it asks for the usage, whatever else is there.
  const end = rest.indexOf('--');
  if ((end === -1 ? rest : rest.slice(0, end)).some(isHelp)) {
    console.log(loaded.usage);
    return 0;
  }
  try {
    return await loaded.main(rest);
  } catch (e) {
    // A command says its own failures; this is the net under them.
    const usage = e instanceof UsageError ? `\n${loaded.usage}` : '';
    console.error(`clef-web ${command}: ${errorText(e)}${usage}`);
    return e instanceof UsageError ? 2 : 1;
  }
}
