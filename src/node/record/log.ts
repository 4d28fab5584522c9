/**
 * The decision-record file of `clef-web serve --record` and `decide --record`: append-only JSONL
 * (docs/records.md).
 *
 * Durability: group commit. A record is appended whole by one write, then the file is
 * fdatasync'ed; records that arrive while a sync runs are written together by the next write
 * and share its sync. `append` resolves only once its record is on disk, and the recording
 * engine answers a request only after that, so an answered decision is a recorded one (a
 * record that cannot be written fails the request). A crash can leave at most the last line
 * torn; opening the file again cuts a torn last line off (the count is reported) and appends
 * after it. Nothing is ever rewritten or rotated: rotate by restarting with another file name.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import { calibrationAsk } from '../../calibrate/index.js';
import { calibrationSha256 } from '../../core/calibration.js';
import {
  recordDecision,
  recordLine,
  type DecisionRecord,
  type RecordSource,
} from '../../core/record.js';
import type { NodeEngine } from '../engine.js';
import { nodeDeviceOf } from '../../core/devices.js';

export interface RecordLog {
  readonly path: string;
  /** Bytes of a torn last line cut off when the file was opened (0: none). */
  readonly truncatedBytes: number;
  /** Resolves once the record's line is written and synced. */
  append(record: DecisionRecord): Promise<void>;
  /** The same for a record already made a line (`recordLine`), e.g. by an engine worker. */
  appendLine(line: string): Promise<void>;
  /** Waits for what was appended, then closes the file. */
  close(): Promise<void>;
}

const NEWLINE = 0x0a;

/** The length of the file up to and including its last newline. */
async function lastNewlineEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = 1 << 16;
  for (let end = size; end > 0; end -= chunk) {
    const start = Math.max(0, end - chunk);
    const buf = Buffer.alloc(end - start);
    await handle.read(buf, 0, buf.length, start);
    const i = buf.lastIndexOf(NEWLINE);
    if (i !== -1) return start + i + 1;
  }
  return 0;
}

/** Opens (creating it if needed) a record file for appending. */
export async function openRecordLog(path: string): Promise<RecordLog> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  let truncatedBytes = 0;
  if (size > 0) {
    const fix = await open(path, 'r+');
    try {
      const keep = await lastNewlineEnd(fix, size);
      if (keep < size) {
        await fix.truncate(keep);
        await fix.datasync();
        truncatedBytes = size - keep;
      }
    } finally {
      await fix.close();
    }
  }
  const handle = await open(path, 'a');
  let queue: Array<{ line: string; done: () => void; failed: (e: unknown) => void }> = [];
  let flushing: Promise<void> | null = null;

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await handle.appendFile(batch.map((b) => `${b.line}\n`).join(''), 'utf8');
        await handle.datasync();
        for (const b of batch) b.done();
      } catch (e) {
        for (const b of batch) b.failed(e);
      }
    }
  }

  function appendLine(line: string): Promise<void> {
    return new Promise<void>((done, failed) => {
      queue.push({ line, done, failed });
      flushing ??= flush().finally(() => {
        flushing = null;
      });
    });
  }

  return {
    path,
    truncatedBytes,
    append: (record) => appendLine(recordLine(record)),
    appendLine,
    async close() {
      while (flushing) await flushing;
      await handle.close();
    },
  };
}

export interface RecordingOptions {
  surface: 'serve' | 'decide';
  /** Keep only each request's SHA-256, not the request. */
  requestSha256Only?: boolean;
}

/** What a Node engine's records name it by. */
export function nodeRecordSource(
  engine: NodeEngine,
  surface: RecordSource['surface'],
): RecordSource {
  return {
    surface,
    model: engine.manifest.model.name,
    manifestSha256: engine.manifestSha256,
    calibrationSha256: calibrationSha256(engine.manifest),
    device: nodeDeviceOf(engine.runtime).name,
    runtime: nodeDeviceOf(engine.runtime).recordRuntime,
  };
}

/**
 * The engine, with each decision it answers appended to `log` before the answer is returned.
 * Refused requests (4xx) are not decisions and are not recorded.
 */
export function recordingEngine(
  engine: NodeEngine,
  log: Pick<RecordLog, 'append'>,
  options: RecordingOptions,
): NodeEngine {
  const source = nodeRecordSource(engine, options.surface);
  return {
    ...engine,
    async decide(body, run = {}) {
      const decision = await engine.decide(body, run);
      const ask = calibrationAsk(run.calibration);
      const record = await recordDecision(
        source,
        body,
        decision,
        ask,
        options.requestSha256Only === true,
      );
      await log.append(record);
      return decision;
    },
  };
}
