/**
 * The JSONL files of `clef-web decide`: reading requests line by line, and an output file that a
 * crash can never leave with a half line counted as done.
 *
 * Each output line is written whole by one append and made durable (fdatasync) before the next
 * request starts, so after an interruption the file is a run of complete lines, at worst followed
 * by one partial line; `openOutput(..., resume)` cuts that partial line off and reports how many
 * lines are done, which is how many input lines to skip.
 */
import { createReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';

const NEWLINE = 0x0a;

/** Lines of a file: split on "\n" only (a "\r" before it is dropped), decoded as UTF-8. */
export async function* readLines(path: string): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, start)) {
      pending.push(chunk.subarray(start, i));
      yield decoder.decode(Buffer.concat(pending)).replace(/\r$/, '');
      pending = [];
      start = i + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  // A last line without its newline still counts.
  if (pending.length > 0) yield decoder.decode(Buffer.concat(pending)).replace(/\r$/, '');
}

/** How many lines `readLines` yields for this file. */
export async function countLines(path: string): Promise<number> {
  let lines = 0;
  let last = NEWLINE;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === NEWLINE ? lines : lines + 1;
}

export class OutputExistsError extends Error {
  constructor(path: string) {
    super(`${path} already has lines: pass --resume to continue it, or remove it`);
    this.name = 'OutputExistsError';
  }
}

export interface OpenOutput {
  /** Complete lines already in the file (0 for a new file). */
  done: number;
  /** Bytes of a partial last line that were cut off (0 when there was none). */
  truncatedBytes: number;
  append(line: string): Promise<void>;
  close(): Promise<void>;
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const data = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await handle.read(data, read, length - read, position + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return data.subarray(0, read);
}

const CHUNK_BYTES = 1 << 20;

/**
 * Complete lines and the bytes they take, read in chunks (an output can be large); a last line
 * that is not JSON is not counted.
 */
async function completeLines(handle: FileHandle, size: number): Promise<[number, number]> {
  let lines = 0;
  let end = 0; // just past the last newline
  let previousEnd = 0; // just past the newline before it
  for (let position = 0; position < size; position += CHUNK_BYTES) {
    const chunk = await readAt(handle, position, Math.min(CHUNK_BYTES, size - position));
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) {
      lines++;
      previousEnd = end;
      end = position + i + 1;
    }
  }
  if (lines === 0) return [0, 0];
  // A torn write (power loss) could leave garbage ending in a newline: check the last line.
  const last = await readAt(handle, previousEnd, end - 1 - previousEnd);
  try {
    JSON.parse(last.toString('utf8'));
    return [lines, end];
  } catch {
    return [lines - 1, previousEnd];
  }
}

/**
 * Opens the output for appending. Without `resume` the file must be new or empty. With it, a
 * partial last line is truncated and the complete lines are counted.
 */
export async function openOutput(path: string, resume: boolean): Promise<OpenOutput> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (size > 0 && !resume) throw new OutputExistsError(path);
  const handle = await open(path, size > 0 ? 'r+' : 'w');
  let done = 0;
  let keep = 0;
  try {
    if (size > 0) [done, keep] = await completeLines(handle, size);
    if (keep < size) {
      await handle.truncate(keep);
      await handle.datasync();
    }
  } catch (e) {
    await handle.close();
    throw e;
  }
  let position = keep;
  return {
    done,
    truncatedBytes: size - keep,
    async append(line) {
      const bytes = Buffer.from(`${line}\n`, 'utf8');
      let written = 0;
      while (written < bytes.length) {
        const r = await handle.write(bytes, written, bytes.length - written, position + written);
        written += r.bytesWritten;
      }
      position += bytes.length;
      await handle.datasync();
    },
    close: () => handle.close(),
  };
}
