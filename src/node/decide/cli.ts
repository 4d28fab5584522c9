/**
 * `npx clef-web decide --in requests.jsonl --out responses.jsonl [--package <dir>] [--resume]`
 * (no --package: the bundled clef-nano)
 *
 * Answers a file of System One requests, one JSON body per line, in order. Output line N answers
 * input line N (blank input lines included): the response body exactly as `clef-web serve` would
 * send it, or `{"error":{"status":<HTTP status>,"body":<the error body serve would send>}}`.
 * Each line goes through the same route code as the server, so the two never disagree.
 *
 * Request errors (4xx) are answers and go in the file. A 5xx (the engine failed) stops the run
 * with exit 1 without writing that line, so `--resume` retries it.
 */
import { handleRoute, type RouteBackend } from '../../http/routes.js';
import type { ModelCard } from '../../protocol/types.js';
import { countLines, openOutput, OutputExistsError, readLines } from './jsonl.js';
import { Progress, type ProgressStream } from './progress.js';
import type { RecordLog } from '../record/log.js';
import { RUNTIME_USAGE, runtimeOption, type NodeRuntimeRequest } from '../node-runtime.js';

export const DECIDE_USAGE = `usage: clef-web decide --in requests.jsonl --out responses.jsonl
  [--package <dir>]  the converted package to answer with (default: the bundled clef-nano)
  [--resume]      continue an interrupted run: keep out's complete lines, skip that many inputs
  [--record <records.jsonl>]  append a decision record per answer (docs/records.md)
  [--record-hash-only]        records keep each request's SHA-256, not the request
  [--threads N] [--quiet (no progress)]
  ${RUNTIME_USAGE}
output: one line per input line, in order: the response body, or
  {"error":{"status":<HTTP status>,"body":<error body>}} for a request the server would refuse`;

/** The part of an engine `decide` uses (a NodeEngine, or a test's stand-in). */
export interface DecideEngine {
  decide(body: unknown): Promise<{ json: string }>;
}

export interface DecideFileOptions {
  input: string;
  output: string;
  resume: boolean;
  progress?: ProgressStream | null;
  /** Checked between lines: true stops the run after the current line. */
  stopRequested?: () => boolean;
}

export interface DecideSummary {
  /** Lines in the input. */
  total: number;
  /** Lines an earlier run had answered. */
  skipped: number;
  /** Bytes of a partial last line (an interrupted write) cut off the output before resuming. */
  truncatedBytes: number;
  /** Lines answered by this run (answers and error lines). */
  processed: number;
  errors: number;
  seconds: number;
  decisionsPerSecond: number;
  /** Why the run ended early, or null when every line has its answer. */
  stoppedBy: null | 'interrupted' | { status: number; body: string; line: number };
}

import { UsageError, errorText, numberOption, parseCommandArgs } from '../cli-args.js';

/** A mistake in the command line or the files given (exit 2). */
export { UsageError };

/** The model list is never asked for here: the decide route only decides. */
const noModels = (): ModelCard[] => [];

/** One input line through the System One route; resolves to its status and body text. */
async function answerLine(line: string, backend: RouteBackend) {
  const request = new Request('http://clef-web.local/v1/systemone', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: line,
  });
  const response = await handleRoute(request, backend);
  return { status: response.status, body: await response.text() };
}

export async function decideFile(
  engine: DecideEngine,
  options: DecideFileOptions,
): Promise<DecideSummary> {
  const total = await countLines(options.input);
  const out = await openOutput(options.output, options.resume);
  const skipped = out.done;
  if (skipped > total) {
    await out.close();
    throw new UsageError(
      `${options.output} has ${skipped} lines but ${options.input} only ${total}: ` +
        'it is not the output of this input',
    );
  }
  const backend: RouteBackend = { decide: (body) => engine.decide(body), models: noModels };
  const progress = options.progress ? new Progress(options.progress, { total, skipped }) : null;
  const started = performance.now();
  let index = 0;
  let processed = 0;
  let errors = 0;
  let stoppedBy: DecideSummary['stoppedBy'] = null;
  try {
    for await (const line of readLines(options.input)) {
      index++;
      if (index <= skipped) continue;
      if (options.stopRequested?.()) {
        stoppedBy = 'interrupted';
        break;
      }
      const { status, body } = await answerLine(line, backend);
      if (status >= 500) {
        stoppedBy = { status, body, line: index };
        break;
      }
      if (status === 200) await out.append(body);
      else {
        await out.append(`{"error":{"status":${status},"body":${body}}}`);
        errors++;
      }
      processed++;
      progress?.update(processed, errors);
    }
  } finally {
    progress?.update(processed, errors, true);
    progress?.finish();
    await out.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    total,
    skipped,
    truncatedBytes: out.truncatedBytes,
    processed,
    errors,
    seconds,
    decisionsPerSecond: seconds > 0 ? processed / seconds : 0,
    stoppedBy,
  };
}

