// Package files in Cache Storage in parts (Chromium refuses entries above ~256 MiB): a big file
// round-trips through parts byte for byte, as bytes and as a Blob; an index without all of its
// parts reads as absent; a failed put leaves nothing behind; small files stay one entry.
import { describe, expect, it } from 'vitest';
import {
  deleteFile,
  hasFile,
  matchBlob,
  matchFile,
  putFile,
  type CacheLike,
} from '../../../src/core/cache-parts.js';

/** An in-memory Cache: stores each body's bytes and headers; `failAt` makes the n-th put fail. */
function fakeCache(failAt = Infinity) {
  const store = new Map<string, { body: Uint8Array; headers: Headers }>();
  let puts = 0;
  const cache: CacheLike = {
    async match(key) {
      const hit = store.get(String(key));
      return hit ? new Response(hit.body.slice(), { headers: hit.headers }) : undefined;
    },
    async put(key, response) {
      if (++puts >= failAt) throw new DOMException('Unexpected internal error.', 'UnknownError');
      const body = new Uint8Array(await response.arrayBuffer());
      store.set(String(key), { body, headers: response.headers });
    },
    async delete(key) {
      return store.delete(String(key));
    },
  };
  return { cache, store };
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff);

describe('cache parts', () => {
  it('stores a big file in parts and reads it back whole, as bytes and as a Blob', async () => {
    const { cache, store } = fakeCache();
    const data = bytes(1000);
    await putFile(cache, 'f', data, 300);
    expect([...store.keys()].sort()).toEqual(['f', 'f&part=0', 'f&part=1', 'f&part=2', 'f&part=3']);
    expect(store.get('f&part=3')!.body.byteLength).toBe(100);
    expect(await matchFile(cache, 'f', 1000)).toEqual(data);
    const blob = await matchBlob(cache, 'f');
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(data);
    expect(await hasFile(cache, 'f')).toBe(true);
  });
  it('keeps a small file as one entry', async () => {
    const { cache, store } = fakeCache();
    await putFile(cache, 's', bytes(300), 300);
    expect([...store.keys()]).toEqual(['s']);
    expect(await matchFile(cache, 's', 300)).toEqual(bytes(300));
  });
  it('reads an index whose parts are missing, or of the wrong size, as absent', async () => {
    const { cache, store } = fakeCache();
    await putFile(cache, 'f', bytes(1000), 300);
    expect(await matchFile(cache, 'f', 999)).toBeNull();
    store.delete('f&part=2');
    expect(await matchFile(cache, 'f', 1000)).toBeNull();
    expect(await matchBlob(cache, 'f')).toBeNull();
  });
  it('a failed put removes the parts already written and rethrows', async () => {
    const { cache, store } = fakeCache(3);
    await expect(putFile(cache, 'f', bytes(1000), 300)).rejects.toThrow(/Unexpected internal/);
    expect(store.size).toBe(0);
    expect(await hasFile(cache, 'f')).toBe(false);
  });
  it('deletes a file with its parts', async () => {
    const { cache, store } = fakeCache();
    await putFile(cache, 'f', bytes(1000), 300);
    await deleteFile(cache, 'f');
    expect(store.size).toBe(0);
  });
});
