/**
 * Labels from a bigger model (`clef-web train --teacher <System One URL>`): each text is asked
 * of any System One server (Workers AI's Clef-flash, `clef-web serve`, vLLM) with the question
 * the small model will learn, and the confident answers become its labels.
 *
 * Nothing is asked twice: every answer is appended to `<dir>/records.jsonl` as a decision record
 * (surface `teacher`, synced before it counts), and a later run with the same texts, question and
 * teacher model reads its answers from there, so an interrupted run goes on where it stopped.
 * Transient failures (unreachable, a timeout, 5xx, 408, 429) are retried with exponential
 * back-off; a refusal (any other 4xx) stops the run with the server's message. Afterwards
 * `<dir>` also holds `review.csv` (a sample of labelled texts for a person to check),
 * `labelled.csv` (the kept texts and labels, trainable with `--texts`) and `counts.json` (the
 * teacher's label counts, kept and dropped).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkRemoteOptions, decideRemotely, RemoteFailure } from '../../client/escalation.js';
import { buildRecord, parseRecord, requestSha256, type RecordSource } from '../../core/record.js';
import { parseRequestJson } from '../../protocol/json.js';
import type { JsonValue, SystemOneResponse } from '../../protocol/types.js';
import { openRecordLog } from '../record/log.js';
import { TrainError } from '../../build/train/errors.js';
import type { PlainRow } from '../../build/train/plain.js';
import type { PlainQuestion } from '../../build/train/question.js';
import { writeTeacherFiles, type TeacherReport } from './teacher-files.js';
import type { TeacherOptions, TeacherProgress } from '../../build/train/teacher-options.js';

export type { TeacherReport };

export const DEFAULT_MIN_CONFIDENCE = 0.8;
const RECORDS = 'records.jsonl';
/** Progress lines at most this often (and the last one). */
const PROGRESS_EVERY_MS = 500;

function failed(message: string, details: Record<string, unknown> = {}): TrainError {
  return new TrainError('teacher_failed', message, details);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Retry {
  retries: number;
  delayMs: number;
  onRetry(what: string, attempt: number, waitMs: number, reason: string): void;
}

/** Runs `call`, retrying RemoteFailures the server may recover from; others are thrown. */
async function withRetries<T>(what: string, retry: Retry, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      const transient = e instanceof RemoteFailure && e.fallback;
      if (!transient || attempt >= retry.retries) {
        const reason = e instanceof RemoteFailure ? e.error.message : (e as Error).message;
        const tries = attempt + 1;
        throw failed(
          transient
            ? `${what}: still failing after ${tries} tries: ${reason}. The answers so far are kept: run the same command again to go on`
            : `${what}: ${reason}`,
          { status: e instanceof RemoteFailure ? e.note.status : null },
        );
      }
      const waitMs = retry.delayMs * 2 ** attempt;
      retry.onRetry(what, attempt + 1, waitMs, (e as RemoteFailure).error.message);
      await sleep(waitMs);
    }
  }
}

/** The model to ask: given, in a Workers AI URL's path, or the server's only one. */
async function teacherModel(options: TeacherOptions, retry: Retry): Promise<string> {
  if (options.model !== undefined) return options.model;
  const url = new URL(options.url);
  const run = /\/ai\/run\/(.+)$/.exec(url.pathname);
  if (run) return decodeURIComponent(run[1] as string);
  const listing = `${options.url.replace(/\/+$/, '')}/v1/models`;
  const body = await withRetries(`the teacher's model list (${listing})`, retry, async () => {
    let response: Response;
    try {
      response = await fetch(listing, {
        headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
      });
    } catch (e) {
      const message = `could not be reached: ${(e as Error).message}`;
      throw new RemoteFailure(new Error(message), true, { status: null, message });
    }
    const text = await response.text();
    if (!response.ok) {
      const message = `HTTP ${response.status}: ${text.slice(0, 200)}`;
      const transient =
        response.status >= 500 || response.status === 408 || response.status === 429;
      throw new RemoteFailure(new Error(message), transient, { status: response.status, message });
    }
    return text;
  });
  let names: string[] = [];
  try {
    const models = (JSON.parse(body) as { models?: Array<{ name?: unknown }> }).models ?? [];
    names = models.map((m) => m.name).filter((n): n is string => typeof n === 'string');
  } catch {
    // not a model list: said below
  }
  if (names.length !== 1) {
    throw failed(
      names.length === 0
        ? `${listing} lists no model: give the teacher's model name with --teacher-model`
        : `the teacher serves ${names.length} models (${names.join(', ')}): name one with --teacher-model`,
    );
  }
  return names[0] as string;
}

