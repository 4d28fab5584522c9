/** `clef-web train`: a thin layer on trainDecisionModel (progress on stderr, the result on stdout). */
import { readFileSync } from 'node:fs';
import { parseCommandArgs } from '../cli-args.js';
import { ClefError } from '../../wire/errors.js';
import { parseBands } from '../calibrate/cli.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import { isTrainError, TrainError } from './errors.js';
import { trainDecisionModel } from './train.js';
import type { TrainOptions, TrainProgress } from './pipeline.js';

export const TRAIN_USAGE = `usage: clef-web train --examples labelled.jsonl --out <dir> [options]
  Trains a small decision model on your labelled System One examples (the JSONL that
  \`clef-web calibrate\` reads) and writes a browser package, calibrated and verified.
options:
  --examples FILE        labelled examples, one {"request": ..., "labels": {...}} per line
  --out DIR              the package to write (must not exist or be empty)
  --release DIR          where the Clef release is written (default: <out>-release)
  --name NAME            the model name requests use (default: the examples' most common model)
  --seed N               random seed (default 1): the same seed gives the same bytes
  --holdout F            share held out for selection, verification, calibration (default 0.1)
  --held-out FILE        held-out examples from their own file instead of --holdout
  --coverage F           calibration coverage (default 0.9)
  --bands 2-12,13-255    also calibrate these option-count bands on their own (as calibrate does)
  --epochs N             most epochs of the fit (default 20; the best on the held-out part is kept)
  --vocab N              BPE vocabulary size (default 4000)
  --fidelity N           random requests the converter checks against the float64 reference (default 2)
  --context N            context length in tokens (default 4096)
  --card-notes FILE      markdown appended to the generated model card (a licence, a credit)
  --quiet                no progress lines
docs/training.md has the format, a worked example and what the model can learn.`;

function number(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new TrainError(
      'train_options_invalid',
      `--${name} must be a number, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function formatEta(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `, about ${Math.floor(s / 60)} min ${s % 60} s left` : `, about ${s} s left`;
}

export function formatProgress(p: TrainProgress): string {
  const count = p.total > 1 ? ` ${p.done}/${p.total}` : p.done >= p.total ? ' done' : '';
  return `train: ${p.phase}${count}${p.message ? `: ${p.message}` : ''}${formatEta(p.etaMs)}`;
}

export async function trainMain(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseCommandArgs(
      argv,
      {
        examples: { type: 'string' },
        out: { type: 'string' },
        release: { type: 'string' },
        name: { type: 'string' },
        seed: { type: 'string' },
        holdout: { type: 'string' },
        'held-out': { type: 'string' },
        coverage: { type: 'string' },
        bands: { type: 'string' },
        epochs: { type: 'string' },
        vocab: { type: 'string' },
        fidelity: { type: 'string' },
        'card-notes': { type: 'string' },
        context: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      false,
    ).values;
  } catch (e) {
    console.error(`clef-web train: ${(e as Error).message}\n${TRAIN_USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(TRAIN_USAGE);
    return 0;
  }
  for (const required of ['examples', 'out'] as const) {
    if (values[required] === undefined) {
      console.error(`clef-web train: missing --${required}\n${TRAIN_USAGE}`);
      return 2;
    }
  }
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (e) {
      throw new TrainError('train_options_invalid', `cannot read ${path}: ${(e as Error).message}`);
    }
  };
  try {
    const epochs = number('epochs', values.epochs);
    const options: TrainOptions = {
      examples: read(values.examples as string),
      out: values.out as string,
      releaseDir: values.release,
      name: values.name,
      seed: number('seed', values.seed),
      holdout: number('holdout', values.holdout),
      heldOutExamples: values['held-out'] === undefined ? undefined : read(values['held-out']),
      coverage: number('coverage', values.coverage),
      calibrationBands: values.bands === undefined ? undefined : parseBands(values.bands),
      vocabSize: number('vocab', values.vocab),
      contextTokens: number('context', values.context),
      fidelityRequests: number('fidelity', values.fidelity),
      cardNotes: values['card-notes'] === undefined ? undefined : read(values['card-notes']),
      fit: epochs === undefined ? undefined : { epochs },
      onProgress: values.quiet ? undefined : (p) => process.stderr.write(`${formatProgress(p)}\n`),
    };
    const result = await trainDecisionModel(options);
    for (const q of result.heldOut.questions) {
      console.log(
        `${q.id}: held-out accuracy ${(100 * q.accuracy).toFixed(1)}% over ${q.answered} answers`,
      );
    }
    console.log(
      `wrote ${result.packageDir} (model "${result.name}"; card: README.md) and the release ${result.releaseDir}`,
    );
    if (!result.calibrated) console.log('not calibrated: too few held-out answers (see README.md)');
    return 0;
  } catch (e) {
    if (isTrainError(e) || isCalibrationError(e) || e instanceof ClefError) {
      console.error(`clef-web train: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
