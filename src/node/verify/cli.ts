/**
 * `npx clef-web verify <package-dir> --release <release-dir> [--requests N] [--seed S]
 *    [--json] [--max-dp X] [--chunk-tokens N] [--threads N]`
 * `npx clef-web verify <package-dir> --against-package <package-dir> ...`
 *
 * Runs N random requests through the package (onnxruntime-node) and through the float64
 * reference forward on the release (or through another package, e.g. the fp32 baseline) and
 * prints mean and max |Δp| and the share of identical answers.
 * Exit status: 0 verified; 1 when --max-dp is given and exceeded, or the check could not run
 * (package refused, files missing); 2 on usage errors.
 */
import { StepProgress } from '../../build/step-progress.js';
import {
  DEFAULT_FIDELITY_SEED,
  DEFAULT_VERIFY_CHUNK_TOKENS,
  type FidelityBaseline,
  type FidelityReport,
} from '../../build/verify/fidelity.js';
import { measureFidelity } from '../build-runtime.js';
import {
  UsageError,
  errorText,
  numberOption,
  parseCommandArgs,
  type NumberWording,
} from '../cli-args.js';

export const VERIFY_USAGE = `usage: clef-web verify <package-dir> (--release <release-dir> | --against-package <dir>)
  [--requests N (default 100)] [--seed S (default ${DEFAULT_FIDELITY_SEED})] [--json]
  [--max-dp X (exit 1 when max |Δp| exceeds X)] [--chunk-tokens N (default ${DEFAULT_VERIFY_CHUNK_TOKENS})]
  [--threads N]`;

const DEFAULT_VERIFY_REQUESTS = 100;

export interface VerifyIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /**
   * Progress goes to err when true (default: for the process's own streams): redrawn on a
   * terminal, a line every few seconds otherwise.
   */
  progress?: boolean;
}

const processIo: VerifyIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** `--requests needs an integer ≥ 1, not "ten"`. */
const needs: NumberWording = (name, text, rule) =>
  `--${name} needs ${rule.integer ? 'an integer' : 'a number'} ≥ ${rule.min}, not ${JSON.stringify(text)}`;

const integer = (name: string, value: string | undefined, min: number) =>
  numberOption(name, value, { integer: true, min }, needs);

interface VerifyArgs {
  packageDir: string;
  against: FidelityBaseline;
  requests: number;
  seed: number;
  json: boolean;
  maxDp: number | undefined;
  chunkTokens: number;
  threads: number | undefined;
}

function parseVerifyArgs(argv: string[]): VerifyArgs {
  const { values, positionals } = parseCommandArgs(argv, {
    release: { type: 'string' },
    'against-package': { type: 'string' },
    requests: { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'boolean' },
    'max-dp': { type: 'string' },
    'chunk-tokens': { type: 'string' },
    threads: { type: 'string' },
  });
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'missing <package-dir>'
        : `one package directory, not ${positionals.length}`,
    );
  }
  const release = values.release;
  const other = values['against-package'];
  if ((release === undefined) === (other === undefined)) {
    throw new UsageError('give exactly one of --release <release-dir> and --against-package <dir>');
  }
  const maxDp = numberOption('max-dp', values['max-dp'], { min: 0 }, needs);
  return {
    packageDir: positionals[0] as string,
    against: release !== undefined ? { release } : { package: other as string },
    requests: integer('requests', values.requests, 1) ?? DEFAULT_VERIFY_REQUESTS,
    seed: integer('seed', values.seed, 0) ?? DEFAULT_FIDELITY_SEED,
    json: values.json ?? false,
    maxDp,
    chunkTokens: integer('chunk-tokens', values['chunk-tokens'], 1) ?? DEFAULT_VERIFY_CHUNK_TOKENS,
    threads: integer('threads', values.threads, 1),
  };
}

function table(report: FidelityReport, args: VerifyArgs): string {
  const e = (x: number) => x.toExponential(2);
  const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
  const against =
    'release' in args.against
      ? `the float64 reference on ${args.against.release}`
      : `package ${args.against.package} (${report.baseline})`;
  const rows: Array<[string, string, string, string, string]> = [
    ['fed', 'requests', 'mean |Δp|', 'max |Δp|', 'same answers'],
    ['all', ...cells(report)],
    ['whole', ...cells(report.whole)],
    [`chunks of ${report.chunkTokens}`, ...cells(report.chunked)],
  ];
  function cells(p: {
    requests: number;
    meanAbsDp: number;
    maxAbsDp: number;
    sameAnswers: number;
  }): [string, string, string, string] {
    return [String(p.requests), e(p.meanAbsDp), e(p.maxAbsDp), pct(p.sameAnswers)];
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  return [
    `${args.packageDir} vs ${against}`,
    `${report.requests} requests (seed ${report.seed}), ${report.questions} questions, ${report.options} options, ${report.seconds.toFixed(1)} s`,
    ...lines,
    `largest |Δp|: request ${report.maxAbsDpRequest}, question ${report.maxAbsDpQuestion}`,
  ].join('\n');
}

/** Runs `clef-web verify` with the arguments after the command name; returns the exit status. */
export async function verifyMain(argv: string[], io: VerifyIo = processIo): Promise<number> {
  let args: VerifyArgs;
  try {
    args = parseVerifyArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`clef-web verify: ${e.message}\n${VERIFY_USAGE}\n`);
    return 2;
  }
  // Progress on stderr (a line every few seconds when it is not a terminal).
  const progress =
    (io.progress ?? io === processIo)
      ? new StepProgress(
          { write: (text: string) => io.err(text), isTTY: process.stderr.isTTY === true },
          { unit: 'requests', total: args.requests, prefix: '[verify] ' },
        )
      : null;
  let report: FidelityReport;
  try {
    report = await measureFidelity(args.packageDir, args.against, {
      requests: args.requests,
      seed: args.seed,
      chunkTokens: args.chunkTokens,
      ...(args.threads !== undefined ? { threads: args.threads } : {}),
      ...(progress ? { onProgress: (done: number) => progress.update(done) } : {}),
    });
  } catch (e) {
    progress?.finish();
    io.err(`clef-web verify: ${errorText(e)}\n`);
    return 1;
  }
  progress?.finish();
  if (args.json) {
    const { meanAbsDp, maxAbsDp, sameAnswers, requests } = report;
    io.out(`${JSON.stringify({ meanAbsDp, maxAbsDp, sameAnswers, requests })}\n`);
  } else {
    io.out(`${table(report, args)}\n`);
  }
  if (args.maxDp !== undefined && report.maxAbsDp > args.maxDp) {
    io.err(
      `clef-web verify: max |Δp| ${report.maxAbsDp.toExponential(3)} exceeds --max-dp ${args.maxDp}: not verified\n`,
    );
    return 1;
  }
  return 0;
}
