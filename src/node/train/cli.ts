/** `clef-web train`: a thin layer on trainDecisionModel (progress on stderr, the result on stdout). */
import { readFileSync } from 'node:fs';
import { UsageError, numberOption, parseCommandArgs } from '../cli-args.js';
import { baselineVerdict, chanceNote, logisticVerdict } from '../../build/train/baseline.js';
import { ORDER_MODES, type OrderMode } from '../../build/train/fit.js';
import { ClefError } from '../../wire/errors.js';
import { parseBands } from '../calibrate/cli.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import { MissingDependencyError } from '../missing-dependency.js';
import { isTrainError, TrainError } from '../../build/train/errors.js';
import type { TrainInput } from '../../build/train/input.js';
import type { TrainProgress, TrainResult } from '../../build/train/options.js';
import type { PlainFormat } from '../../build/train/plain.js';
import type { TeacherProgress } from '../../build/train/teacher-options.js';
import { progressLines } from './progress-lines.js';
import { trainDecisionModel } from './train.js';
import { DEFAULT_SETTINGS } from '../../build/train/select.js';

export const TRAIN_USAGE = `usage: clef-web train --texts tickets.csv [--question question.json] --out <dir> [options]
       clef-web train --examples labelled.jsonl --out <dir> [options]
       clef-web train --texts unlabelled.txt --question question.json --teacher <URL> --out <dir>
  Trains a small decision model on your labelled texts and writes a browser package,
  calibrated and verified.
input:
  --texts FILE           a text and a label per row: CSV with a header (comma, semicolon or tab),
                         or JSONL of {"text": ..., "label": ...}; UTF-8, or UTF-16 with a BOM
  --text-column NAME     the text's column (default "text")
  --label-column NAME    the label's column (default "label"; also the question's id)
  --format csv|jsonl|lines   how --texts is read (default: by its extension, .txt = a text a line)
  --question FILE        the System One choice question the labels answer ({"type": "choice",
                         "criteria": {...}} or {"<id>": {...}}); default: a choice over the labels
  --examples FILE        or labelled requests, one {"request": ..., "labels": {...}} per line
labels from a bigger model:
  --teacher URL          a System One server's root (or a Workers AI model URL) labels --texts
  --teacher-key KEY      its API key (Authorization: Bearer); or the CLEF_TEACHER_KEY variable
  --teacher-model NAME   the model to ask (default: the server's only one)
  --min-confidence F     keep answers at least this confident (default 0.8)
  --teacher-dir DIR      records (the resumable cache), review.csv, labelled.csv, counts.json
                         (default: <out>-teacher)
  --concurrency N        requests in flight (default 4)
  --review N             labelled texts in review.csv (default 100)
output and training:
  --out DIR              the package to write (must not exist or be empty)
  --release DIR          where the Clef release is written (default: <out>-release)
  --name NAME            the model name requests use (default: --texts: the --out folder's name;
                         --examples: the examples' most common model)
  --seed N               random seed (default 1): the same seed gives the same bytes
  --holdout F            share held out for the figures and calibration (default: none up to
                         2,000 examples, which are cross-fitted instead; 0.1 above)
  --held-out FILE        held-out labelled requests from their own file instead of --holdout
  --coverage F           calibration coverage (default 0.9)
  --bands 2-12,13-255    also calibrate these option-count bands on their own (as calibrate does)
  --lambda L             the fit's L2 penalty as given (default: chosen by cross-fitting)
  --order auto|on|off    the layers that read more than the words: the scope layer (words after
                         "not", "never", "without", "don't"... up to the clause's end are left
                         out; or after "not", "no", "without"... only, so "can't reach the vpn"
                         keeps the vpn) and the order layer (word order: "keep prod, delete temp").
                         auto (default) cross-fits each beside the plain model on files of up
                         to 2,000 examples the plain model gets wrong over 1% of out of fold,
                         and keeps the one that helps; on: the order layer always (slower);
                         off: neither
  --vocab N              BPE vocabulary size (default 4000, fewer where the package would pass
                         4 MiB: about 1,500 for 151 options)
  --fidelity N           random requests the converter checks against the float64 reference (default 2)
  --context N            context length in tokens (default 4096)
  --card-notes FILE      markdown appended to the generated model card (a licence, a credit)
  --threads N            threads the fit runs on (default: the cores, at most 4; 1: no worker
                         threads): fits of 2,000 examples or more, and the pointer's and the
                         order layer's from 500; the same bytes for any N
  --quiet                no progress lines
Ctrl-C stops a run and removes its partial folders; with --teacher it first finishes the
requests in flight, so a rerun asks nothing twice. docs/training.md has the formats, a worked
example and what the model can learn.`;

