/**
 * `npx clef-web calibrate <package> --examples labelled.jsonl [--coverage 0.9] [--out <dir>]`
 *
 * Runs each labelled example's request through the package (the Node engine), fits per
 * question type (and per option-count band, with --bands) a temperature by likelihood and a
 * split-conformal threshold for the coverage, prints the held-out figures before and after, and
 * writes `calibration.json` listed in the manifest with its SHA-256. Nothing is written unless
 * the fit succeeds: bad lines (all of them, numbered) and too few answers exit 1 first.
 */
import { readFileSync } from 'node:fs';
import { errorText, numberOption, parseCommandArgs } from '../cli-args.js';
import {
  calibrateFromExamples,
  formatFitReport,
  isCalibrationError,
  serializeCalibration,
  type OptionBand,
} from '../../calibrate/index.js';
import { validateRequest } from '../../protocol/validate.js';
import type { JsonValue } from '../../protocol/types.js';
import { loadNodePackage } from '../engine.js';
import { writeCalibratedPackage } from '../../build/calibrate/write.js';

export const CALIBRATE_USAGE = `usage: clef-web calibrate <package-dir> --examples labelled.jsonl
  [--coverage 0.9]        coverage of the prediction sets, in (0, 1)
  [--out <dir>]           write the calibrated package there (default: the package, in place)
  [--bands 2-12,13-255]   also fit these option-count bands of each type on their own
  [--held-out 0.25]       share of each group's answers held out for the figures
  [--seed 0] [--threads N] [--quiet]
each line: {"request": <System One request>, "labels": {"<question id>": <option id |
  true/false for noul | level index for score>}}`;

export function parseBands(text: string): OptionBand[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(part);
    if (!m) throw new Error(`--bands: "${part}" is not MIN-MAX`);
    return { minOptions: Number(m[1]), maxOptions: Number(m[2]) };
  });
}

const number = (name: string, text: string | undefined) =>
  numberOption(name, text, {}, () => `--${name}: not a number`);

export async function calibrateMain(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandArgs(argv, {
      examples: { type: 'string' },
      coverage: { type: 'string', default: '0.9' },
      out: { type: 'string' },
      bands: { type: 'string' },
      'held-out': { type: 'string' },
      seed: { type: 'string' },
      threads: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    });
  } catch (e) {
    console.error(`clef-web calibrate: ${(e as Error).message}\n${CALIBRATE_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(CALIBRATE_USAGE);
    return 0;
  }
  const dir = positionals[0];
  const wrong =
    dir === undefined
      ? 'missing <package-dir>'
      : positionals.length > 1
        ? `one <package-dir>, not ${positionals.length}`
        : values.examples === undefined
          ? 'missing --examples <labelled.jsonl>'
          : null;
  if (wrong !== null || dir === undefined || values.examples === undefined) {
    console.error(`clef-web calibrate: ${wrong}\n${CALIBRATE_USAGE}`);
    return 2;
  }
  let fitOptions;
  let threads;
  try {
    fitOptions = {
      coverage: number('coverage', values.coverage) as number,
      heldOutFraction: number('held-out', values['held-out']),
      seed: number('seed', values.seed),
      bands: values.bands === undefined ? undefined : parseBands(values.bands),
    };
    threads = number('threads', values.threads);
  } catch (e) {
    console.error(`clef-web calibrate: ${(e as Error).message}\n${CALIBRATE_USAGE}`);
    return 2;
  }
  let text: string;
  try {
    text = readFileSync(values.examples, 'utf8');
  } catch (e) {
    console.error(`clef-web calibrate: cannot read --examples ${errorText(e)}`);
    return 1;
  }
  let engine;
  try {
    engine = await loadNodePackage(dir, threads === undefined ? {} : { threads });
  } catch (e) {
    console.error(`clef-web calibrate: ${errorText(e)}`);
    return 1;
  }
  try {
    const models = engine.models as string[];
    const limits = { ...engine.manifest.limits, contextTokens: engine.manifest.contextTokens };
    const started = Date.now();
    const result = await calibrateFromExamples(text, {
      ...fitOptions,
      validateRequest: (body: JsonValue) => validateRequest(body, { models, limits }),
      logits: async (request) => (await engine.decide(request)).logits,
      onProgress: (done, total) => {
        if (!values.quiet && (done % 100 === 0 || done === total)) {
          const s = ((Date.now() - started) / 1000).toFixed(0);
          process.stderr.write(`calibrate: ${done}/${total} examples, ${s} s\n`);
        }
      },
    });
    console.log(`${result.examples} examples, ${result.records.length} labelled answers`);
    console.log(formatFitReport(result));
    const path = writeCalibratedPackage(
      dir,
      engine.manifest,
      serializeCalibration(result.calibration),
      values.out ?? dir,
    );
    console.log(`wrote ${path} (listed in the manifest with its SHA-256)`);
    return 0;
  } catch (e) {
    if (isCalibrationError(e)) {
      console.error(`clef-web calibrate: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await engine.dispose();
  }
}
