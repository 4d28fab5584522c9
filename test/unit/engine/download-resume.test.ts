// A package file's download resumes where a broken transfer stopped (HTTP Range), against a
// fake server whose streams break at chosen bytes: the bytes come out whole and in order, the
// Range asked for is the byte that was missing, and wrong answers are errors, not silent data.
import { describe, expect, it } from 'vitest';
import { downloadFile, type FetchLike } from '../../../src/engine/download.js';
import { DownloadError, IntegrityError } from '../../../src/wire/errors.js';
import { fromWireError, toWireError } from '../../../src/wire/error-wire.js';

const FILE = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7 + 3) & 0xff);

/** A body that delivers `bytes` in chunks of 1,000, then errors if `breakAt` is reached. */
function body(bytes: Uint8Array, breakAt: number | null): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (breakAt !== null && sent >= breakAt) {
        controller.error(new TypeError('network error'));
        return;
      }
      const end = Math.min(bytes.length, sent + 1000, breakAt ?? Infinity);
      if (sent >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(sent, end));
      sent = end;
    },
  });
}

interface Server {
  fetch: FetchLike;
  ranges: (string | null)[];
}

/** Each call i breaks at breaks[i] (null: completes); honours Range unless `ignoreRange`. */
function server(
  breaks: (number | null)[],
  opts: { ignoreRange?: boolean; contentRange?: string } = {},
): Server {
  const ranges: (string | null)[] = [];
  const fetch: FetchLike = async (_url, init) => {
    const range = (init.headers as Record<string, string> | undefined)?.Range ?? null;
    ranges.push(range);
    const call = ranges.length - 1;
    const from = range && !opts.ignoreRange ? Number(/bytes=(\d+)-/.exec(range)![1]) : 0;
    const part = FILE.slice(from);
    const breakAt = breaks[call] ?? null;
    const status = from > 0 ? 206 : 200;
    const headers: Record<string, string> = {};
    if (status === 206) {
      headers['content-range'] =
        opts.contentRange ?? `bytes ${from}-${FILE.length - 1}/${FILE.length}`;
    }
    return new Response(body(part, breakAt === null ? null : breakAt - from), { status, headers });
  };
  return { fetch, ranges };
}

describe('downloadFile', () => {
  it('resumes a broken transfer from the first missing byte', async () => {
    const s = server([3500, 7200, null]);
    let progress = 0;
    const { data, resumes } = await downloadFile('/f', FILE.length, {
      fetch: s.fetch,
      onChunk: (n) => (progress += n),
    });
    expect(data).toEqual(FILE);
    expect(resumes).toBe(2);
    expect(s.ranges).toEqual([null, 'bytes=3500-', 'bytes=7200-']);
    expect(progress).toBe(FILE.length);
  });

  it('starts over when the server ignores Range (200), counting progress back', async () => {
    const s = server([4000, null], { ignoreRange: true });
    let progress = 0;
    const { data } = await downloadFile('/f', FILE.length, {
      fetch: s.fetch,
      onChunk: (n) => (progress += n),
    });
    expect(data).toEqual(FILE);
    expect(progress).toBe(FILE.length);
  });

  it('refuses a 206 for another range', async () => {
    const s = server([5000, null], { contentRange: 'bytes 0-9999/10000' });
    await expect(downloadFile('/f', FILE.length, { fetch: s.fetch })).rejects.toThrow(
      /resumed at the wrong range/,
    );
  });

  it('gives up after its attempts with a DownloadError naming the byte it reached', async () => {
    const s = server([1000, 2000, 3000, 4000]);
    const error = await downloadFile('/f', FILE.length, { fetch: s.fetch, name: 'x.data' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).code).toBe('download_failed');
    expect(String(error)).toContain('at byte 4000 of 10000');
    expect(s.ranges).toHaveLength(4);
  });

  it('never retries an abort', async () => {
    const controller = new AbortController();
    let calls = 0;
    const fetch: FetchLike = async (_url, init) => {
      calls++;
      controller.abort();
      init.signal?.throwIfAborted();
      return new Response(FILE);
    };
    await expect(
      downloadFile('/f', FILE.length, { fetch, signal: controller.signal }),
    ).rejects.toThrow();
    expect(calls).toBe(1);
  });

  it('refuses a body longer or shorter than the manifest says, as an integrity error', async () => {
    // A size that differs from the manifest's is the file failing its check, as a hash that
    // differs is (docs/security.md): IntegrityError, code integrity_mismatch, naming the sizes.
    const long: FetchLike = async () => new Response(new Uint8Array(FILE.length + 1));
    const short: FetchLike = async () => new Response(new Uint8Array(FILE.length - 1));
    for (const [fetch, actual] of [
      [long, FILE.length + 1],
      [short, FILE.length - 1],
    ] as const) {
      const error = await downloadFile('/f', FILE.length, { fetch, name: 'f.bin' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(IntegrityError);
      expect(error).toMatchObject({
        code: 'integrity_mismatch',
        details: { file: 'f.bin', check: 'size', expected: FILE.length },
      });
      expect((error as Error).message).toMatch(/^f\.bin: /);
      if (actual < FILE.length) expect((error as IntegrityError).details.actual).toBe(actual);
    }
  });
});

describe('a size IntegrityError across the worker boundary', () => {
  it('comes back as the same class, code, message and details', () => {
    const sent = new IntegrityError('backbone.onnx.data', 4096, 4095, 'size');
    const back = fromWireError(toWireError(sent));
    expect(back).toBeInstanceOf(IntegrityError);
    expect(back).toMatchObject({
      name: 'IntegrityError',
      code: 'integrity_mismatch',
      message: 'backbone.onnx.data: 4095 bytes, the manifest says 4096; the file was refused',
      details: { file: 'backbone.onnx.data', expected: 4096, actual: 4095, check: 'size' },
    });
    const hash = fromWireError(
      toWireError(new IntegrityError('a', 'e'.repeat(64), 'f'.repeat(64))),
    );
    expect(hash).toMatchObject({ details: { check: 'sha256' } });
    expect(hash.message).toBe(new IntegrityError('a', 'e'.repeat(64), 'f'.repeat(64)).message);
  });
});