const number = (name: string, text: string | undefined) =>
  numberOption(name, text, {}, () => `--${name} must be a number, got ${JSON.stringify(text)}`);

function formatEta(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `, about ${Math.floor(s / 60)} min ${s % 60} s left` : `, about ${s} s left`;
}

export function formatProgress(p: TrainProgress | TeacherProgress): string {
  // A fit's own message counts the fits ("fit 3 of at most 16, iteration 40"): no "2/16" before it.
  if (p.phase === 'fit' && p.message !== undefined)
    return `train: ${p.message}${formatEta(p.etaMs)}`;
  const count = p.total > 1 ? ` ${p.done}/${p.total}` : p.done >= p.total ? ' done' : '';
  const eta = p.done >= p.total ? '' : formatEta(p.etaMs); // nothing is left once it is done
  return `train: ${p.phase}${count}${p.message ? `: ${p.message}` : ''}${eta}`;
}

const FORMATS: readonly PlainFormat[] = ['csv', 'jsonl', 'lines'];

/** A file's bytes (decoded by the trainer, which refuses what is not UTF-8 or UTF-16 with a BOM). */
function read(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new TrainError('train_options_invalid', `cannot read ${path}: ${(e as Error).message}`);
  }
}

/**
 * The first Ctrl-C (or SIGTERM) stops the teacher asking: the requests in flight finish and are
 * recorded, then the run ends; a second one ends it at once. Training installs its own handlers
 * (interrupts.ts) once it writes partial folders, and removes them on the signal.
 */
function stopTeacherOnSignal(controller: AbortController): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1 && !controller.signal.aborted) {
      controller.abort();
      process.stderr.write(
        `clef-web train: ${signal}: finishing the teacher's requests in flight, then stopping (again to stop now)\n`,
      );
      return;
    }
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/**
 * The lines `train` prints about a trained model: each question's accuracy beside naive Bayes',
 * then logistic regression's, with the verdict and the sign tests the card gives.
 */
export function figuresLines(result: TrainResult): string[] {
  const on = result.evaluatedOn === 'cross-fit' ? 'out of fold' : 'held out';
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const out: string[] = [];
  for (const q of result.heldOut.questions) {
    const baseline = result.baseline.questions.find((b) => b.id === q.id);
    const nb = baseline?.accuracy ?? NaN;
    const lr = baseline?.logistic;
    const behind = lr != null && logisticVerdict(q.accuracy, lr.accuracy) === 'behind';
    const plain = {
      earned: behind ? '3 points or more above it' : 'the model earned its place',
      level: 'no better than naive Bayes by 3 points',
      worse: 'naive Bayes is better: the model did NOT earn its place (see README.md)',
      unmeasured: 'not compared',
    }[baselineVerdict(q.accuracy, nb)];
    out.push(
      `${q.id}: accuracy ${pct(q.accuracy)} over ${q.answered} answers ${on}; naive Bayes ${pct(nb)}: ${plain}${baseline?.disagreements ? `; ${chanceNote(baseline.disagreements)}` : ''}`,
    );
    if (lr != null)
      out.push(
        `  logistic regression on word and word-pair counts ${pct(lr.accuracy)}: ${behind ? 'better than the model: the model did NOT earn its place (see README.md)' : 'the model is level or ahead'}${lr.disagreements ? `; ${chanceNote(lr.disagreements, 'logistic regression')}` : ''}`,
      );
  }
  if (result.baseline.logisticSkipped !== undefined)
    out.push(`logistic regression ${result.baseline.logisticSkipped}`);
  out.push(...result.notes);
  return out;
}