export function summaryText(s: DecideSummary, output: string): string {
  const head =
    `decided ${s.processed} line(s) in ${s.seconds.toFixed(1)} s: ` +
    `${s.processed - s.errors} answered, ${s.errors} error(s), ` +
    `${s.decisionsPerSecond.toFixed(1)} decisions/s`;
  const resumed = s.skipped > 0 ? `; ${s.skipped} line(s) were already in ${output}` : '';
  const cut =
    s.truncatedBytes > 0
      ? ` (an unfinished last line, ${s.truncatedBytes} bytes, was cut off)`
      : '';
  const left = s.total - s.skipped - s.processed;
  let tail = '';
  if (s.stoppedBy === 'interrupted') {
    tail = `\ninterrupted with ${left} line(s) left: rerun with --resume to continue`;
  } else if (s.stoppedBy !== null) {
    tail =
      `\nstopped at input line ${s.stoppedBy.line}: the engine failed ` +
      `(${s.stoppedBy.status} ${s.stoppedBy.body}); rerun with --resume to retry from there`;
  }
  return head + resumed + cut + tail;
}

export async function decideMain(argv: string[]): Promise<number> {
  let values;
  let runtime: NodeRuntimeRequest;
  let threads: number | undefined;
  try {
    ({ values } = parseCommandArgs(
      argv,
      {
        package: { type: 'string' },
        in: { type: 'string' },
        out: { type: 'string' },
        resume: { type: 'boolean' },
        threads: { type: 'string' },
        quiet: { type: 'boolean' },
        record: { type: 'string' },
        'record-hash-only': { type: 'boolean' },
        runtime: { type: 'string' },
      },
      false,
    ));
    runtime = runtimeOption(values.runtime);
    if (values.record === '') throw new Error('--record needs a file');
    if (values['record-hash-only'] && !values.record) {
      throw new Error('--record-hash-only needs --record <file>');
    }
    if (!values.in || !values.out) {
      const missing = [
        values.in ? null : '--in <requests.jsonl>',
        values.out ? null : '--out <responses.jsonl>',
      ];
      throw new Error(`missing ${missing.filter((m) => m !== null).join(' and ')}`);
    }
    if (values.package === '') throw new Error('--package needs a directory');
    threads = numberOption(
      'threads',
      values.threads,
      { integer: true, min: 1 },
      () => '--threads must be an integer >= 1',
    );
  } catch (e) {
    console.error(`clef-web decide: ${(e as Error).message}\n${DECIDE_USAGE}`);
    return 2;
  }
  // Imported here so `decideFile` stays usable without onnxruntime-node.
  const { loadNodePackage } = await import('../engine.js');
  let engine;
  let log: RecordLog | null = null;
  try {
    // No package named: the bundled clef-nano, as `clef-web serve` does.
    const dir = values.package ?? (await import('../bundled.js')).bundledModelDir();
    engine = await loadNodePackage(dir, { runtime, ...(threads ? { threads } : {}) });
    if (values.record) {
      const { openRecordLog, recordingEngine } = await import('../record/log.js');
      log = await openRecordLog(values.record);
      if (log.truncatedBytes > 0) {
        console.error(
          `clef-web decide: cut a torn last line (${log.truncatedBytes} bytes) off ${values.record}`,
        );
      }
      engine = recordingEngine(engine, log, {
        surface: 'decide',
        requestSha256Only: values['record-hash-only'] === true,
      });
    }
  } catch (e) {
    await engine?.dispose();
    console.error(`clef-web decide: ${errorText(e)}`);
    return 1;
  }
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130); // a second Ctrl-C: the written lines are safe anyway
    interrupted = true;
    process.stderr.write('\nstopping after the current line (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await decideFile(engine, {
      input: values.in,
      output: values.out,
      resume: values.resume === true,
      progress: values.quiet ? null : process.stderr,
      stopRequested: () => interrupted,
    });
    console.log(summaryText(summary, values.out));
    if (summary.stoppedBy === 'interrupted') return 130;
    return summary.stoppedBy === null ? 0 : 1;
  } catch (e) {
    console.error(`clef-web decide: ${errorText(e)}`);
    return e instanceof OutputExistsError || e instanceof UsageError ? 2 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await log?.close();
    await engine.dispose();
  }
}