/** The request a text is asked as: the teacher's model, the text as the state, the question. */
function teacherRequest(model: string, text: string, question: PlainQuestion): JsonValue {
  return parseRequestJson(
    `{"model":${JSON.stringify(model)},"state":${JSON.stringify(text)},"questions":{${JSON.stringify(question.id)}:${question.json}}}`,
  );
}

/** Answers from earlier runs: request SHA-256 → response (lines that do not parse are skipped). */
function earlierAnswers(path: string): Map<string, SystemOneResponse> {
  const answers = new Map<string, SystemOneResponse>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return answers;
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const record = parseRecord(line);
      answers.set(record.request_sha256, record.response);
    } catch {
      // a line torn by a crash: openRecordLog cuts it off, and the text is asked again
    }
  }
  return answers;
}

/**
 * Asks the teacher for every row's label (the records' answers first) and returns the rows it
 * answered with at least minConfidence, labelled, in file order.
 */
export async function labelWithTeacher(
  rows: readonly PlainRow[],
  question: PlainQuestion,
  options: TeacherOptions,
  onProgress: (p: TeacherProgress) => void = () => {},
): Promise<{ rows: PlainRow[]; report: TeacherReport }> {
  try {
    checkRemoteOptions({ baseURL: options.url, when: 'always' });
  } catch (e) {
    throw new TrainError(
      'train_options_invalid',
      `--teacher: ${(e as Error).message.replace('remote.baseURL', 'the URL')}`,
    );
  }
  for (const [option, value, least] of [
    ['--concurrency', options.concurrency, 1],
    ['--review', options.reviewSize, 0],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= least)) {
      throw new TrainError(
        'train_options_invalid',
        `${option} must be a whole number of at least ${least}, got ${value}`,
      );
    }
  }
  const minConfidence = options.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
  if (!(minConfidence >= 0 && minConfidence <= 1)) {
    throw new TrainError(
      'train_options_invalid',
      `--min-confidence must be in [0, 1], got ${minConfidence}`,
    );
  }
  let retried = 0;
  let answered = 0;
  const retry: Retry = {
    retries: options.retries ?? 5,
    delayMs: options.retryDelayMs ?? 1000,
    onRetry: (what, attempt, waitMs, reason) => {
      retried++;
      onProgress({
        phase: 'teacher',
        done: answered,
        total: rows.length,
        message: `${what}: ${reason}; try ${attempt + 1} in ${(waitMs / 1000).toFixed(1)} s`,
      });
    },
  };
  const model = await teacherModel(options, retry);
  mkdirSync(options.dir, { recursive: true });
  const recordsPath = join(options.dir, RECORDS);
  const log = await openRecordLog(recordsPath);
  const earlier = earlierAnswers(recordsPath);
  const source: RecordSource = {
    surface: 'teacher',
    model,
    manifestSha256: null,
    calibrationSha256: null,
    url: options.url,
    device: 'remote',
    runtime: 'System One over HTTP',
  };

  const requests = rows.map((r) => teacherRequest(model, r.text, question));
  const hashes = await Promise.all(requests.map((r) => requestSha256(r)));
  const responses = new Array<SystemOneResponse | undefined>(rows.length);
  const todo: number[] = [];
  hashes.forEach((h, i) => {
    const known = earlier.get(h);
    if (known !== undefined) responses[i] = known;
    else todo.push(i);
  });
  const fromRecords = rows.length - todo.length;
  answered = fromRecords;
  const start = Date.now();
  let lastProgress = 0;
  const report = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastProgress < PROGRESS_EVERY_MS) return;
    lastProgress = now;
    const asked = answered - fromRecords;
    const per = asked > 0 ? (now - start) / asked : undefined;
    onProgress({
      phase: 'teacher',
      done: answered,
      total: rows.length,
      // Wall time per answer so far (the requests in flight overlap), times the answers left.
      ...(per === undefined ? {} : { etaMs: per * (rows.length - answered) }),
      message: `${model} at ${options.url}${fromRecords > 0 ? `, ${fromRecords} from earlier runs' records` : ''}`,
    });
  };
  report(true);

  let fatal: TrainError | null = null;
  let next = 0;
  const worker = async () => {
    while (fatal === null && !options.signal?.aborted && next < todo.length) {
      const i = todo[next++] as number;
      const row = rows[i] as PlainRow;
      try {
        const t0 = performance.now();
        const decision = await withRetries(`the teacher, on line ${row.line}`, retry, () =>
          decideRemotely(
            {
              baseURL: options.url,
              apiKey: options.apiKey,
              when: 'always',
              timeoutMs: options.timeoutMs ?? 120_000,
            },
            requests[i],
          ),
        );
        await log.append(
          buildRecord({
            source,
            request: requests[i],
            requestSha256: hashes[i] as string,
            requestSha256Only: false,
            response: decision.response,
            timings: { total_ms: Math.round((performance.now() - t0) * 10) / 10 },
            time: new Date(),
          }),
        );
        responses[i] = decision.response;
        answered++;
        report(answered === rows.length);
      } catch (e) {
        fatal ??=
          e instanceof TrainError
            ? e
            : failed(`the teacher, on line ${row.line}: ${(e as Error).message}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  } finally {
    await log.close();
  }
  if (fatal !== null) throw fatal;
  if (answered < rows.length) {
    throw new TrainError(
      'train_interrupted',
      `stopped: ${answered} of ${rows.length} texts have the teacher's answer (in ${recordsPath}); run the same command again to go on from there`,
      { answered, total: rows.length },
    );
  }

  // The answers as labels: confident ones kept, the rest counted as dropped.
  const counts = new Map(question.options.map((o) => [o, { kept: 0, dropped: 0 }]));
  const kept: PlainRow[] = [];
  const confidences: number[] = [];
  const wrong: string[] = [];
  rows.forEach((row, i) => {
    const answer = (responses[i] as SystemOneResponse).answers?.[question.id];
    const count = answer?.type === 'choice' ? counts.get(answer.choice) : undefined;
    if (answer?.type !== 'choice' || count === undefined) {
      wrong.push(`line ${row.line}: ${JSON.stringify(answer ?? null).slice(0, 120)}`);
      return;
    }
    if (answer.confidence >= minConfidence) {
      count.kept++;
      kept.push({ ...row, label: answer.choice });
      confidences.push(answer.confidence);
    } else count.dropped++;
  });
  if (wrong.length > 0) {
    throw failed(
      `the teacher's answers are not choices among question ${JSON.stringify(question.id)}'s options (${wrong.length}):\n  ${wrong.slice(0, 10).join('\n  ')}`,
    );
  }
  const reportOut: TeacherReport = {
    dir: options.dir,
    model,
    asked: answered - fromRecords,
    fromRecords,
    retried,
    kept: kept.length,
    dropped: rows.length - kept.length,
    counts: [...counts].map(([label, c]) => ({ label, ...c })),
  };
  writeTeacherFiles(options, kept, confidences, reportOut, minConfidence);
  const perLabel = reportOut.counts.map((c) => `${c.label} ${c.kept}`).join(', ');
  onProgress({
    phase: 'teacher',
    done: rows.length,
    total: rows.length,
    message: `kept ${kept.length} of ${rows.length} answers with confidence >= ${minConfidence} (${perLabel}); ${reportOut.asked} asked now, ${fromRecords} from earlier records. Check a sample by hand: ${join(options.dir, 'review.csv')}`,
  });
  return { rows: kept, report: reportOut };
}
