/**
 * One package file over HTTP into a buffer of the manifest's size, resuming where a broken
 * transfer stopped (HTTP Range) instead of starting a 1.5 GiB file over. A server that ignores
 * Range (200 instead of 206) is read again from the start; one that sends more or fewer bytes
 * than the manifest says is an error. An abort is never retried.
 */
import { DownloadError, IntegrityError } from '../wire/errors.js';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Called with each chunk's size (negative when a restart from 0 discards bytes). */
  onChunk?: (bytes: number) => void;
  /** Tries in all, the first included (default 4). */
  attempts?: number;
  fetch?: FetchLike;
  /** The name errors use (the manifest's path); default the URL. */
  name?: string;
}

/** What a 206 must say: `bytes <from>-<expected - 1>/<expected or *>`. */
function rangeMatches(header: string | null, from: number, expected: number): boolean {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header?.trim() ?? '');
  if (!m) return false;
  return (
    Number(m[1]) === from &&
    Number(m[2]) === expected - 1 &&
    (m[3] === '*' || Number(m[3]) === expected)
  );
}

export async function downloadFile(
  url: string,
  expected: number,
  options: DownloadOptions = {},
): Promise<{ data: Uint8Array; resumes: number }> {
  const { signal, onChunk } = options;
  const fetchImpl: FetchLike = options.fetch ?? ((u, init) => fetch(u, init));
  const attempts = options.attempts ?? 4;
  const name = options.name ?? url;
  const out = new Uint8Array(expected);
  // Advanced chunk by chunk, so a transfer that breaks keeps what it delivered.
  const at = { offset: 0 };
  let resumes = 0;
  let lastError: unknown = null;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) resumes++;
    const headers: Record<string, string> = at.offset > 0 ? { Range: `bytes=${at.offset}-` } : {};
    let response: Response;
    try {
      response = await fetchImpl(url, { signal, headers });
    } catch (e) {
      if (signal?.aborted) throw e;
      lastError = e;
      continue;
    }
    if (at.offset > 0 && response.status === 206) {
      if (!rangeMatches(response.headers.get('content-range'), at.offset, expected)) {
        throw new DownloadError(`${name}: the server resumed at the wrong range`);
      }
    } else if (response.ok) {
      // A full body (first try, or a server that ignores Range): start over at 0.
      onChunk?.(-at.offset);
      at.offset = 0;
    } else {
      throw new DownloadError(`Could not fetch ${name}: HTTP ${response.status}`, { file: name });
    }
    try {
      await readInto(response, name, out, at, onChunk);
    } catch (e) {
      if (signal?.aborted || e instanceof DownloadError || e instanceof IntegrityError) throw e;
      lastError = e; // a broken transfer: resume from `offset`
      continue;
    }
    if (at.offset !== expected) {
      // The whole body arrived, and it is not the manifest's size: the file fails its check.
      throw new IntegrityError(name, expected, at.offset, 'size');
    }
    return { data: out, resumes };
  }
  throw new DownloadError(
    `Could not fetch ${name}: the transfer broke ${attempts} times (at byte ${at.offset} of ${expected}): ${String(
      (lastError as Error | null)?.message ?? lastError,
    )}`,
    { file: name },
  );
}

/** Reads the body into `out` from `at.offset`, advancing it; throws when the transfer breaks. */
async function readInto(
  response: Response,
  name: string,
  out: Uint8Array,
  at: { offset: number },
  onChunk?: (bytes: number) => void,
): Promise<void> {
  const put = (chunk: Uint8Array) => {
    if (at.offset + chunk.byteLength > out.byteLength) {
      throw new IntegrityError(name, out.byteLength, `more than ${out.byteLength}`, 'size');
    }
    out.set(chunk, at.offset);
    at.offset += chunk.byteLength;
    onChunk?.(chunk.byteLength);
  };
  const body = response.body;
  if (!body) {
    put(new Uint8Array(await response.arrayBuffer()));
    return;
  }
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    try {
      put(value);
    } catch (e) {
      await reader.cancel();
      throw e;
    }
  }
}