export async function trainMain(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseCommandArgs(
      argv,
      {
        texts: { type: 'string' },
        'text-column': { type: 'string' },
        'label-column': { type: 'string' },
        format: { type: 'string' },
        question: { type: 'string' },
        examples: { type: 'string' },
        teacher: { type: 'string' },
        'teacher-key': { type: 'string' },
        'teacher-model': { type: 'string' },
        'min-confidence': { type: 'string' },
        'teacher-dir': { type: 'string' },
        concurrency: { type: 'string' },
        review: { type: 'string' },
        out: { type: 'string' },
        release: { type: 'string' },
        name: { type: 'string' },
        seed: { type: 'string' },
        holdout: { type: 'string' },
        'held-out': { type: 'string' },
        coverage: { type: 'string' },
        bands: { type: 'string' },
        lambda: { type: 'string' },
        order: { type: 'string' },
        vocab: { type: 'string' },
        fidelity: { type: 'string' },
        'card-notes': { type: 'string' },
        context: { type: 'string' },
        threads: { type: 'string' },
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
  if (values.texts === undefined && values.examples === undefined) {
    console.error(`clef-web train: missing --texts (or --examples)\n${TRAIN_USAGE}`);
    return 2;
  }
  if (values.out === undefined) {
    console.error(`clef-web train: missing --out\n${TRAIN_USAGE}`);
    return 2;
  }
  const format = values.format as PlainFormat | undefined;
  if (format !== undefined && !FORMATS.includes(format)) {
    console.error(`clef-web train: --format must be csv, jsonl or lines, got ${format}`);
    return 2;
  }
  const order = values.order as OrderMode | undefined;
  if (order !== undefined && !ORDER_MODES.includes(order)) {
    console.error(`clef-web train: --order must be auto, on or off, got ${order}`);
    return 2;
  }
  const controller = new AbortController();
  let stopSignals = () => {};
  const lines = progressLines(process.stderr, formatProgress, {
    terminal: process.stderr.isTTY === true,
  });
  try {
    const lambda = number('lambda', values.lambda);
    const plain =
      (values['text-column'] ?? values['label-column'] ?? format)
        ? {
            textColumn: values['text-column'],
            labelColumn: values['label-column'],
            format,
          }
        : undefined;
    const teacherKey = values['teacher-key'] ?? process.env.CLEF_TEACHER_KEY;
    const options: TrainInput = {
      texts: values.texts === undefined ? undefined : read(values.texts),
      examples: values.examples === undefined ? undefined : read(values.examples),
      question: values.question === undefined ? undefined : read(values.question),
      plain,
      files: {
        texts: values.texts,
        examples: values.examples,
        question: values.question,
        heldOut: values['held-out'],
      },
      teacher:
        values.teacher === undefined
          ? undefined
          : {
              url: values.teacher,
              apiKey: teacherKey,
              model: values['teacher-model'],
              minConfidence: number('min-confidence', values['min-confidence']),
              dir: values['teacher-dir'],
              concurrency: number('concurrency', values.concurrency),
              reviewSize: number('review', values.review),
              signal: controller.signal,
            },
      out: values.out,
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
      cardNotes:
        values['card-notes'] === undefined
          ? undefined
          : new TextDecoder().decode(read(values['card-notes'])),
      fit: lambda === undefined ? undefined : { ...DEFAULT_SETTINGS, lambda },
      order,
      threads: number('threads', values.threads),
      onProgress: (p) => {
        // The teacher's phase is over once training starts: signals are training's again.
        if (p.phase !== 'teacher') stopSignals();
        if (!values.quiet) lines.write(p);
      },
    };
    if (options.teacher !== undefined) stopSignals = stopTeacherOnSignal(controller);
    const result = await trainDecisionModel(options).finally(() => lines.end());
    for (const line of figuresLines(result)) console.log(line);
    console.log(
      `wrote ${result.packageDir} (model "${result.name}"; card: README.md) and the release ${result.releaseDir}`,
    );
    if (!result.calibrated) console.log('not calibrated: too few answers (see README.md)');
    return 0;
  } catch (e) {
    if (
      isTrainError(e) ||
      isCalibrationError(e) ||
      e instanceof UsageError ||
      e instanceof ClefError ||
      e instanceof MissingDependencyError
    ) {
      console.error(`clef-web train: ${e.message}`);
      return isTrainError(e) && e.code === 'train_interrupted' ? 130 : 1;
    }
    throw e;
  } finally {
    stopSignals();
  }
}
